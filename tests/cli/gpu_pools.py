"""A cluster with two GPU node pools, as `kubectl get eqp,eq,pods,nodes -A -o json` dumps it:
two A100 nodes (8 GPUs each), two V100 nodes (4 each) and a CPU worker; an
ElasticQuotaProfile per GPU model (resource keys cpu, memory and nvidia.com/gpu); team A and
team B each have a group in both pools' trees.

The A100 profile carries the `tree-id` label `a100` (written by hand); the V100 profile none,
so its tree id is Koordinator's hash of `koordinator-system/v100` (`V100`), which the teams'
V100 groups carry, as a user copies it from the label the operator writes on the profile. Both
put `is-parent: "true"` on their roots (`quotaLabels`), as Koordinator's example does: the teams'
groups hang from them.
"""

from __future__ import annotations

import json
from typing import Any, cast

from eq_engine import parse_node
from eq_engine.pools import desired_roots, parse_profile
from eq_engine.reading import RawNode

from tests.engine.profile_objects import fnv64a
from tests.realistic import (
    P,
    deployment_pod,
    elastic_quota,
    elastic_quota_profile,
    kubectl_list,
    namespace,
    node,
)

NAMESPACE = "koordinator-system"
GPU = "nvidia.com/gpu"
PRODUCT = "nvidia.com/gpu.product"
A100_PRODUCT, V100_PRODUCT = "NVIDIA-A100-SXM4-80GB", "Tesla-V100-SXM2-16GB"
A100 = "a100"
V100 = fnv64a("koordinator-system/v100")
"""Koordinator's tree id of a profile without the label: FNV-64a of its namespace/name."""
KEYS = ["cpu", "memory", GPU]


def gpu_node(name: str, product: str, gpus: int, cpu: str, memory_gi: int) -> dict[str, Any]:
    labels = {PRODUCT: product, "node.kubernetes.io/instance-type": f"{product.lower()}-x{gpus}"}
    return node(name, cpu=cpu, memory_gi=memory_gi, labels=labels, extra={GPU: str(gpus)})


def nodes() -> list[dict[str, Any]]:
    return [
        gpu_node("gpu-a100-1", A100_PRODUCT, 8, "96", 1024),
        gpu_node("gpu-a100-2", A100_PRODUCT, 8, "96", 1024),
        gpu_node("gpu-v100-1", V100_PRODUCT, 4, "32", 256),
        gpu_node("gpu-v100-2", V100_PRODUCT, 4, "32", 256),
        node("worker-1", cpu="16", memory_gi=64),
    ]


def profiles() -> list[dict[str, Any]]:
    a100, v100 = (
        elastic_quota_profile(
            model,
            NAMESPACE,
            quota_name=f"{model}-root",
            node_selector={"matchLabels": {PRODUCT: product}},
            resource_keys=KEYS,
            quota_labels={P + "is-parent": "true"},
            created=created,
        )
        for model, product, created in (
            ("a100", A100_PRODUCT, "2025-06-02T08:20:00Z"),
            ("v100", V100_PRODUCT, "2025-06-02T08:21:00Z"),
        )
    )
    a100["metadata"]["labels"] = {P + "tree-id": A100}
    return [a100, v100]


def team_group(team: str, model: str, tree: str, gpus: int) -> dict[str, Any]:
    """Team `team`'s group in the pool of `model`: a min of half the pool's GPUs, a max of all."""
    return elastic_quota(
        f"team-{team}-{model}",
        f"team-{team}",
        parent=f"{model}-root",
        min={"cpu": "8", "memory": "64Gi", GPU: str(gpus // 2)},
        max={"cpu": "64", "memory": "512Gi", GPU: str(gpus)},
        labels={P + "tree-id": tree},
    )


def groups() -> list[dict[str, Any]]:
    return [
        team_group(team, model, tree, gpus)
        for model, tree, gpus in (("a100", A100, 16), ("v100", V100, 8))
        for team in ("a", "b")
    ]


def trainer(team: str, model: str, replica: int, gpus: int, node_name: str) -> dict[str, Any]:
    return deployment_pod(
        f"team-{team}",
        f"train-{model}",
        replica,
        labels={P + "name": f"team-{team}-{model}"},
        requests={"cpu": "4", "memory": "32Gi", GPU: str(gpus)},
        limits={GPU: str(gpus)},
        node=node_name,
    )


def pods() -> list[dict[str, Any]]:
    """Team A trains on 12 A100s (borrowing 4 of team B's idle min) and 4 V100s; team B on
    4 A100s."""
    return [
        *(trainer("a", "a100", i, 4, f"gpu-a100-{i % 2 + 1}") for i in range(3)),
        trainer("b", "a100", 0, 4, "gpu-a100-2"),
        *(trainer("a", "v100", i, 2, f"gpu-v100-{i + 1}") for i in range(2)),
    ]


def stale_root(model: str, tree: str, *, gpus: int, cpu: str) -> dict[str, Any]:
    """The root of `model`'s tree as the operator wrote it when the pool had one node: its
    total-resource says so. With a label of the user's (`ignore-default-tree`) that the
    operator keeps."""
    total = {"cpu": cpu, "memory": "1Ti", GPU: str(gpus)}
    return elastic_quota(
        f"{model}-root",
        NAMESPACE,
        min=total,
        max=dict.fromkeys(KEYS, str((2**63 - 1) // 2000)),
        labels={
            P + "is-parent": "true",
            P + "profile": model,
            P + "tree-id": tree,
            P + "is-root": "true",
            P + "ignore-default-tree": "true",
        },
        annotations={
            P + "total-resource": json.dumps(total, separators=(",", ":")),
            P + "unschedulable-resource": "{}",
        },
        manager="elastic-quota",
    )


def cluster(*extra: dict[str, Any], with_profiles: bool = True) -> dict[str, Any]:
    """The dump: one List, as `kubectl get -o json` prints it."""
    spaces = [namespace(n) for n in (NAMESPACE, "team-a", "team-b")]
    found = profiles() if with_profiles else []
    return kubectl_list(*spaces, *found, *groups(), *nodes(), *pods(), *extra)


def operator_roots() -> list[dict[str, Any]]:
    """Each profile's root as the operator writes it for these nodes (`eq_engine.pools`
    makes it), as the API server then serves it."""
    wanted = desired_roots(
        [parse_profile(raw) for raw in profiles()],
        [parse_node(cast(RawNode, raw)) for raw in nodes()],
    )
    return [
        elastic_quota(
            root.name,
            root.namespace,
            min=dict(root.min),
            max=dict(root.max),
            labels=dict(root.labels),
            annotations=dict(root.annotations),
            manager="elastic-quota",
        )
        for root in wanted.roots
    ]
