"""Nodes and namespaces as a kubeadm cluster holds them, and `kubectl get -o json`'s List."""

from __future__ import annotations

from typing import Any

from .metadata import CREATED, KUBERNETES, STARTED, digest, ip, managed_entry, object_metadata, uid


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
    cidr = ip("10.244", "cidr", name).rsplit(".", 1)[0] + ".0/24"
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
    address = ip("10.0", name)
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
            "bootID": uid("boot", name),
            "containerRuntimeVersion": "containerd://1.7.24",
            "kernelVersion": "6.1.0-28-cloud-amd64",
            "kubeProxyVersion": KUBERNETES,
            "kubeletVersion": KUBERNETES,
            "machineID": digest("machine", name).hex()[:32],
            "operatingSystem": "linux",
            "osImage": "Debian GNU/Linux 12 (bookworm)",
            "systemUUID": uid("system", name),
        },
        "runtimeHandlers": [
            {"features": {"recursiveReadOnlyMounts": True, "userNamespaces": True}, "name": "runc"},
            {"features": {"recursiveReadOnlyMounts": True, "userNamespaces": True}, "name": ""},
        ],
    }
    managed = [
        managed_entry(
            "kubeadm",
            "Update",
            "v1",
            {"metadata": {"annotations": annotations, "labels": all_labels}},
        ),
        managed_entry("kubelet", "Update", "v1", {"status": status}, status=True),
    ]
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": object_metadata(
            "Node", None, name, annotations=annotations, labels=all_labels, managedFields=managed
        ),
        "spec": spec,
        "status": status,
    }


def namespace(name: str, *, labels: dict[str, str] | None = None) -> dict[str, Any]:
    all_labels = {"kubernetes.io/metadata.name": name, **(labels or {})}
    managed = [
        managed_entry("kubectl-create", "Update", "v1", {"metadata": {"labels": all_labels}})
    ]
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": object_metadata(
            "Namespace", None, name, labels=all_labels, managedFields=managed
        ),
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
