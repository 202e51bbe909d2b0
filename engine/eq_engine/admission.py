"""Quota-gated scheduling: which waiting pods of a group may be handed to the scheduler now.

A pod waits behind the admission gate until its group can take it: the group's used, plus what
it has admitted that is not scheduled yet, plus this pod's request fit inside the group's runtime
(on the resources the runtime limits) and, for a non-preemptible pod, inside the group's min.
An admitted pod holds budget until it is bound only while the edge says it was admitted a
moment ago (`admissions(engine, holding=...)`): a pod that never schedules (an unbound
volume, a selector no node matches) or that nobody admitted cannot hold its group's budget.
Pods are admitted most important first (priority, then creation time); the first one that does
not fit holds the rest of its group back, so that a large pod is not starved by small ones
behind it. Admitting counts at once: two pods never both take the last unit.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

from .accounting import NP_USED, USED
from .engine import QuotaEngine
from .objects import Pod
from .problems import listing
from .quantities import format_quantity
from .state import Member


def queue_order(pod: Pod) -> tuple[int, float, str]:
    """Sort key of a group's waiting pods: higher priority first, then older first."""
    return (-pod.priority, pod.created, pod.key)


@dataclass(slots=True)
class Budget:
    """What a group may still admit: the headroom of its runtime and of its min. A tally for
    one decision: admitting a pod adds it to `taken` (and `locked`)."""

    names: Sequence[str]
    limited: Sequence[bool]
    """Per resource: the runtime limits it (a resource outside the max is not limited)."""
    runtime: Sequence[int]
    taken: list[int]
    """Used plus admitted and not yet scheduled, per resource."""
    min: Sequence[int]
    locked: list[int]
    """The same for non-preemptible pods, which must fit inside the min."""
    holders: list[str] = field(default_factory=list)
    """Pods admitted and not bound yet: named when a pod waits, since they hold the budget."""

    def shortfall(self, request: Sequence[int], preemptible: bool) -> str | None:
        """Why `request` does not fit now; None: it fits."""
        short = [
            f"runtime {name} {_q(name, limit)}, used or admitted {_q(name, taken)}, "
            f"this pod {_q(name, want)}"
            for name, limited, limit, taken, want in zip(
                self.names, self.limited, self.runtime, self.taken, request, strict=True
            )
            if limited and want and taken + want > limit
        ]
        if not preemptible:
            short += [
                f"min {name} {_q(name, floor)}, "
                f"non-preemptible used or admitted {_q(name, locked)}, this pod {_q(name, want)}"
                for name, limited, floor, locked, want in zip(
                    self.names, self.limited, self.min, self.locked, request, strict=True
                )
                if limited and want and locked + want > floor
            ]
        if short and self.holders:
            short.append(f"admitted, not bound yet: {listing(sorted(self.holders))}")
        return "; ".join(short) or None

    def hold(self, key: str, request: Sequence[int], preemptible: bool) -> None:
        """Count a pod admitted earlier that the scheduler has not bound yet."""
        self.take(request, preemptible)
        self.holders.append(key)

    def take(self, request: Sequence[int], preemptible: bool) -> None:
        for i, want in enumerate(request):
            self.taken[i] += want
            if not preemptible:
                self.locked[i] += want


@dataclass(frozen=True, slots=True)
class Admissions:
    """A decision, of one group or of all: the pods whose gate may be lifted now, and why the
    others wait."""

    admitted: tuple[str, ...] = ()
    waiting: dict[str, str] = field(default_factory=dict)
    """Pod key to the reason, for an Event on the pod."""
    waiting_per_group: dict[str, int] = field(default_factory=dict)
    """Only groups where pods wait."""


def admit(group: str, budget: Budget, pods: Sequence[tuple[Pod, Sequence[int]]]) -> Admissions:
    """One group's decision: walk `pods` (with their requests on the group's resources) in
    queue order."""
    admitted: list[str] = []
    waiting: dict[str, str] = {}
    ordered = sorted(pods, key=lambda entry: queue_order(entry[0]))
    for position, (pod, request) in enumerate(ordered):
        why = budget.shortfall(request, pod.preemptible)
        if why is None:
            budget.take(request, pod.preemptible)
            admitted.append(pod.key)
            continue
        waiting[pod.key] = f"waiting for quota: {group} {why}"
        behind = f"waiting for quota: {pod.key} waits first in {group} ({why})"
        waiting.update((later.key, behind) for later, _ in ordered[position + 1 :])
        break
    return Admissions(tuple(admitted), waiting, {group: len(waiting)} if waiting else {})


def admissions(engine: QuotaEngine, *, holding: Collection[str] = ()) -> Admissions:
    """For every group with pods behind the admission gate: which may go now (`admit`).

    `holding`: pods the edge admitted a moment ago. Those the scheduler has not bound yet
    count as taken, also while the watch still shows their gate, so calling this again
    after the edge lifted the gates admits nobody twice. An unbound pod not in `holding`
    counts only once bound.
    """
    store, accounts = engine.store, engine.accounting
    assert not store.tree_dirty
    queues: dict[int, list[Member]] = {}
    for key in store.gated.difference(holding):
        member = store.pods[key]
        queues.setdefault(member.group, []).append(member)
    admitted: list[str] = []
    waiting: dict[str, str] = {}
    counts: dict[str, int] = {}
    for group, queue in queues.items():
        budget = Budget(
            names=accounts.names,
            limited=accounts.has_runtime[group].tolist(),
            runtime=accounts.runtime[group].tolist(),
            taken=accounts.total[group, accounts.block(USED)].tolist(),
            min=accounts.effective_min[group].tolist(),
            locked=accounts.total[group, accounts.block(NP_USED)].tolist(),
        )
        for member in store.members[group]:
            pod = member.pod
            if pod.key in holding and not pod.scheduled:
                budget.hold(pod.key, member.request, pod.preemptible)
        name = accounts.tree.groups[group].name
        decided = admit(name, budget, [(m.pod, m.request) for m in queue])
        admitted += decided.admitted
        waiting.update(decided.waiting)
        counts.update(decided.waiting_per_group)
    return Admissions(tuple(admitted), waiting, counts)


def _q(name: str, amount: int) -> str:
    return format_quantity(name, amount)
