"""Preemption inside a group: room made for a more important waiting pod by evicting less
important running pods of the same group (Koordinator's default quota preemption, `canPreempt`
in its elasticquota plugin's preempt.go; Kueue's `withinClusterQueue: LowerPriority`).

The pod (or gang) that holds its group's queue (`admission.Blocked`) may have running pods of
the same group evicted to make exactly its room in the group's runtime: preemptible ones of a
strictly lower priority (a gang only whole, when all its running pods are), lowest priority
first, the most recently started first among equals (Kueue's order), the fewest that make the
room (reclaim's two passes, `reclaim.plan`). Never a pod of another group, of an equal or
higher priority, a non-preemptible one, a DaemonSet's or a mirror pod; nothing at all when even
every candidate would not make the room, or when the waiting pods' non-preemptible part does not
fit the group's min (evictions of preemptible pods free none of it). With a minimum run time, a
candidate younger than it comes last, or is never taken when the minimum is hard. Pods already
leaving count as gone. A gang whose pods disagree on their priority preempts nobody: which of
its priorities counts would be a guess, and the refusal says so.

`preemptions` decides, on a recompute's snapshot and the admission decision taken on it, the
preemption of every group whose queue is held. Each plan holds its own numbers, as a reclaim
plan does (`GroupReclaim`), so the edge may await evictions and plan again after refusals.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

import numpy as np

from ..model import Pod
from ..state import Member, Snapshot, running_units
from .admission import Admissions, Blocked, admissions
from .reclaim import Candidate, GroupReclaim, candidate_of, coverage, is_young


@dataclass(frozen=True, slots=True)
class GroupPreemption:
    """One group's preemption, for the entry that holds its queue."""

    group: str
    preemptor: tuple[str, ...]
    """The waiting pods the room is for (a gang's first `minimum`), by key."""
    gang: str
    """Their gang's `namespace/name`; empty: a single pod."""
    priority: int
    refusal: str = ""
    """Why it preempts nobody although its group may hold candidates (bad input); empty: it
    may."""
    plan: GroupReclaim | None = None
    """The candidates and numbers (`victims(refused, leaving)`): victims only when they make the
    whole room. None: nothing of lower priority may go."""

    @property
    def what(self) -> str:
        """`pod team-a/web-0`, `gang team-a/train (4 pods)`: what waits, as Events say it."""
        if self.gang:
            return f"gang {self.gang} ({len(self.preemptor)} pods)"
        return f"pod {self.preemptor[0]}"

    def victims(
        self, refused: Collection[str] = (), leaving: Collection[str] = ()
    ) -> list[Candidate]:
        """The candidates to evict, in order; none unless together they make the room."""
        return [] if self.plan is None else self.plan.victims(refused, leaving)


def preemptions(
    snapshot: Snapshot,
    decided: Admissions,
    *,
    leaving: Collection[str] = (),
    now: float = 0.0,
    only: str | None = None,
    default: bool = True,
) -> dict[str, GroupPreemption]:
    """Each group whose queue is held by an entry whose only shortfall is its runtime, with its
    preemption decided on this state (`decided`: the admission decision on the same snapshot).
    `now`: for the minimum run time (see the module); `only`: that group's plan alone; `default`:
    whether a group preempts when its `koord-queue/enable-queueunit-preemption` says nothing."""
    plans: dict[str, GroupPreemption] = {}
    index, groups = snapshot.tree.index, snapshot.tree.groups
    for name, blocked in decided.blocked.items():
        if only is not None and name != only:
            continue
        setting = groups[index[name]].queue.preemption
        if not blocked.fits_min or not (default if setting is None else setting):
            continue
        keys = tuple(pod.key for pod in blocked.pods)
        priorities = {pod.priority for pod in blocked.pods}
        if len(priorities) > 1:
            plans[name] = GroupPreemption(
                name, keys, blocked.gang, max(priorities), refusal=_disagree(blocked.pods)
            )
            continue
        (priority,) = priorities
        members = [m for m in snapshot.members[index[name]] if m.pod.scheduled]
        plan = _plan(snapshot, name, blocked, members, priority, set(leaving), now)
        plans[name] = GroupPreemption(name, keys, blocked.gang, priority, plan=plan)
    return plans


def _plan(
    snapshot: Snapshot,
    group: str,
    blocked: Blocked,
    members: Sequence[Member],
    priority: int,
    leaving: set[str],
    now: float,
) -> GroupReclaim | None:
    """The group's candidates below `priority`, least important first, and its numbers with
    the blocked entry's request added: a reclaim of exactly the room the entry needs."""
    going = {m.pod.key for m in members if m.pod.terminating or m.pod.key in leaving}
    covering = coverage(snapshot)
    min_runtime = snapshot.config.reclaim_min_runtime
    hard = snapshot.config.reclaim_min_runtime_hard
    candidates: list[tuple[bool, Candidate]] = []
    for unit in reversed(running_units(m for m in members if m.pod.key not in going)):
        if not all(
            m.pod.preemptible and not m.pod.node_pinned and m.pod.priority < priority for m in unit
        ):
            continue
        young = is_young(unit, now, min_runtime)
        if not (young and hard):
            candidates.append((young, candidate_of(unit, snapshot, covering)))
    if not candidates:
        return None
    candidates.sort(key=lambda entry: entry[0])  # stable: the young ones last
    width = len(blocked.request)
    returned = [m.request for m in members if m.pod.key in going]
    wanted = (
        np.array(blocked.taken, dtype=np.int64)
        + np.array(blocked.request, dtype=np.int64)
        - np.array(returned, dtype=np.int64).reshape(len(returned), width).sum(axis=0)
    )
    status = snapshot.status(group)
    chosen = tuple(candidate for _, candidate in candidates)
    return GroupReclaim(
        group=group,
        used=dict(status.used),
        runtime=dict(status.runtime or {}),
        candidates=chosen,
        remaining=tuple(wanted.tolist()),
        limits=blocked.runtime,
        limited=blocked.limited,
        resources=snapshot.accounts.names,
        allowed={
            name: snapshot.budgets[name].allowed
            for candidate in chosen
            for pod in candidate.pods
            for name in pod.budgets
        },
        whole=True,
    )


def _disagree(pods: Sequence[Pod]) -> str:
    """The refusal of a gang whose pods disagree on their priority, naming each pod's."""
    each = ", ".join(f"{pod.key} {pod.priority}" for pod in sorted(pods, key=lambda p: p.key))
    return (
        f"its pods disagree on their priority (spec.priority: {each}): it preempts nobody; "
        "give its pods one priority class"
    )


def preemption_plan(
    snapshot: Snapshot, *, now: float = 0.0, default: bool = True
) -> dict[str, GroupPreemption]:
    """The groups where a pod that waits first would have pods evicted to make its room now
    (`preemptions` on this snapshot's admission decision), or is refused (`refusal`)."""
    decided = admissions(snapshot)
    return {
        group: planned
        for group, planned in preemptions(snapshot, decided, now=now, default=default).items()
        if planned.refusal or planned.victims()
    }
