"""Pods as each controller makes them: names, ownerReferences and the controller's own labels
(Deployment, Job, CronJob, StatefulSet, DaemonSet), kubelet's static mirror pods, and the
chart's own operator and webhook pods."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from .metadata import CREATED, KUBERNETES, digest, name_suffix, owner_reference, uid
from .pods import pod, toleration

CHART = Path(__file__).resolve().parents[2] / "manifests" / "elastic-quota"


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
        owner=owner_reference(api_version, kind, owner),
        labels={**(labels if labels is not None else {"app": owner}), **own},
        **options,
    )


def deployment_pod(
    namespace: str, deployment: str, replica: int = 0, *, created: bool = True, **options: Any
) -> dict[str, Any]:
    """A pod of Deployment `deployment` (through its ReplicaSet): `<deployment>-<hash>-<suffix>`,
    the suffix made up from `replica` unless given as `suffix`. `created` False: the pod as the
    ReplicaSet controller sends it to admission (no name)."""
    template_hash = name_suffix(10, "pod-template-hash", namespace, deployment)
    replica_set = f"{deployment}-{template_hash}"
    suffix = options.pop("suffix", None) or name_suffix(5, namespace, deployment, replica)
    options.setdefault("labels", {"app": deployment})
    name = f"{replica_set}-{suffix}" if created else None
    own = {"pod-template-hash": template_hash}
    return _controlled("ReplicaSet", replica_set, namespace, name, own, **options)


def job_pod(namespace: str, job: str, attempt: int = 0, **options: Any) -> dict[str, Any]:
    """A pod of Job `job` (its `attempt`-th): `<job>-<suffix>`, restartPolicy Never, the Job's
    labels (both spellings, as 1.27+ sets them) and, while it runs, the job-tracking finalizer."""
    job_uid = uid("Job", job)
    own = {
        "batch.kubernetes.io/controller-uid": job_uid,
        "batch.kubernetes.io/job-name": job,
        "controller-uid": job_uid,
        "job-name": job,
    }
    name = f"{job}-{options.pop('suffix', None) or name_suffix(5, namespace, job, attempt)}"
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
        "controller-revision-hash": f"{statefulset}-{name_suffix(10, namespace, statefulset)}",
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
        toleration("node.kubernetes.io/not-ready", seconds=None),
        toleration("node.kubernetes.io/unreachable", seconds=None),
        *(
            toleration(f"node.kubernetes.io/{taint}", "NoSchedule", None)
            for taint in ("disk-pressure", "memory-pressure", "pid-pressure", "unschedulable")
        ),
    ]
    own = {
        "controller-revision-hash": name_suffix(10, namespace, daemonset),
        "pod-template-generation": "1",
    }
    name = f"{daemonset}-{name_suffix(5, namespace, daemonset, node)}"
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
    config_hash = digest("config", component, node).hex()[:32]
    annotations = {
        "kubernetes.io/config.hash": config_hash,
        "kubernetes.io/config.mirror": config_hash,
        "kubernetes.io/config.seen": CREATED.replace("Z", ".000000000Z"),
        "kubernetes.io/config.source": "file",
    }
    return pod(
        namespace,
        f"{component}-{node}",
        owner=owner_reference("v1", "Node", node, node=True),
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
