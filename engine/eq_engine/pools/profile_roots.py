"""The root ElasticQuota of each ElasticQuotaProfile's tree, as the operator should write it.

As Koordinator's profile controller writes it (pkg/quota-controller/profile at a7a1b76):

- total: the sum of `status.allocatable` of the pool's nodes; unschedulable: the same over
  those cordoned or not Ready. With `resourceRatio`, each amount is scaled as Go does it,
  `int64(float64(amount) * ratio)` (cpu in millicores, the rest in base units);
- annotations `total-resource` and `unschedulable-resource`: those lists as Go's JSON writes
  them (keys sorted, no spaces; quantities as Koordinator scales them: cpu and other resources
  in decimal units, memory in binary ones. Without a ratio Koordinator keeps each node's own
  spelling: the same amounts, perhaps written another way);
- `spec.min`: the total of each resource key (`"0"` where the pool has none), `spec.max`:
  MaxInt64/2000 of each; Koordinator replaces both whole;
- labels: `profile` (the profile's name), then each `quotaLabels` entry, then `tree-id` and
  `is-root: "true"`; other labels and annotations on the quota are left alone.

Where profiles overlap, ours (Koordinator applies each profile alone):

- a node that several profiles select counts in one pool only, the oldest profile's
  (creationTimestamp, then namespace/name); each other profile gets a Problem naming the node
  and that profile. Koordinator counts such a node in every pool, so the trees together
  would split more than the cluster has;
- two profiles naming the same root quota: the oldest owns it; the other makes no tree and gets
  a Problem (Koordinator would have both overwrite the root in turn);
- a profile that selects no node still has its root, with a total of 0, and a Problem.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from ..model import Node, Problem, ResourceList, cluster_capacity, format_quantity, keys, listing
from .profiles import KIND, Profile

API_VERSION: Final = "scheduling.sigs.k8s.io/v1alpha1"
MAX_TEXT: Final = str((2**63 - 1) // 2000)
"""Every key's max on a root: Koordinator's `math.MaxInt64/2000`, a whole number."""
_DECIMAL_SI: Final = "pods"
"""A resource that `format_quantity` writes in whole decimal units, as Go's DecimalSI."""


