"""Objects shaped like `kubectl get -o json` output on Kubernetes 1.30-1.32.

`tests/manifests.py` builds the few fields a rule reads; this module builds what a cluster
really holds: full metadata (uid, resourceVersion, managedFields, ownerReferences, the labels
each controller sets), the fields the API server defaults and the admission plugins inject,
and a status per phase. Feeding such objects to the product catches what minimal dicts hide.

Every value that a cluster would make up (uids, hashes, IPs, container ids) is derived from the
object's identity, so the objects are the same on every run.

    kubectl_list(
        koordinator_default_quota(),
        deployment_pod("shop", "web", requests={"cpu": "500m"}),
        job_pod("etl", "load", phase="Succeeded"),
        node("worker-1", cpu="8"),
    )
"""

from __future__ import annotations

import copy
import hashlib
import json
import uuid
from pathlib import Path
from typing import Any

import yaml

P = "quota.scheduling.koordinator.sh/"
NO_LIMIT = str((2**63 - 1) // 5)
"""MaxInt64/5: Koordinator's max of its system and default groups (cpu in cores, memory in
bytes), "1844674407370955161"."""
KUBERNETES = "v1.31.4"
CREATED = "2025-06-02T08:15:00Z"
STARTED = "2025-06-02T08:15:03Z"
FINISHED = "2025-06-02T08:21:40Z"
DELETING = "2025-06-02T09:00:30Z"
CHART = Path(__file__).resolve().parents[1] / "manifests" / "elastic-quota"
EVICTION = (
    "The node was low on resource: memory. Threshold quantity: 100Mi, available: 94208Ki. "
    "Container {container} was using 1873920Ki, request is {request}, has larger consumption "
    "of memory. "
)
_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # what the API server's generateName draws from


def _digest(*parts: object) -> bytes:
    return hashlib.sha256("/".join(map(str, parts)).encode()).digest()


def _uid(*parts: object) -> str:
    return str(uuid.UUID(bytes=_digest("uid", *parts)[:16], version=4))


def _version(*parts: object) -> str:
    return str(100000 + int.from_bytes(_digest("rv", *parts)[:3], "big"))


def _random(length: int, *parts: object) -> str:
    """Like the suffixes of generated names and pod-template-hash values."""
    return "".join(_ALPHABET[b % len(_ALPHABET)] for b in _digest(*parts)[:length])


def _ip(prefix: str, *parts: object) -> str:
    digest = _digest("ip", *parts)
    return f"{prefix}.{digest[0] % 250 + 2}.{digest[1] % 250 + 2}"


# managedFields


def _key(item: dict[str, Any]) -> str:
    """How server-side apply keys an item of an associative list."""
    if "containerPort" in item:
        fields = {"containerPort": item["containerPort"], "protocol": item.get("protocol", "TCP")}
    else:
        name = next(k for k in ("uid", "type", "name", "mountPath") if k in item)
        fields = {name: item[name]}
    return "k:" + json.dumps(fields, separators=(",", ":"))


def _keyed(items: list[Any]) -> bool:
    keys = ("uid", "type", "name", "mountPath", "containerPort")
    return all(isinstance(i, dict) and any(k in i for k in keys) for i in items)


def _fields(value: Any, depth: int = 0) -> dict[str, Any]:
    """The FieldsV1 set of what a manager wrote (`value`): maps by `f:` (from the third level
    on, with `.` for the map itself), keyed lists by `k:`, other lists (tolerations, finalizers)
    as a whole, as the API server records them."""
    if isinstance(value, dict) and value:
        nested = {f"f:{k}": _fields(v, depth + 1) for k, v in value.items()}
        return nested if depth < 2 else {".": {}, **nested}
    if isinstance(value, list) and value and _keyed(value):
        return {_key(item): _fields(item, depth + 1) for item in value}
    return {}


def _managed(
    manager: str, operation: str, api_version: str, wrote: dict[str, Any], *, status: bool = False
) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "apiVersion": api_version,
        "fieldsType": "FieldsV1",
        "fieldsV1": _fields(wrote),
        "manager": manager,
        "operation": operation,
    }
    if status:
        entry["subresource"] = "status"
    entry["time"] = STARTED if status else CREATED
    return entry


