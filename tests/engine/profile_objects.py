"""What the tests of ElasticQuotaProfiles and their trees' roots share: nodes and profiles as
`kubectl get -o json` shows them, the roots they make, an FNV-64a of the tests' own and a JSON
merge patch applier."""

from __future__ import annotations

import uuid
from functools import reduce
from typing import Any, cast

from eq_engine import parse_node
from eq_engine.pools.profile_roots import Roots, desired_roots
from eq_engine.pools.profiles import parse_profile
from eq_engine.reading.raw import RawNode

P = "quota.scheduling.koordinator.sh/"
ZONE = "topology.kubernetes.io/zone"
KEYS_FIELD = f"metadata.annotations[{P}resource-keys]"


def node(
    name: str,
    zone: str,
    allocatable: dict[str, str] | None = None,
    *,
    ready: bool = True,
    cordoned: bool = False,
) -> dict[str, Any]:
    """A Node as `kubectl get node -o json` shows it (kind's), with Koordinator's test sizes."""
    amounts = allocatable or {"cpu": "10", "memory": "1000", "storage": "1000"}
    cordon = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "uid": str(uuid.uuid5(uuid.NAMESPACE_DNS, name)),
            "resourceVersion": "48211",
            "creationTimestamp": "2025-11-03T09:12:44Z",
            "labels": {
                "kubernetes.io/arch": "amd64",
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                ZONE: zone,
            },
            "annotations": {"node.alpha.kubernetes.io/ttl": "0"},
        },
        "spec": {
            "podCIDR": "10.244.1.0/24",
            "providerID": f"kind://docker/kind/{name}",
            **({"unschedulable": True, "taints": [cordon]} if cordoned else {}),
        },
        "status": {
            "allocatable": amounts,
            "capacity": amounts,
            "conditions": [
                {
                    "type": "MemoryPressure",
                    "status": "False",
                    "reason": "KubeletHasSufficientMemory",
                },
                {"type": "Ready", "status": "True" if ready else "False", "reason": "KubeletReady"},
            ],
            "nodeInfo": {"kubeletVersion": "v1.31.0", "architecture": "amd64"},
        },
    }


NODES = [
    node("node1", "cn-hangzhou-a"),
    node("node2", "cn-hangzhou-a", ready=False),
    node("node3", "cn-hangzhou-b"),
]


def profile(
    name: str,
    selector: Any = None,
    *,
    quota: str | None = None,
    namespace: str = "kube-system",
    created: str = "2025-12-01T10:00:00Z",
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    **spec: Any,
) -> dict[str, Any]:
    """An ElasticQuotaProfile as `kubectl get eqp -o json` shows it; `selector` a zone, or the
    `nodeSelector` itself."""
    metadata = {
        "name": name,
        "namespace": namespace,
        "uid": str(uuid.uuid5(uuid.NAMESPACE_URL, f"{namespace}/{name}")),
        "resourceVersion": "50117",
        "generation": 1,
        "creationTimestamp": created,
        **({"labels": labels} if labels else {}),
        **({"annotations": annotations} if annotations else {}),
    }
    if isinstance(selector, str):
        selector = {"matchLabels": {ZONE: selector}}
    return {
        "apiVersion": "quota.koordinator.sh/v1alpha1",
        "kind": "ElasticQuotaProfile",
        "metadata": metadata,
        "spec": {"quotaName": quota or f"{name}-root", "nodeSelector": selector, **spec},
    }


def roots(*raws: dict[str, Any], nodes: list[dict[str, Any]] = NODES) -> Roots:
    return desired_roots(
        [parse_profile(r) for r in raws], [parse_node(cast(RawNode, n)) for n in nodes]
    )


def fnv64a(text: str) -> str:
    """FNV-1a, 64 bits, written apart from the engine's; checked on Go's hash/fnv vectors."""
    step = lambda h, byte: ((h ^ byte) * 1099511628211) % 2**64  # noqa: E731
    return str(reduce(step, text.encode(), 14695981039346656037))


def canonical(cpu: float, memory: int, storage: int | None = None) -> dict[str, int]:
    """Koordinator's createResourceList(WithStorage): cpu in cores, the rest in bytes."""
    amounts = {"cpu": round(cpu * 1000), "memory": memory}
    return amounts | ({} if storage is None else {"storage": storage})


def merged(target: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    """`patch` applied to `target` as a JSON merge patch (RFC 7386)."""
    result = dict(target)
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        elif isinstance(value, dict):
            result[key] = merged(result.get(key) or {}, value)
        else:
            result[key] = value
    return result
