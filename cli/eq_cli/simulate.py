"""`elastic-quota simulate`: what the operator would compute for these objects, offline.

Feeds the loaded objects to the same engine the operator runs and collects the report that
`output.py` prints: capacity, every group's numbers, every pod's label, the reclaim plans and
the problems.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from eq_engine import EngineConfig, GroupStatus, Problem, QuotaEngine, ResourceList
from eq_engine.admission import admissions
from eq_engine.reclaim import reclaim_plan

from .loading import Objects


@dataclass(frozen=True)
class PodResult:
    key: str
    group: str
    capacity: str | None


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
    """The engine behind the report, for explanations."""
    waiting: dict[str, int] = field(default_factory=dict)
    """Per group, its pods behind the admission gate (where any wait)."""


def simulate(objects: Objects, *, capacity: ResourceList | None, config: EngineConfig) -> Report:
    engine = QuotaEngine(config)
    for quota in objects.quotas:
        engine.set_quota(quota)
    for node in objects.nodes:
        engine.set_node(node)
    for pod in objects.pods:
        engine.set_pod(pod)
    engine.set_capacity(capacity)
    engine.recompute()
    tree = engine.tree
    return Report(
        capacity=engine.capacity(),
        groups=tuple(engine.statuses()),
        depth={group.name: int(tree.depth[i]) for i, group in enumerate(tree.groups)},
        pods=tuple(
            PodResult(pod.key, group, label)
            for pod, group, label in sorted(engine.pods(), key=lambda p: p[0].key)
        ),
        reclaim=reclaim_plan(engine),
        problems=tuple(engine.problems),
        engine=engine,
        waiting=dict(admissions(engine).waiting_per_group),
    )