def _owner(api_version: str, kind: str, name: str, *, node: bool = False) -> dict[str, Any]:
    owner: dict[str, Any] = {"apiVersion": api_version, "kind": kind, "name": name}
    if not node:
        owner["blockOwnerDeletion"] = True
    owner["controller"] = True
    owner["uid"] = _uid(kind, name)
    return owner


def _metadata(kind: str, namespace: str | None, name: str, **fields: Any) -> dict[str, Any]:
    """Metadata as the API server stores it: what the writer sent (`fields`) plus the server's."""
    metadata: dict[str, Any] = {"creationTimestamp": CREATED, **fields, "name": name}
    if namespace is not None:
        metadata["namespace"] = namespace
    metadata["resourceVersion"] = _version(kind, namespace, name)
    metadata["uid"] = _uid(kind, namespace, name)
    return dict(sorted(metadata.items()))


# Pods


def _qos(resources: dict[str, Any]) -> str:
    requests, limits = resources.get("requests", {}), resources.get("limits", {})
    if not requests and not limits:
        return "BestEffort"
    guaranteed = all(
        limits.get(r) and requests.get(r, limits[r]) == limits[r] for r in ("cpu", "memory")
    )
    return "Guaranteed" if guaranteed else "Burstable"


def _condition(
    kind: str, status: bool, time: str, reason: str | None = None, message: str | None = None
) -> dict[str, Any]:
    condition: dict[str, Any] = {"lastProbeTime": None, "lastTransitionTime": time}
    if message:
        condition["message"] = message
    if reason:
        condition["reason"] = reason
    condition["status"] = "True" if status else "False"
    condition["type"] = kind
    return condition


def _container_status(container: dict[str, Any], key: str, state: dict[str, Any]) -> dict[str, Any]:
    running = "running" in state
    status: dict[str, Any] = {
        "containerID": "containerd://" + _digest("container", key).hex(),
        "image": container["image"],
        "imageID": container["image"].split(":")[0]
        + "@sha256:"
        + _digest(container["image"]).hex(),
        "lastState": {},
        "name": container["name"],
        "ready": running,
        "restartCount": 0,
        "started": running,
        "state": state,
    }
    status["volumeMounts"] = [
        {**mount, "recursiveReadOnly": "Disabled"} for mount in container.get("volumeMounts", [])
    ]
    return status


def _pod_status(spec: dict[str, Any], key: str, phase: str, *, evicted: bool) -> dict[str, Any]:
    """The status kubelet (or the scheduler, for a pod not bound yet) reports in `phase`."""
    qos = _qos(spec["containers"][0].get("resources", {}))
    if phase == "Pending" and "nodeName" not in spec:
        gated = bool(spec.get("schedulingGates"))
        message = (
            "Scheduling is blocked due to non-empty scheduling gates"
            if gated
            else "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are "
            "available: 3 No preemption victims found for incoming pod."
        )
        reason = "SchedulingGated" if gated else "Unschedulable"
        condition = _condition("PodScheduled", False, CREATED, reason, message)
        return {"conditions": [condition], "phase": "Pending", "qosClass": qos}
    finished = phase in ("Succeeded", "Failed")
    if phase == "Pending":  # bound, the image is being pulled
        state: dict[str, Any] = {"waiting": {"reason": "ContainerCreating"}}
    elif finished:
        code, why = (0, "Completed") if phase == "Succeeded" else (137 if evicted else 1, "Error")
        state = {
            "terminated": {
                "containerID": "containerd://" + _digest("container", key).hex(),
                "exitCode": code,
                "finishedAt": FINISHED,
                "reason": why,
                "startedAt": STARTED,
            }
        }
    else:
        state = {"running": {"startedAt": STARTED}}
    ready, end = phase == "Running", FINISHED if finished else STARTED
    not_ready = "PodCompleted" if finished else ("ContainersNotReady" if not ready else None)
    message = (
        None
        if ready or finished
        else f"containers with unready status: [{spec['containers'][0]['name']}]"
    )
    conditions = [
        _condition("PodReadyToStartContainers", not finished and phase != "Pending", end),
        _condition("Initialized", True, CREATED, "PodCompleted" if finished else None),
        _condition("Ready", ready, end, not_ready, message),
        _condition("ContainersReady", ready, end, not_ready, message),
        _condition("PodScheduled", True, CREATED),
    ]
    host = _ip("10.0", spec["nodeName"])
    pod_ip = _ip("10.244", key)
    status: dict[str, Any] = {"conditions": conditions}
    if phase != "Pending":
        status["containerStatuses"] = [_container_status(spec["containers"][0], key, state)]
    status.update(hostIP=host, hostIPs=[{"ip": host}])
    if evicted:
        request = spec["containers"][0].get("resources", {}).get("requests", {}).get("memory", "0")
        message = EVICTION.format(container=spec["containers"][0]["name"], request=request)
        conditions.insert(
            0, _condition("DisruptionTarget", True, FINISHED, "TerminationByKubelet", message)
        )
        status.update(message=message, reason="Evicted")
    status["phase"] = phase
    if phase == "Running" or (finished and not evicted):
        status.update(podIP=pod_ip, podIPs=[{"ip": pod_ip}])
    status.update(qosClass=qos, startTime=STARTED)
    return status


