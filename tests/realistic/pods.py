"""The pod skeleton every workload's pod shares (`pod`): the spec the API server defaults and
the ServiceAccount admission plugin completes, the metadata and the status of its phase."""

from __future__ import annotations

import copy
from typing import Any

from .metadata import DELETING, managed_entry, name_suffix, object_metadata
from .pod_status import pod_status


def _service_account_volume(key: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The projected token volume and its mount, as the ServiceAccount admission plugin adds."""
    name = "kube-api-access-" + name_suffix(5, "token", key)
    volume = {
        "name": name,
        "projected": {
            "defaultMode": 420,
            "sources": [
                {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                {
                    "configMap": {
                        "items": [{"key": "ca.crt", "path": "ca.crt"}],
                        "name": "kube-root-ca.crt",
                    }
                },
                {
                    "downwardAPI": {
                        "items": [
                            {
                                "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"},
                                "path": "namespace",
                            }
                        ]
                    }
                },
            ],
        },
    }
    mount = {
        "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
        "name": name,
        "readOnly": True,
    }
    return volume, mount


def toleration(key: str, effect: str = "NoExecute", seconds: int | None = 300) -> dict[str, Any]:
    toleration: dict[str, Any] = {"effect": effect, "key": key, "operator": "Exists"}
    if seconds is not None:
        toleration["tolerationSeconds"] = seconds
    return toleration


DEFAULT_TOLERATIONS = [
    toleration("node.kubernetes.io/not-ready"),
    toleration("node.kubernetes.io/unreachable"),
]


def pod(
    namespace: str,
    name: str | None,
    *,
    generate_name: str | None = None,
    owner: dict[str, Any] | None = None,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    requests: dict[str, Any] | None = None,
    limits: dict[str, Any] | None = None,
    pod_requests: dict[str, Any] | None = None,
    overhead: dict[str, Any] | None = None,
    node: str | None = "worker-1",
    phase: str | None = None,
    priority: int = 0,
    priority_class: str | None = None,
    gates: list[str] | None = None,
    evicted: bool = False,
    terminating: bool = False,
    container: str = "app",
    image: str = "registry.example.com/app:1.4.2",
    ports: list[dict[str, Any]] | None = None,
    service_account: str | None = "default",
    restart_policy: str = "Always",
    security_context: dict[str, Any] | None = None,
    manager: str = "kube-controller-manager",
    **spec_fields: Any,
) -> dict[str, Any]:
    """The one pod skeleton every builder of workloads.py shares.

    `name` None: the object a controller sends to admission (generateName, no name, no uid);
    `phase` is Kubernetes' (Pending, Running, Succeeded, Failed); a Pending pod without `node`
    waits for the scheduler, behind `gates` if given; `evicted` marks a Failed pod as kubelet's
    eviction leaves it; `terminating` sets deletionTimestamp. `pod_requests`: pod-level
    `spec.resources.requests`; `overhead`: `spec.overhead` of a RuntimeClass; `spec_fields`:
    any other spec field (affinity, hostname, ...)."""
    key = f"{namespace}/{name or generate_name}"
    phase = phase or ("Running" if node and not gates else "Pending")
    resources: dict[str, Any] = {}
    if limits:
        resources["limits"] = limits
    if requests or limits:
        resources["requests"] = requests if requests is not None else limits
    main: dict[str, Any] = {
        "image": image,
        "imagePullPolicy": "IfNotPresent",
        "name": container,
    }
    if ports:
        main["ports"] = [{"protocol": "TCP", **port} for port in ports]
    main.update(
        resources=resources,
        terminationMessagePath="/dev/termination-log",
        terminationMessagePolicy="File",
    )
    spec: dict[str, Any] = {
        "containers": [main],
        "dnsPolicy": "ClusterFirst",
        "enableServiceLinks": True,
        "preemptionPolicy": "PreemptLowerPriority",
        "priority": priority,
        "restartPolicy": restart_policy,
        "schedulerName": "default-scheduler",
        "securityContext": security_context or {},
        "terminationGracePeriodSeconds": 30,
        "tolerations": DEFAULT_TOLERATIONS,
        **spec_fields,
    }
    written = copy.deepcopy(spec)  # what the controller sent, before admission and the scheduler
    if service_account:
        volume, mount = _service_account_volume(key)
        main["volumeMounts"] = [mount]
        spec.update(serviceAccount=service_account, serviceAccountName=service_account)
        spec["volumes"] = [volume, *spec.get("volumes", [])]
    if priority_class:
        spec["priorityClassName"] = priority_class
    if pod_requests:
        spec["resources"] = {"requests": pod_requests}
    if overhead:
        spec["overhead"] = overhead
    if gates:
        spec["schedulingGates"] = [{"name": gate} for gate in gates]
    if node and not gates and name is not None:  # a pod being created is not bound yet
        spec["nodeName"] = node
    fields: dict[str, Any] = {"labels": labels or {}}
    if annotations:
        fields["annotations"] = annotations
    if generate_name:
        fields["generateName"] = generate_name
    if owner:
        fields["ownerReferences"] = [owner]
    if restart_policy == "Never" and phase not in ("Succeeded", "Failed"):
        fields["finalizers"] = ["batch.kubernetes.io/job-tracking"]
    obj: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod"}
    if name is None:  # as mutating admission sees it: not named, stored or given a status yet
        obj["metadata"] = {**fields, "namespace": namespace}
        obj["spec"] = dict(sorted(spec.items()))
        return obj
    status = pod_status(spec, key, phase, evicted=evicted)
    managed = [managed_entry(manager, "Update", "v1", {"metadata": fields, "spec": written})]
    if "nodeName" in spec:
        managed.append(managed_entry("kubelet", "Update", "v1", {"status": status}, status=True))
    if terminating:
        fields.update(deletionGracePeriodSeconds=30, deletionTimestamp=DELETING)
    obj["metadata"] = object_metadata("Pod", namespace, name, managedFields=managed, **fields)
    obj["spec"] = dict(sorted(spec.items()))
    obj["status"] = status
    return obj


def named_by_server(sent: dict[str, Any]) -> dict[str, Any]:
    """A pod a controller sent without a name (`deployment_pod(created=False)`) as the API server
    hands it to validating webhooks: named from generateName, with uid and creationTimestamp."""
    named = copy.deepcopy(sent)
    metadata = named["metadata"]
    namespace = metadata.pop("namespace")
    generated = metadata["generateName"] + name_suffix(5, "generated", metadata["generateName"])
    named["metadata"] = object_metadata("Pod", namespace, generated, **metadata)
    del named["metadata"]["resourceVersion"]  # given when it is stored, after admission
    return named
