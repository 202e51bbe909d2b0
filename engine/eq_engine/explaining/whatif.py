"""What if: the cluster as it is, and with some objects applied; the difference they make.

Two engines are fed the same objects, the second with the changes on top (a new or changed
ElasticQuota, extra or changed pods, nodes, PodGroups, PodDisruptionBudgets), and compared:
runtimes that move, pods whose capacity label changes, pods that reclaim would evict, pods the
gate would let through, and what the admission webhook would say to each changed ElasticQuota.
Pure: the objects come from files (`simulate --what-if`) or from the live cluster
(`kubectl eq what-if`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..decisions import Operation, admissions, reclaim_plan, review_quota
from ..model import (
    DisruptionBudget,
    EngineConfig,
    Node,
    Pod,
    PodGroup,
    Quota,
    ResourceList,
    format_quantity,
)
from ..state import QuotaEngine, Snapshot

Object = Quota | Pod | Node | PodGroup | DisruptionBudget
Objects = Sequence[Object]


@dataclass(frozen=True, slots=True)
class WhatIf:
    runtimes: tuple[str, ...]
    """`team-a cpu: 2500m -> 2`, for every group and resource whose runtime moves."""
    labels: tuple[str, ...]
    """`team-a/p: in-quota -> over-quota`, for every pod whose capacity label changes."""
    evicted: tuple[str, ...]
    """Pods reclaim would evict after the change that it would not evict now."""
    admitted: tuple[str, ...]
    """Pods behind the gate that the change lets through."""
    verdicts: tuple[str, ...]
    """The webhook's answer to each changed ElasticQuota: denials and warnings."""

    def lines(self) -> list[str]:
        sections = [
            ("runtime", self.runtimes),
            ("capacity label", self.labels),
            ("would be evicted", self.evicted),
            ("would be admitted", self.admitted),
            ("admission", self.verdicts),
        ]
        out = [f"{title}: {item}" for title, items in sections for item in items]
        return out or ["no difference"]


def _recomputed(
    config: EngineConfig, capacity: ResourceList | None, objects: Iterable[Object]
) -> Snapshot:
    engine = QuotaEngine(config)
    for obj in objects:
        if isinstance(obj, Quota):
            engine.set_quota(obj)
        elif isinstance(obj, Pod):
            engine.set_pod(obj)
        elif isinstance(obj, Node):
            engine.set_node(obj)
        elif isinstance(obj, PodGroup):
            engine.set_pod_group(obj)
        else:
            engine.set_disruption_budget(obj)
    engine.set_capacity(capacity)
    return engine.recompute()


def _identity(obj: Object) -> tuple[str, str]:
    """Kind and name; a PodGroup's key names its API too (`gangs.PodGroup.key`)."""
    if isinstance(obj, Quota):
        return "ElasticQuota", obj.ref
    if isinstance(obj, Node):
        return "Node", obj.name
    return type(obj).__name__, obj.key


def what_if(
    config: EngineConfig, capacity: ResourceList | None, cluster: Objects, changes: Objects
) -> WhatIf:
    """The difference `changes` (applied over `cluster`, same kind and name replaced) make."""
    replaced = {_identity(obj) for obj in changes}
    before = _recomputed(config, capacity, cluster)
    after = _recomputed(
        config, capacity, [*(o for o in cluster if _identity(o) not in replaced), *changes]
    )
    runtimes = []
    was_there = {status.name: status for status in before.statuses()}
    for status in after.statuses():
        old = was_there[status.name].runtime if status.name in was_there else None
        new = status.runtime
        for resource in sorted(set(old or {}) | set(new or {})):
            was = None if old is None else old.get(resource)
            now = None if new is None else new.get(resource)
            if was != now:
                runtimes.append(
                    f"{status.name} {resource}: {_q(resource, was)} -> {_q(resource, now)}"
                )
    labels_before = {key: member.label for key, member in before.pods.items()}
    labels = [
        f"{key}: {labels_before.get(key) or 'none'} -> {member.label or 'none'}"
        for key, member in sorted(after.pods.items())
        if labels_before.get(key) != member.label
    ]
    planned = {key for keys in reclaim_plan(before).values() for key in keys}
    evicted = [key for keys in reclaim_plan(after).values() for key in keys if key not in planned]
    admitted_before = set(admissions(before).admitted)
    admitted = [key for key in admissions(after).admitted if key not in admitted_before]
    return WhatIf(
        runtimes=tuple(runtimes),
        labels=tuple(labels),
        evicted=tuple(sorted(evicted)),
        admitted=tuple(sorted(admitted)),
        verdicts=tuple(_verdicts(before, cluster, changes)),
    )


def _verdicts(before: Snapshot, cluster: Objects, changes: Objects) -> Iterable[str]:
    """What the webhook would answer, each change judged against the cluster as it is."""
    catalog = before.tree.catalog
    existing = {q.ref: q for q in cluster if isinstance(q, Quota)}
    pods = [p for p in cluster if isinstance(p, Pod)]
    capacity = before.capacity()
    for quota in (c for c in changes if isinstance(c, Quota)):
        old = existing.get(quota.ref)
        operation = Operation.CREATE if old is None else Operation.UPDATE
        verdict = review_quota(
            operation, new=quota, old=old, catalog=catalog, capacity=capacity, pods=pods
        )
        if not verdict.allowed:
            yield f"{operation} {quota.ref} denied: {verdict.message}"
        else:
            yield f"{operation} {quota.ref} allowed"
        yield from (f"{operation} {quota.ref} warning: {w}" for w in verdict.warnings)


def _q(resource: str, amount: int | None) -> str:
    return "none" if amount is None else format_quantity(resource, amount)