def _service_account_volume(key: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The projected token volume and its mount, as the ServiceAccount admission plugin adds."""
    name = "kube-api-access-" + _random(5, "token", key)
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


def _toleration(key: str, effect: str = "NoExecute", seconds: int | None = 300) -> dict[str, Any]:
    toleration: dict[str, Any] = {"effect": effect, "key": key, "operator": "Exists"}
    if seconds is not None:
        toleration["tolerationSeconds"] = seconds
    return toleration


DEFAULT_TOLERATIONS = [
    _toleration("node.kubernetes.io/not-ready"),
    _toleration("node.kubernetes.io/unreachable"),
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
    """The one pod skeleton every builder below shares.

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
    status = _pod_status(spec, key, phase, evicted=evicted)
    managed = [_managed(manager, "Update", "v1", {"metadata": fields, "spec": written})]
    if "nodeName" in spec:
        managed.append(_managed("kubelet", "Update", "v1", {"status": status}, status=True))
    if terminating:
        fields.update(deletionGracePeriodSeconds=30, deletionTimestamp=DELETING)
    obj["metadata"] = _metadata("Pod", namespace, name, managedFields=managed, **fields)
    obj["spec"] = dict(sorted(spec.items()))
    obj["status"] = status
    return obj


def named_by_server(sent: dict[str, Any]) -> dict[str, Any]:
    """A pod a controller sent without a name (`deployment_pod(created=False)`) as the API server
    hands it to validating webhooks: named from generateName, with uid and creationTimestamp."""
    named = copy.deepcopy(sent)
    metadata = named["metadata"]
    namespace = metadata.pop("namespace")
    generated = metadata["generateName"] + _random(5, "generated", metadata["generateName"])
    named["metadata"] = _metadata("Pod", namespace, generated, **metadata)
    del named["metadata"]["resourceVersion"]  # given when it is stored, after admission
    return named


def _controlled(
    kind: str, owner: str, namespace: str, name: str | None, own: dict[str, str], **options: Any
) -> dict[str, Any]:
    """A pod the controller of `kind` `owner` made: generateName, ownerReference, the user's
    `labels` (default `app: <owner>`) and the controller's own labels `own`."""
    labels = options.pop("labels", None)
    api_version = "batch/v1" if kind == "Job" else "apps/v1"
    return pod(
        namespace,
        name,
        generate_name=options.pop("generate_name", f"{owner}-"),
        owner=_owner(api_version, kind, owner),
        labels={**(labels if labels is not None else {"app": owner}), **own},
        **options,
    )


def deployment_pod(
    namespace: str, deployment: str, replica: int = 0, *, created: bool = True, **options: Any
) -> dict[str, Any]:
    """A pod of Deployment `deployment` (through its ReplicaSet): `<deployment>-<hash>-<suffix>`,
    the suffix made up from `replica` unless given as `suffix`. `created` False: the pod as the
    ReplicaSet controller sends it to admission (no name)."""
    template_hash = _random(10, "pod-template-hash", namespace, deployment)
    replica_set = f"{deployment}-{template_hash}"
    suffix = options.pop("suffix", None) or _random(5, namespace, deployment, replica)
    options.setdefault("labels", {"app": deployment})
    name = f"{replica_set}-{suffix}" if created else None
    own = {"pod-template-hash": template_hash}
    return _controlled("ReplicaSet", replica_set, namespace, name, own, **options)


def job_pod(namespace: str, job: str, attempt: int = 0, **options: Any) -> dict[str, Any]:
    """A pod of Job `job` (its `attempt`-th): `<job>-<suffix>`, restartPolicy Never, the Job's
    labels (both spellings, as 1.27+ sets them) and, while it runs, the job-tracking finalizer."""
    uid = _uid("Job", job)
    own = {
        "batch.kubernetes.io/controller-uid": uid,
        "batch.kubernetes.io/job-name": job,
        "controller-uid": uid,
        "job-name": job,
    }
    name = f"{job}-{options.pop('suffix', None) or _random(5, namespace, job, attempt)}"
    options.setdefault("labels", {})
    return _controlled("Job", job, namespace, name, own, restart_policy="Never", **options)


def cronjob_pod(
    namespace: str, cronjob: str, *, scheduled: int = 29147340, **options: Any
) -> dict[str, Any]:
    """A pod of the Job that CronJob `cronjob` made for its run at `scheduled` (minutes since
    the epoch, as the CronJob controller names its Jobs): `<cronjob>-<scheduled>-<suffix>`."""
    return job_pod(namespace, f"{cronjob}-{scheduled}", **options)


def statefulset_pod(
    namespace: str, statefulset: str, ordinal: int = 0, **options: Any
) -> dict[str, Any]:
    """Pod `<statefulset>-<ordinal>`: the StatefulSet controller names it itself; its hostname
    and subdomain (`service`, default the set's name) are set."""
    name = f"{statefulset}-{ordinal}"
    own = {
        "apps.kubernetes.io/pod-index": str(ordinal),
        "controller-revision-hash": f"{statefulset}-{_random(10, namespace, statefulset)}",
        "statefulset.kubernetes.io/pod-name": name,
    }
    subdomain = options.pop("service", None) or statefulset
    return _controlled(
        "StatefulSet",
        statefulset,
        namespace,
        name,
        own,
        hostname=name,
        subdomain=subdomain,
        **options,
    )


def daemonset_pod(
    namespace: str, daemonset: str, *, node: str = "worker-1", **options: Any
) -> dict[str, Any]:
    """A DaemonSet's pod on `node`: pinned by node affinity on `metadata.name`, with the
    tolerations the DaemonSet controller adds."""
    term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}
        }
    }
    tolerations = [
        _toleration("node.kubernetes.io/not-ready", seconds=None),
        _toleration("node.kubernetes.io/unreachable", seconds=None),
        *(
            _toleration(f"node.kubernetes.io/{taint}", "NoSchedule", None)
            for taint in ("disk-pressure", "memory-pressure", "pid-pressure", "unschedulable")
        ),
    ]
    own = {
        "controller-revision-hash": _random(10, namespace, daemonset),
        "pod-template-generation": "1",
    }
    name = f"{daemonset}-{_random(5, namespace, daemonset, node)}"
    return _controlled(
        "DaemonSet",
        daemonset,
        namespace,
        name,
        own,
        node=node,
        affinity=affinity,
        tolerations=tolerations,
        **options,
    )