@dataclass(frozen=True, slots=True)
class RootQuota:
    """What one profile's root ElasticQuota should hold: JSON-ready texts, plus the amounts."""

    namespace: str
    name: str
    profile: str
    """The profile's `namespace/name`."""
    tree_id: str
    labels: Mapping[str, str]
    """The labels the profile owns on its root."""
    annotations: Mapping[str, str]
    """`total-resource` and `unschedulable-resource`, JSON texts."""
    min: Mapping[str, str]
    max: Mapping[str, str]
    total: ResourceList
    """The pool's total, ratio applied, in canonical units."""
    unschedulable: ResourceList
    nodes: tuple[str, ...]
    """The nodes counted in the pool, by name."""

    @property
    def ref(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass(frozen=True, slots=True)
class Roots:
    roots: tuple[RootQuota, ...]
    """One per profile that owns its root, the oldest profile's first."""
    problems: tuple[Problem, ...]
    """The profiles' own (see `profiles.py`) and their overlaps, sorted."""


def desired_roots(profiles: Iterable[Profile], nodes: Iterable[Node]) -> Roots:
    """The root of every profile's tree, from all profiles and all nodes of the cluster."""
    problems: list[Problem] = []
    owners: dict[str, Profile] = {}
    for profile in sorted(profiles, key=lambda p: p.age):
        problems.extend(profile.problems)
        owner = owners.setdefault(profile.root_ref, profile)
        if owner is not profile:
            message = (
                f"ElasticQuota {profile.root_ref} is the root of older ElasticQuotaProfile "
                f"{owner.ref}'s tree: this profile makes no tree; name another quota"
            )
            problems.append(Problem(KIND, profile.ref, "spec.quotaName", message))
    ordered = sorted(nodes, key=lambda node: node.name)
    pool_of: dict[str, Profile] = {}
    roots = []
    for profile in owners.values():
        pool: list[Node] = []
        taken: dict[str, list[str]] = {}  # older profile -> the nodes it holds
        matched = [node for node in ordered if profile.node_selector.matches(node.labels)]
        for node in matched:
            winner = pool_of.setdefault(node.name, profile)
            if winner is profile:
                pool.append(node)
            else:
                taken.setdefault(winner.ref, []).append(node.name)
        problems.extend(_overlaps(profile, taken, empty=not pool))
        if not matched:
            problems.append(
                Problem(
                    KIND, profile.ref, "spec.nodeSelector", "matches no node: its tree's total is 0"
                )
            )
        roots.append(_root(profile, pool))
    return Roots(tuple(roots), tuple(sorted(problems)))


def _overlaps(profile: Profile, taken: Mapping[str, list[str]], *, empty: bool) -> list[Problem]:
    """A Problem for each older profile that holds nodes this one selects."""
    left = ": this tree has no node left, its total is 0" if empty else ""
    problems = []
    for winner, names in taken.items():
        nodes, they, them = (
            (f"nodes {listing(names)} are", "they count", "them")
            if len(names) > 1
            else (f"node {names[0]} is", "it counts", "it")
        )
        message = (
            f"{nodes} also in the pool of older ElasticQuotaProfile {winner}: {they} in that "
            f"tree only (Koordinator would count {them} in both){left}"
        )
        problems.append(Problem(KIND, profile.ref, "spec.nodeSelector", message))
    return problems


def _root(profile: Profile, pool: list[Node]) -> RootQuota:
    total = _scaled(cluster_capacity(pool), profile.ratio)
    unschedulable = _scaled(
        cluster_capacity(node for node in pool if not node.schedulable), profile.ratio
    )
    texts = _texts(total)
    labels = {
        keys.PROFILE: profile.name,
        **dict(profile.quota_labels),
        keys.TREE_ID: profile.tree_id,
        keys.IS_ROOT: "true",
    }
    annotations = {
        keys.TOTAL_RESOURCE: _json(texts),
        keys.UNSCHEDULABLE_RESOURCE: _json(_texts(unschedulable)),
    }
    resources = sorted(profile.resource_keys)
    return RootQuota(
        namespace=profile.namespace,
        name=profile.quota_name,
        profile=profile.ref,
        tree_id=profile.tree_id,
        labels=labels,
        annotations=annotations,
        min={name: texts.get(name, "0") for name in resources},
        max=dict.fromkeys(resources, MAX_TEXT),
        total=total,
        unschedulable=unschedulable,
        nodes=tuple(node.name for node in pool),
    )


def _scaled(amounts: dict[str, int], ratio: float | None) -> dict[str, int]:
    """Scaled through a float and truncated, as Go's `int64(float64(amount) * ratio)`."""
    if ratio is None:
        return amounts
    return {name: int(float(amount) * ratio) for name, amount in amounts.items()}


def _texts(amounts: ResourceList) -> dict[str, str]:
    """Quantities as Koordinator writes scaled ones: cpu in decimal with milli units, memory in
    binary units, any other resource in decimal (storage too)."""
    return {
        name: format_quantity(name if name in ("cpu", "memory") else _DECIMAL_SI, amount)
        for name, amount in sorted(amounts.items())
    }


def _json(value: Mapping[str, str]) -> str:
    """As Go's `json.Marshal` of a ResourceList: keys sorted, no spaces."""
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


def root_body(root: RootQuota) -> dict[str, Any]:
    """The ElasticQuota to create when the root does not exist."""
    return {
        "apiVersion": API_VERSION,
        "kind": "ElasticQuota",
        "metadata": {
            "name": root.name,
            "namespace": root.namespace,
            "labels": dict(root.labels),
            "annotations": dict(root.annotations),
        },
        "spec": {"min": dict(root.min), "max": dict(root.max)},
    }


def root_patch(root: RootQuota, existing: Mapping[str, Any]) -> dict[str, Any] | None:
    """The JSON merge patch that makes `existing` (the root as served) hold what the profile
    wants; None when it does already. Texts are compared as written, so a quantity spelt
    another way is written once in ours. Keys of min and max that the profile no longer names
    are removed (null), as Koordinator replaces both whole."""
    metadata, spec = existing.get("metadata") or {}, existing.get("spec") or {}
    patch: dict[str, Any] = {}
    wanted = (
        ("metadata", "labels", root.labels, False),
        ("metadata", "annotations", root.annotations, False),
        ("spec", "min", root.min, True),
        ("spec", "max", root.max, True),
    )
    for part, name, want, whole in wanted:
        have = (metadata if part == "metadata" else spec).get(name) or {}
        changed: dict[str, str | None] = {k: v for k, v in want.items() if have.get(k) != v}
        if whole:
            changed |= {key: None for key in have if key not in want}
        if changed:
            patch.setdefault(part, {})[name] = changed
    return patch or None
