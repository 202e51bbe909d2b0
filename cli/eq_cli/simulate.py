"""`elastic-quota simulate`: what the operator would compute for these objects, offline.

Feeds the loaded objects to the same engine the operator runs and collects the report that
`output.py` and `documents.py` print: capacity, every group's numbers, every pod's label, the
gate's decision (who waits, gangs counted whole), the gangs, the reclaim plans and the
problems.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field

from eq_engine import EngineConfig, GroupStatus, Problem, QuotaEngine, ResourceList, Snapshot
from eq_engine.decisions import GroupPreemption, admissions, preemption_plan, reclaim_plan
from eq_engine.explaining import GangView, gang_views
from eq_engine.model import LabelSelector, Requeue
from eq_engine.pools import pool_profiles
from eq_engine.reading import requeued_gangs

from .loading import Objects
from .pools import pools
from .trees import QuotaTree, quota_trees


@dataclass(frozen=True)
class PodResult:
    key: str
    group: str
    capacity: str | None
    gang: str | None = None
    """The key of its gang (`GangView.key`), if it belongs to one."""


@dataclass(frozen=True)
class Waiting:
    """A group's pods behind the admission gate that stay there now."""

    pods: int
    gangs: int = 0
    """Gangs that wait whole (not admitted, or not judged yet), each counted once."""
    gang_pods: int = 0
    """Of `pods`, those of these gangs."""


@dataclass(frozen=True)
class GangResult:
    view: GangView
    admitted: int
    """Its pods behind the gate that the gate lets through now."""
    waiting: str | None
    """Why its pods that stay behind the gate wait (its most important one's reason)."""


@dataclass(frozen=True)
class Report:
    capacity: ResourceList
    groups: tuple[GroupStatus, ...]
    """In tree order: root, system, default, then level by level."""
    depth: dict[str, int]
    pods: tuple[PodResult, ...]
    reclaim: dict[str, list[str]]
    problems: tuple[Problem, ...]
    engine: QuotaEngine
    """The engine behind the report."""
    snapshot: Snapshot
    """Its recompute, for explanations."""
    waiting: dict[str, Waiting] = field(default_factory=dict)
    """Per group, its pods behind the admission gate (where any wait)."""
    preemption: dict[str, GroupPreemption] = field(default_factory=dict)
    """Per group, the pod that waits first and what it would have evicted (or why nothing)."""
    requeued: dict[str, Requeue] = field(default_factory=dict)
    """The gangs the operator requeued, by key, as the groups' objects record them."""
    gangs: tuple[GangResult, ...] = ()
    trees: tuple[QuotaTree, ...] = ()
    """Every quota tree of the cluster, the default one first (kept whole when the report is
    narrowed to one tree or one group)."""
    selectors: dict[str, LabelSelector] = field(default_factory=dict)
    """Each node pool's node selector, by tree id."""
    placed: dict[str, str] = field(default_factory=dict)
    """The pods of groups that list `pools` which the gate lets through now, each to the group
    of the pool it chooses (`decisions.placing`)."""


def simulate(
    objects: Objects,
    *,
    capacity: ResourceList | None,
    config: EngineConfig,
    make_roots: bool = True,
) -> Report:
    """`make_roots`: each ElasticQuotaProfile's root made from the nodes, as the operator would
    now (`simulate`); else the roots as they are (`kubectl eq`: as the operator wrote them)."""
    found = pools(objects, make_roots=make_roots)
    objects = found.objects
    engine = QuotaEngine(config)
    for quota in objects.quotas:
        engine.set_quota(quota)
    for node in objects.nodes:
        engine.set_node(node)
    for group in objects.pod_groups:
        engine.set_pod_group(group)
    for budget in objects.budgets:
        engine.set_disruption_budget(budget)
    for pod in objects.pods:
        engine.set_pod(pod)
    engine.set_capacity(capacity)
    snapshot = engine.recompute()
    tree = engine.tree
    pods = tuple(
        PodResult(pod.key, group, label, pod.gang.key if pod.gang else None)
        for pod, group, label in sorted(engine.pods(), key=lambda p: p[0].key)
    )
    requeued = {
        r.gang: r
        for body in objects.bodies.values()
        for r in requeued_gangs((body.get("metadata") or {}).get("annotations") or {})
    }
    now = time.time()
    selectors = {tree: p.node_selector for tree, p in pool_profiles(objects.profiles).items()}
    decision = admissions(snapshot, requeued=requeued, now=now, selectors=selectors)
    admitted = set(decision.admitted)
    gangs = tuple(
        GangResult(
            view,
            sum(key in admitted for key in view.gated),
            next((decision.waiting[k].message for k in view.pods if k in decision.waiting), None),
        )
        for view in gang_views(snapshot)
    )
    return Report(
        capacity=engine.capacity(),
        groups=tuple(engine.statuses()),
        depth={group.name: int(tree.depth[i]) for i, group in enumerate(tree.groups)},
        pods=pods,
        reclaim=reclaim_plan(snapshot, now=now),
        preemption=preemption_plan(snapshot, now=now),
        requeued=requeued,
        problems=(*engine.problems, *found.problems),
        engine=engine,
        snapshot=snapshot,
        waiting=_waiting(pods, decision.waiting, decision.gangs_waiting_per_group, gangs),
        gangs=gangs,
        trees=quota_trees(engine, found.made_by),
        selectors=selectors,
        placed=dict(decision.placed),  # in the order the gate took them
    )


def _waiting(
    pods: tuple[PodResult, ...],
    reasons: Mapping[str, object],
    gangs_per_group: Mapping[str, int],
    gangs: tuple[GangResult, ...],
) -> dict[str, Waiting]:
    """Per group, its waiting pods and gangs; a gang waits whole when the gate lets none of
    its pods through (a member of an admitted gang waits as a single pod)."""
    whole = {g.view.key for g in gangs if not g.view.admitted and not g.admitted}
    counts: dict[str, list[int]] = {}
    for pod in pods:
        if pod.key in reasons:
            tally = counts.setdefault(pod.group, [0, 0])
            tally[0] += 1
            tally[1] += pod.gang in whole
    return {
        group: Waiting(n, gangs_per_group.get(group, 0), in_gangs)
        for group, (n, in_gangs) in counts.items()
    }