def static_mirror_pod(
    component: str = "kube-apiserver",
    *,
    node: str = "control-plane-1",
    namespace: str = "kube-system",
    requests: dict[str, Any] | None = None,
    **options: Any,
) -> dict[str, Any]:
    """The API server's mirror of a static pod kubelet runs from a file: `<component>-<node>`,
    owned by the Node, system-node-critical, host network."""
    config_hash = _digest("config", component, node).hex()[:32]
    annotations = {
        "kubernetes.io/config.hash": config_hash,
        "kubernetes.io/config.mirror": config_hash,
        "kubernetes.io/config.seen": CREATED.replace("Z", ".000000000Z"),
        "kubernetes.io/config.source": "file",
    }
    return pod(
        namespace,
        f"{component}-{node}",
        owner=_owner("v1", "Node", node, node=True),
        labels={"component": component, "tier": "control-plane"},
        annotations=annotations,
        requests=requests or {"cpu": "250m"},
        node=node,
        priority=2000001000,
        priority_class="system-node-critical",
        container=component,
        image=f"registry.k8s.io/{component}:{KUBERNETES}",
        service_account=None,
        manager="kubelet",
        hostNetwork=True,
        tolerations=[{"effect": "NoExecute", "operator": "Exists"}],
        **options,
    )


