"""The quota trees and pods that Koordinator and the product are both given
(against_koordinator.py).

Each tree is drawn from its own seed: two to four top-level groups, some of them parents of two
or three leaves; `min` and `max` drawn per resource (so cpu and memory split differently); on
some groups a `shared-weight`, on some leaves `allow-lent-resource: "false"`; in every fourth
tree the top-level mins add up to more than the tree's total, so that min scaling applies; every
fifth tree is a node pool's (its own root over half the nodes). Pods all ask for one unit, 1 cpu
and 2 GiB, the nodes' sixteenth: nodes never fragment, so whatever quota admits can be bound and
which pods run depends on quota alone.

Two phases. In the first, some leaves (the borrowers) have pods, at three priorities, some
non-preemptible, often more than their min. In the second, the other leaves (the owners) get
pods up to about their min, which takes back what was lent: Koordinator's revoke and the
product's reclaim then evict.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import Any

from eq_engine.model import format_resource_list, keys

from benchmarks.plane_api import pod

NODES = 4
NODE_CAPACITY = {"cpu": "16", "memory": "32Gi", "pods": "110"}
UNIT = {"cpu": 1000, "memory": 2 * 1024**3}
"""One pod's request in canonical units (milli-cpu, bytes): a node holds 16."""
POOL_LABEL = "benchmarks.elastic-quota/pool"
POOL_NODES = (2, 3)
"""The nodes (kwok-node-N) of the pool the pool trees split."""
NAMESPACE = "compare"
PRIORITIES = {"": 0, "compare-low": 100, "compare-high": 1000}
ROOT_MAX = (2**63 - 1) // 2000
"""What Koordinator's profile controller writes as a pool root's max (MaxInt64/2000)."""
_STEP = {"cpu": 100, "memory": 256 * 1024**2}  # amounts are drawn in whole steps


@dataclass(frozen=True)
class Group:
    name: str
    parent: str  # "": a top-level group (under the cluster's root, or the pool's root)
    is_parent: bool
    min: dict[str, int]
    max: dict[str, int]
    weight: dict[str, int] | None
    lends: bool


@dataclass(frozen=True)
class PodSet:
    group: str
    count: int
    priority: str  # a PriorityClass of PRIORITIES; "": none
    preemptible: bool
    phase: int  # 1: the borrowers', 2: the owners'


@dataclass(frozen=True)
class Tree:
    index: int
    pool: bool
    scaled: bool
    groups: tuple[Group, ...]
    pods: tuple[PodSet, ...]

    @property
    def id(self) -> str:
        return tree_id(self.index)

    @property
    def root(self) -> str:
        """The pool's root group (a pool tree's only)."""
        return f"{self.id}-pool"

    def pod_names(self, pod_set: PodSet) -> list[str]:
        first = sum(s.count for s in self.pods[: self.pods.index(pod_set)])
        return [f"{pod_set.group}-p{first + i:03d}" for i in range(pod_set.count)]

    def describe(self) -> str:
        parents = sum(g.is_parent for g in self.groups)
        made = [sum(s.count for s in self.pods if s.phase == p) for p in (1, 2)]
        kind = "a pool's" if self.pool else "the cluster's"
        return (
            f"{self.id}: {len(self.groups)} groups ({parents} parents) over {kind} total"
            f"{', mins scaled' if self.scaled else ''}; pods {made[0]} then {made[1]}"
        )


def tree_id(index: int) -> str:
    """The tree's id, also the prefix of its groups' names (Koordinator's are cluster-wide)."""
    return f"t{index:02d}"


def total(pool: bool) -> dict[str, int]:
    nodes = len(POOL_NODES) if pool else NODES
    return {name: amount * 16 * nodes for name, amount in UNIT.items()}