def product_pods(
    namespace: str = "koordinator-system", release: str = "elastic-quota", **options: Any
) -> list[dict[str, Any]]:
    """The chart's operator and webhook pods (each Deployment's replicas), Running, with the
    labels, service accounts, ports and resources of manifests/elastic-quota."""
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text())
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    ports = {
        "operator": [{"containerPort": values["operator"]["probePort"], "name": "probes"}],
        "webhook": [
            {"containerPort": values["webhook"]["port"], "name": "https"},
            {"containerPort": values["webhook"]["probePort"], "name": "probes"},
        ],
    }
    pods = []
    for component in ("operator", "webhook"):
        settings = values[component]
        labels = {
            "app.kubernetes.io/component": component,
            "app.kubernetes.io/instance": release,
            "app.kubernetes.io/managed-by": "Helm",
            "app.kubernetes.io/name": "elastic-quota",
            "app.kubernetes.io/version": str(chart["appVersion"]),
            "helm.sh/chart": f"{chart['name']}-{chart['version']}",
        }
        for replica in range(settings["replicas"]):
            resources = settings["resources"]
            pods.append(
                deployment_pod(
                    namespace,
                    f"{release}-{component}",
                    replica,
                    labels=labels,
                    requests=resources.get("requests"),
                    limits=resources.get("limits"),
                    container=component,
                    image=f"{values['image']['repository']}:{chart['appVersion']}",
                    ports=ports[component],
                    service_account=f"{release}-{component}",
                    security_context={
                        "runAsGroup": 65532,
                        "runAsNonRoot": True,
                        "runAsUser": 65532,
                        "seccompProfile": {"type": "RuntimeDefault"},
                    },
                    node=f"worker-{replica + 1}",
                    **options,
                )
            )
    return pods


# ElasticQuotas


def elastic_quota(
    name: str,
    namespace: str,
    *,
    parent: str | None = None,
    is_parent: bool = False,
    min: dict[str, Any] | None = None,
    max: dict[str, Any] | None = None,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    status: dict[str, Any] | None = None,
    manager: str = "kubectl-client-side-apply",
) -> dict[str, Any]:
    """An ElasticQuota as the API server stores it after `kubectl apply` (by default: with
    kubectl's last-applied-configuration) or after another client created it (`manager`).
    `status` absent: no controller has written it yet."""
    all_labels = dict(labels or {})
    if parent is not None:
        all_labels[P + "parent"] = parent
    if is_parent:
        all_labels[P + "is-parent"] = "true"
    spec = {key: value for key, value in (("max", max), ("min", min)) if value is not None}
    written: dict[str, Any] = {"metadata": {}, "spec": spec}
    meta: dict[str, Any] = {}
    if annotations:
        meta["annotations"] = dict(annotations)
    if all_labels:
        meta["labels"] = all_labels
    written["metadata"] = dict(meta)
    if manager == "kubectl-client-side-apply":
        applied = {
            "apiVersion": "scheduling.sigs.k8s.io/v1alpha1",
            "kind": "ElasticQuota",
            "metadata": {**meta, "name": name, "namespace": namespace},
            "spec": spec,
        }
        last = json.dumps(applied, separators=(",", ":"), sort_keys=True) + "\n"
        meta["annotations"] = {
            **meta.get("annotations", {}),
            "kubectl.kubernetes.io/last-applied-configuration": last,
        }
        written["metadata"] = dict(meta)
    api_version = "scheduling.sigs.k8s.io/v1alpha1"
    managed = [_managed(manager, "Update", api_version, written)]
    if status is not None:
        managed.append(
            _managed("elastic-quota", "Update", api_version, {"status": status}, status=True)
        )
    obj: dict[str, Any] = {
        "apiVersion": api_version,
        "kind": "ElasticQuota",
        "metadata": _metadata(
            "ElasticQuota", namespace, name, generation=1, managedFields=managed, **meta
        ),
        "spec": spec,
    }
    if status is not None:
        obj["status"] = status
    return obj


def _koordinator_builtin(name: str, labels: dict[str, str], **fields: Any) -> dict[str, Any]:
    """A built-in group as koord-scheduler's ElasticQuota plugin creates it at start-up, after
    Koordinator's mutating webhook filled in the parent label and the shared weight."""
    return elastic_quota(
        name, "koordinator-system", labels=labels, manager="koord-scheduler", **fields
    )


def _unbounded_leaf(name: str) -> dict[str, Any]:
    no_limit = {"cpu": NO_LIMIT, "memory": NO_LIMIT}
    return _koordinator_builtin(
        name,
        {P + "is-parent": "false", P + "parent": "koordinator-root-quota"},
        max=no_limit,
        annotations={P + "shared-weight": json.dumps(no_limit, separators=(",", ":"))},
    )


def koordinator_default_quota() -> dict[str, Any]:
    """`koordinator-default-quota`: max MaxInt64/5 cpu (cores) and memory (bytes), no min."""
    return _unbounded_leaf("koordinator-default-quota")


def koordinator_system_quota() -> dict[str, Any]:
    """`koordinator-system-quota`: the same shape as the default group."""
    return _unbounded_leaf("koordinator-system-quota")


def koordinator_root_quota() -> dict[str, Any]:
    """`koordinator-root-quota`: a parent that does not lend, an empty parent label, no spec."""
    labels = {P + "allow-lent-resource": "false", P + "is-parent": "true", P + "parent": ""}
    return _koordinator_builtin("koordinator-root-quota", labels)


def koordinator_builtins() -> list[dict[str, Any]]:
    return [koordinator_root_quota(), koordinator_system_quota(), koordinator_default_quota()]


# Nodes, namespaces, lists


def node(
    name: str,
    *,
    cpu: str = "8",
    memory_gi: int = 32,
    pods: str = "110",
    labels: dict[str, str] | None = None,
    control_plane: bool = False,
    extra: dict[str, str] | None = None,
) -> dict[str, Any]:
    """A Ready kubeadm node: allocatable is capacity less kubelet's 100Mi eviction threshold.
    `extra`: more resources (e.g. {"nvidia.com/gpu": "4"}) in capacity and allocatable."""
    memory = memory_gi * 1024 * 1024
    capacity = {
        "cpu": cpu,
        "ephemeral-storage": "101430960Ki",
        "hugepages-1Gi": "0",
        "hugepages-2Mi": "0",
        "memory": f"{memory}Ki",
        "pods": pods,
        **(extra or {}),
    }
    allocatable = {**capacity, "ephemeral-storage": "93478772582", "memory": f"{memory - 102400}Ki"}
    all_labels = {
        "beta.kubernetes.io/arch": "amd64",
        "beta.kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        **({"node-role.kubernetes.io/control-plane": ""} if control_plane else {}),
        **(labels or {}),
    }
    annotations = {
        "kubeadm.alpha.kubernetes.io/cri-socket": "unix:///run/containerd/containerd.sock",
        "node.alpha.kubernetes.io/ttl": "0",
        "volumes.kubernetes.io/controller-managed-attach-detach": "true",
    }
    cidr = _ip("10.244", "cidr", name).rsplit(".", 1)[0] + ".0/24"
    spec: dict[str, Any] = {"podCIDR": cidr, "podCIDRs": [cidr]}
    if control_plane:
        spec["taints"] = [{"effect": "NoSchedule", "key": "node-role.kubernetes.io/control-plane"}]
    pressure = [
        ("MemoryPressure", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
        ("DiskPressure", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
        ("PIDPressure", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
    ]
    conditions = [
        {
            "lastHeartbeatTime": STARTED,
            "lastTransitionTime": CREATED,
            "message": message,
            "reason": reason,
            "status": "False",
            "type": kind,
        }
        for kind, reason, message in pressure
    ]
    conditions.append(
        {
            "lastHeartbeatTime": STARTED,
            "lastTransitionTime": CREATED,
            "message": "kubelet is posting ready status",
            "reason": "KubeletReady",
            "status": "True",
            "type": "Ready",
        }
    )
    address = _ip("10.0", name)
    status = {
        "addresses": [
            {"address": address, "type": "InternalIP"},
            {"address": name, "type": "Hostname"},
        ],
        "allocatable": allocatable,
        "capacity": capacity,
        "conditions": conditions,
        "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
        "nodeInfo": {
            "architecture": "amd64",
            "bootID": _uid("boot", name),
            "containerRuntimeVersion": "containerd://1.7.24",
            "kernelVersion": "6.1.0-28-cloud-amd64",
            "kubeProxyVersion": KUBERNETES,
            "kubeletVersion": KUBERNETES,
            "machineID": _digest("machine", name).hex()[:32],
            "operatingSystem": "linux",
            "osImage": "Debian GNU/Linux 12 (bookworm)",
            "systemUUID": _uid("system", name),
        },
        "runtimeHandlers": [
            {"features": {"recursiveReadOnlyMounts": True, "userNamespaces": True}, "name": "runc"},
            {"features": {"recursiveReadOnlyMounts": True, "userNamespaces": True}, "name": ""},
        ],
    }
    managed = [
        _managed(
            "kubeadm",
            "Update",
            "v1",
            {"metadata": {"annotations": annotations, "labels": all_labels}},
        ),
        _managed("kubelet", "Update", "v1", {"status": status}, status=True),
    ]
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": _metadata(
            "Node", None, name, annotations=annotations, labels=all_labels, managedFields=managed
        ),
        "spec": spec,
        "status": status,
    }


def namespace(name: str, *, labels: dict[str, str] | None = None) -> dict[str, Any]:
    all_labels = {"kubernetes.io/metadata.name": name, **(labels or {})}
    managed = [_managed("kubectl-create", "Update", "v1", {"metadata": {"labels": all_labels}})]
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": _metadata("Namespace", None, name, labels=all_labels, managedFields=managed),
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Active"},
    }