def tree(index: int, seed: int) -> Tree:
    rng = random.Random(f"{seed}/{index}")
    pool = index % 5 == 4
    scaled = index % 4 == 1 and not pool  # a pool root's min is its total: no room to exceed
    whole = total(pool)
    share = rng.uniform(1.15, 1.5) if scaled else rng.uniform(0.5, 0.95)
    tops = rng.randint(2, 4)
    groups: list[Group] = []
    top_mins = _split(rng, {r: int(whole[r] * share) for r in whole}, tops)
    for t, top_min in enumerate(top_mins):
        name = f"{tree_id(index)}-{'abcd'[t]}"
        if rng.random() < 0.5:
            groups.append(_leaf(rng, name, "", top_min, whole))
            continue
        groups.append(Group(name, "", True, top_min, _max(rng, top_min, whole), _weight(rng), True))
        count = rng.randint(2, 3)
        kept = {r: int(top_min[r] * rng.uniform(0.6, 1.0)) for r in top_min}
        for c, child_min in enumerate(_split(rng, kept, count)):
            groups.append(_leaf(rng, f"{name}{c + 1}", name, child_min, whole))
    leaves = [g for g in groups if not g.is_parent]
    pods: list[PodSet] = []
    borrowers = [g for g in leaves if rng.random() < 0.6] or leaves[:1]
    for group in borrowers:
        units = _units(group.max)
        wanted = rng.randint(max(1, _units(group.min) // 2), max(1, min(units, 40)) + 4)
        protected = rng.randint(0, _units(group.min) // 2) if rng.random() < 0.3 else 0
        if protected:
            pods.append(PodSet(group.name, protected, "compare-high", False, 1))
        priorities = rng.sample(list(PRIORITIES), rng.randint(1, 2))
        for priority in priorities:
            pods.append(PodSet(group.name, max(1, wanted // len(priorities)), priority, True, 1))
    for group in leaves:
        if group not in borrowers and _units(group.min):
            count = rng.randint(1, _units(group.min) + 2)
            pods.append(PodSet(group.name, count, rng.choice(list(PRIORITIES)), True, 2))
    return Tree(index, pool, scaled, tuple(groups), tuple(pods))


def _units(resources: dict[str, int]) -> int:
    """How many one-unit pods `resources` holds."""
    return min(resources[r] // UNIT[r] for r in UNIT)


def _round(resource: str, amount: int) -> int:
    return amount // _STEP[resource] * _STEP[resource]


def _split(rng: random.Random, amounts: dict[str, int], parts: int) -> list[dict[str, int]]:
    """`amounts` cut into `parts` at random, each resource on its own."""
    cuts: list[dict[str, int]] = [{} for _ in range(parts)]
    for resource, amount in amounts.items():
        weights = [rng.uniform(0.2, 1.0) for _ in range(parts)]
        for cut, weight in zip(cuts, weights, strict=True):
            cut[resource] = _round(resource, int(amount * weight / sum(weights)))
    return cuts


def _max(rng: random.Random, minimum: dict[str, int], whole: dict[str, int]) -> dict[str, int]:
    return {
        r: _round(r, minimum[r] + int(whole[r] * rng.choice((0.0, 0.25, 0.5, 1.0))))
        for r in minimum
    }


def _weight(rng: random.Random) -> dict[str, int] | None:
    if rng.random() >= 0.3:
        return None  # Koordinator's default: the group's max
    return {"cpu": rng.randint(1, 64) * 1000, "memory": rng.randint(1, 128) * 1024**3}


def _leaf(
    rng: random.Random, name: str, parent: str, minimum: dict[str, int], whole: dict[str, int]
) -> Group:
    lends = rng.random() >= 0.25
    return Group(name, parent, False, minimum, _max(rng, minimum, whole), _weight(rng), lends)


# -- the objects ---------------------------------------------------------------------------


def quota(tree: Tree, group: Group) -> dict[str, Any]:
    """The group's ElasticQuota, the same for both systems."""
    labels: dict[str, str] = {}
    parent = group.parent or (tree.root if tree.pool else "")
    if parent:
        labels[keys.PARENT] = parent
    if group.is_parent:
        labels[keys.IS_PARENT] = "true"
    if not group.lends:
        labels[keys.ALLOW_LENT] = "false"
    if tree.pool:
        labels[keys.TREE_ID] = tree.id
    annotations = {}
    if group.weight:
        annotations[keys.SHARED_WEIGHT] = json.dumps(format_resource_list(group.weight))
    return _elastic_quota(group.name, labels, annotations, group.min, group.max)


def pool_root(tree: Tree) -> dict[str, Any]:
    """The pool's root as Koordinator's profile controller writes it (koord-manager, which
    holds that controller, is not run here): the product makes it from `profile(tree)`."""
    whole = total(pool=True)
    labels = {
        keys.IS_ROOT: "true",
        keys.IS_PARENT: "true",
        keys.TREE_ID: tree.id,
        keys.PROFILE: tree.root,
    }
    annotations = {keys.TOTAL_RESOURCE: json.dumps(format_resource_list(whole))}
    return _elastic_quota(tree.root, labels, annotations, whole, dict.fromkeys(whole, ROOT_MAX))


def profile(tree: Tree) -> dict[str, Any]:
    """The ElasticQuotaProfile of the pool, for the product's operator to make its root."""
    return {
        "apiVersion": "quota.koordinator.sh/v1alpha1",
        "kind": "ElasticQuotaProfile",
        "metadata": {
            "name": tree.root,
            "namespace": NAMESPACE,
            "labels": {keys.TREE_ID: tree.id},
            "annotations": {keys.RESOURCE_KEYS: json.dumps(sorted(UNIT))},
        },
        "spec": {
            "quotaName": tree.root,
            "quotaLabels": {keys.IS_PARENT: "true"},
            "nodeSelector": {"matchLabels": {POOL_LABEL: "true"}},
        },
    }


def _elastic_quota(
    name: str,
    labels: dict[str, str],
    annotations: dict[str, str],
    minimum: dict[str, int],
    maximum: dict[str, int],
) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.sigs.k8s.io/v1alpha1",
        "kind": "ElasticQuota",
        "metadata": {
            "name": name,
            "namespace": NAMESPACE,
            "labels": labels,
            "annotations": annotations,
        },
        "spec": {"min": format_resource_list(minimum), "max": format_resource_list(maximum)},
    }


def pods(tree: Tree, phase: int, scheduler: str = "") -> list[dict[str, Any]]:
    """The phase's pods, in the order they are made (by name, as a scheduler's queue lists
    pods of the same priority that were there when it started)."""
    made = []
    for pod_set in (s for s in tree.pods if s.phase == phase):
        for name in tree.pod_names(pod_set):
            made.append(_pod(tree, pod_set, name, scheduler))
    return made


def _pod(tree: Tree, pod_set: PodSet, name: str, scheduler: str) -> dict[str, Any]:
    labels = {keys.POD_QUOTA: pod_set.group}
    if not pod_set.preemptible:
        labels[keys.PREEMPTIBLE] = "false"
    spec: dict[str, Any] = {"terminationGracePeriodSeconds": 0}
    if scheduler:
        spec["schedulerName"] = scheduler
    if pod_set.priority:
        spec["priorityClassName"] = pod_set.priority
    if tree.pool:  # the product's webhook adds the same; Koordinator's pod webhook is not run
        term = {"matchExpressions": [{"key": POOL_LABEL, "operator": "In", "values": ["true"]}]}
        spec["affinity"] = {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}
            }
        }
    return pod(name, NAMESPACE, requests=format_resource_list(UNIT), spec=spec, labels=labels)


def priority_classes() -> list[dict[str, Any]]:
    return [
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": name},
            "value": value,
        }
        for name, value in PRIORITIES.items()
        if name
    ]