def kubectl_list(*objects: dict[str, Any]) -> dict[str, Any]:
    """`kubectl get A,B -o json`: the objects, each with its kind, in one List."""
    return {
        "apiVersion": "v1",
        "items": list(objects),
        "kind": "List",
        "metadata": {"resourceVersion": ""},
    }


# AdmissionReview


def admission_review(
    operation: str,
    *,
    new: dict[str, Any] | None = None,
    old: dict[str, Any] | None = None,
    user: str = "kubernetes-admin",
    groups: tuple[str, ...] = ("kubeadm:cluster-admins", "system:authenticated"),
    name: str | None = None,
) -> dict[str, Any]:
    """An AdmissionReview v1 request as kube-apiserver sends it. `name`: `request.name` when it
    is not the object's: "" on a CREATE that relies on generateName, even once the server has
    named the object (what validating webhooks see)."""
    subject = new if new is not None else old
    assert subject is not None
    api_version = subject["apiVersion"]
    group, _, version = api_version.rpartition("/")
    kind = subject["kind"]
    kind_ref = {"group": group, "kind": kind, "version": version}
    resource = {"group": group, "resource": kind.lower() + "s", "version": version}
    options_kind = {"CREATE": "CreateOptions", "UPDATE": "UpdateOptions", "DELETE": "DeleteOptions"}
    options: dict[str, Any] = {"apiVersion": "meta.k8s.io/v1", "kind": options_kind[operation]}
    if operation == "DELETE":
        options["propagationPolicy"] = "Background"
    metadata = subject["metadata"]
    request = {
        "dryRun": False,
        "kind": kind_ref,
        "name": metadata.get("name", "") if name is None else name,
        "namespace": metadata.get("namespace", ""),
        "object": new,
        "oldObject": old,
        "operation": operation,
        "options": options,
        "requestKind": kind_ref,
        "requestResource": resource,
        "resource": resource,
        "uid": _uid("review", operation, metadata.get("name") or metadata.get("generateName")),
        "userInfo": {"groups": list(groups), "username": user},
    }
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}


REPLICASET_CONTROLLER = {
    "user": "system:serviceaccount:kube-system:replicaset-controller",
    "groups": (
        "system:serviceaccounts",
        "system:serviceaccounts:kube-system",
        "system:authenticated",
    ),
}
"""The user kube-controller-manager's ReplicaSet controller creates pods as."""
