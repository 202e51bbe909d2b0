"""Quota-gated scheduling: which waiting pods of a group may be handed to the scheduler now.

A pod waits behind the admission gate until its group can take it: the group's used, plus what
it has admitted that is not scheduled yet, plus this pod's request fit inside the group's runtime
(on the resources the runtime limits) and, for a non-preemptible pod, inside the group's min.
An admitted pod holds budget until it is bound only while the edge says it was admitted a
moment ago (`admissions(snapshot, holding=...)`): a pod that never schedules (an unbound
volume, a selector no node matches) or that nobody admitted cannot hold its group's budget.
Pods are admitted most important first (priority, then creation time); the first one that does
not fit holds the rest of its group back, so that a large pod is not starved by small ones
behind it. Admitting counts at once: two pods never both take the last unit.

A gang (`gangs.py`) is admitted all or nothing: once at least its minimum of pods exist, its
first `minimum` pods (in queue order) are admitted together if their summed request fits, the
same rule as one pod's; the gang's other pods then go as single pods, as do members created
after it was admitted (any of its pods past the gate and not being deleted: the new pods of a
gang whose pods are all leaving, as after a reclaim, make a gang again). A gang takes one
place in its group's queue, its most important pod's, and holds back what is behind it when it
does not fit. A gang that cannot be judged yet (fewer pods than its minimum, no minimum, pods
in several groups) waits without holding anybody back: it is not ready to run, whatever the
room.
"""

from __future__ import annotations

import enum
from collections.abc import Collection, Mapping, Sequence, Set
from dataclasses import dataclass, field

from ..model import Pod, QueuePolicy, Requeue, format_quantity, listing, queues
from ..numbers import NP_USED, USED
from ..state import Member, Snapshot, gang_minimum, gang_unready


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

    def shortfall(self, request: Sequence[int], fixed: Sequence[int], what: str) -> str | None:
        """Why `request` (of which `fixed` is non-preemptible) does not fit now; None: it fits.
        `what` names what asks ("this pod", "gang team-a/job's 4 pods")."""
        short = [
            f"runtime {name} {_q(name, limit)}, used or admitted {_q(name, taken)}, "
            f"{what} {_q(name, want)}"
            for name, limited, limit, taken, want in zip(
                self.names, self.limited, self.runtime, self.taken, request, strict=True
            )
            if limited and want and taken + want > limit
        ]
        short += [
            f"min {name} {_q(name, floor)}, "
            f"non-preemptible used or admitted {_q(name, locked)}, {what} {_q(name, want)}"
            for name, limited, floor, locked, want in zip(
                self.names, self.limited, self.min, self.locked, fixed, strict=True
            )
            if limited and want and locked + want > floor
        ]
        if short and self.holders:
            short.append(f"admitted, not bound yet: {listing(sorted(self.holders))}")
        return "; ".join(short) or None

    def hold(self, key: str, request: Sequence[int], preemptible: bool) -> None:
        """Count a pod admitted earlier that the scheduler has not bound yet."""
        self.take(request, request if not preemptible else [0] * len(request))
        self.holders.append(key)

    def take(self, request: Sequence[int], fixed: Sequence[int]) -> None:
        for i, want in enumerate(request):
            self.taken[i] += want
            self.locked[i] += fixed[i]


class Cause(enum.Enum):
    """What a pod behind the gate waits for."""

    QUOTA = "waiting for quota"
    """Room in its group: the pod (or its gang, or a pod ahead of it) does not fit now."""
    GANG = "waiting"
    """Its gang, which cannot be judged yet (too few pods, no minimum, several groups)."""
    REQUEUED = "requeued"
    """Its gang's backoff: taken back whole for not starting in time (`requeue`)."""


@dataclass(frozen=True, slots=True)
class Wait:
    """Why one pod waits: its cause, and the numbers or the gang that make it wait."""

    cause: Cause
    detail: str

    @property
    def message(self) -> str:
        """As the pod's Event says it: `waiting for quota: team-a needs cpu 500m more ...`."""
        return f"{self.cause.value}: {self.detail}"


@dataclass(frozen=True, slots=True)
class Blocked:
    """The first entry of a group's queue that does not fit, and its group's budget as that
    entry found it (every entry before it admitted): what a preemption would make room for."""

    pods: tuple[Pod, ...]
    """The entry's pods that go together: a pod, or a gang's first `minimum`."""
    gang: str
    """The gang's `namespace/name`; empty: a single pod."""
    request: tuple[int, ...]
    taken: tuple[int, ...]
    """The group's used plus what is admitted and not bound yet, per resource."""
    runtime: tuple[int, ...]
    limited: tuple[bool, ...]
    fits_min: bool
    """Its non-preemptible pods fit inside the group's min: only its runtime is short."""


@dataclass(frozen=True, slots=True)
class Admissions:
    """A decision, of one group or of all: the pods whose gate may be lifted now, and why the
    others wait."""

    admitted: tuple[str, ...] = ()
    waiting: dict[str, Wait] = field(default_factory=dict)
    """Pod key to why it waits, for an Event on the pod."""
    waiting_per_group: dict[str, int] = field(default_factory=dict)
    """Only groups where pods wait."""
    gangs_waiting_per_group: dict[str, int] = field(default_factory=dict)
    """Only groups where gangs wait (each gang once, whatever its pods)."""
    blocked: dict[str, Blocked] = field(default_factory=dict)
    """By group: the entry that holds its queue (`decisions.preemption` reads it)."""


@dataclass(frozen=True, slots=True)
class Entry:
    """One place in a group's queue: a pod, or the pods of a gang not admitted yet (in queue
    order), of which the first `minimum` go together."""

    pods: tuple[tuple[Pod, Sequence[int]], ...]
    gang: str = ""
    """The gang's `namespace/name`; empty: a single pod."""
    minimum: int = 1

    @property
    def order(self) -> tuple[int, float, str]:
        return queue_order(self.pods[0][0])


def admit(
    group: str,
    budget: Budget,
    entries: Sequence[Entry],
    policy: QueuePolicy = queues.DEFAULT,
    unstarted: Sequence[str] = (),
) -> Admissions:
    """One group's decision: walk its queue's `entries` in order, as its `policy` says
    (`model.queues`); `unstarted`: the pods it admitted that do not run yet."""
    ordered = sorted(entries, key=lambda entry: entry.order)
    if policy.wait_for_running and unstarted:
        held = Wait(
            Cause.QUOTA,
            f"{group} lets the next pod go once those it admitted run "
            f"({queues.WAIT_FOR_PODS_RUNNING}): {listing(sorted(unstarted))} not Running yet",
        )
        return _all_waiting(group, ordered, held)
    admitted: list[str] = []
    waiting: dict[str, Wait] = {}
    gangs = 0
    blocked: Blocked | None = None
    depth = len(ordered) if policy.max_depth < 0 else policy.max_depth
    for position, entry in enumerate(ordered):
        if position == depth:
            beyond = Wait(
                Cause.QUOTA,
                f"beyond the first {depth} places of {group}'s queue, all it looks at "
                f"({queues.MAX_DEPTH})",
            )
            rest = _all_waiting(group, ordered[position:], beyond)
            waiting.update(rest.waiting)
            gangs += sum(rest.gangs_waiting_per_group.values())
            break
        core, extra = entry.pods[: entry.minimum], entry.pods[entry.minimum :]
        request, fixed = _sums(core, len(budget.names))
        what = (
            f"gang {entry.gang} ({len(entry.pods)} pods seen, minimum {entry.minimum})"
            if entry.gang
            else "this pod"
        )
        why = budget.shortfall(request, fixed, what)
        if why is None:
            budget.take(request, fixed)
            admitted += (pod.key for pod, _ in core)
            for pod, alone in extra:  # beyond the minimum: as single pods
                request, fixed = _sums(((pod, alone),), len(budget.names))
                more = budget.shortfall(request, fixed, "this pod")
                if more is None:
                    budget.take(request, fixed)
                    admitted.append(pod.key)
                else:
                    waiting[pod.key] = Wait(Cause.QUOTA, f"{group} {more}")
            continue
        if blocked is None:
            blocked = _blocked(entry, core, request, fixed, budget)
        short = Wait(Cause.QUOTA, f"{group} {why}")  # one value, shared by the entry's pods
        waiting.update((pod.key, short) for pod, _ in entry.pods)
        gangs += bool(entry.gang)
        if not policy.block:  # Priority: a later entry that fits may pass
            continue
        ahead = f"gang {entry.gang}" if entry.gang else core[0][0].key
        behind = Wait(Cause.QUOTA, f"{ahead} waits first in {group} ({why})")
        rest = _all_waiting(group, ordered[position + 1 :], behind)
        waiting.update(rest.waiting)
        gangs += sum(rest.gangs_waiting_per_group.values())
        break
    return Admissions(
        tuple(admitted),
        waiting,
        {group: len(waiting)} if waiting else {},
        {group: gangs} if gangs else {},
        {group: blocked} if blocked is not None else {},
    )


def _blocked(
    entry: Entry,
    core: Sequence[tuple[Pod, Sequence[int]]],
    request: Sequence[int],
    fixed: Sequence[int],
    budget: Budget,
) -> Blocked:
    """The first entry that does not fit, and its group's budget as it found it."""
    fits_min = all(
        not limited or locked + want <= floor
        for limited, locked, want, floor in zip(
            budget.limited, budget.locked, fixed, budget.min, strict=True
        )
    )
    return Blocked(
        tuple(pod for pod, _ in core),
        entry.gang,
        tuple(request),
        tuple(budget.taken),
        tuple(budget.runtime),
        tuple(budget.limited),
        fits_min,
    )


def _all_waiting(group: str, entries: Sequence[Entry], wait: Wait) -> Admissions:
    """Every pod of `entries` waiting for the same reason."""
    waiting = {pod.key: wait for entry in entries for pod, _ in entry.pods}
    gangs = sum(bool(entry.gang) for entry in entries)
    return Admissions(
        (), waiting, {group: len(waiting)} if waiting else {}, {group: gangs} if gangs else {}
    )


def admissions(
    snapshot: Snapshot,
    *,
    holding: Collection[str] = (),
    requeued: Mapping[str, Requeue] | None = None,
    now: float = 0.0,
) -> Admissions:
    """For every group with pods behind the admission gate: which may go now (`admit`).

    `holding`: pods the edge admitted a moment ago. Those the scheduler has not bound yet
    count as taken, also while the watch still shows their gate, so calling this again
    after the edge lifted the gates admits nobody twice. An unbound pod not in `holding`
    counts only once bound. `requeued`: gangs taken back whole (by key), each waiting until its
    `until` (seconds since the epoch; `now` is the time) without a place in its group's queue.
    """
    accounts, pods, gated, gangs_of = (
        snapshot.accounts,
        snapshot.pods,
        snapshot.gated,
        snapshot.gangs,
    )
    members_of = snapshot.members
    queued: dict[int, list[Entry]] = {}
    waiting: dict[str, Wait] = {}
    counts: dict[str, int] = {}
    gang_counts: dict[str, int] = {}
    gangs: set[str] = set()
    for key in gated - set(holding):
        member = pods[key]
        gang = member.pod.gang
        if gang is None or _admitted(gangs_of[gang.key], gated, pods, holding):
            queued.setdefault(member.group, []).append(Entry(((member.pod, member.request),)))
        elif gang.key not in gangs:
            gangs.add(gang.key)
            members = sorted(
                (m for k in gangs_of[gang.key] if not (m := pods[k]).pod.terminating),
                key=lambda m: queue_order(m.pod),
            )
            unready = gang_unready(snapshot, gang.key, members)
            requeue = (requeued or {}).get(gang.key)
            outside: Wait | None = None  # the whole gang waits without a place in the queue
            if unready is not None:
                outside = Wait(Cause.GANG, unready)
            elif requeue is not None and requeue.until > now:
                outside = Wait(Cause.REQUEUED, _backing_off(gang.name, requeue))
            if outside is None:
                entry = Entry(
                    tuple((m.pod, m.request) for m in members),
                    gang.name,
                    gang_minimum(snapshot, gang.key, members) or 1,
                )
                queued.setdefault(member.group, []).append(entry)
            else:
                waiting.update((m.pod.key, outside) for m in members)
                names = [accounts.tree.groups[m.group].name for m in members]
                _add(counts, {name: names.count(name) for name in names})
                _add(gang_counts, dict.fromkeys(names, 1))
    admitted: list[str] = []
    blocked: dict[str, Blocked] = {}
    for group, queue in queued.items():
        budget = Budget(
            names=accounts.names,
            limited=accounts.has_runtime[group].tolist(),
            runtime=accounts.runtime[group].tolist(),
            taken=accounts.total[group, accounts.block(USED)].tolist(),
            # Koordinator's check: the min as written. The scaled one shrinks with a lending
            # parent's runtime while its other children are idle, and would hold back the
            # very group that wants its guarantee.
            min=accounts.min[group].tolist(),
            locked=accounts.total[group, accounts.block(NP_USED)].tolist(),
        )
        policy = accounts.tree.groups[group].queue
        unstarted = []
        for member in members_of[group]:
            pod = member.pod
            if pod.key in holding and not pod.scheduled:
                budget.hold(pod.key, member.request, pod.preemptible)
                unstarted.append(pod.key)
            elif policy.wait_for_running and pod.scheduled and pod.phase != "Running":
                unstarted.append(pod.key)
        name = accounts.tree.groups[group].name
        decided = admit(name, budget, queue, policy, unstarted)
        admitted += decided.admitted
        waiting.update(decided.waiting)
        _add(counts, decided.waiting_per_group)
        _add(gang_counts, decided.gangs_waiting_per_group)
        blocked.update(decided.blocked)
    return Admissions(tuple(admitted), waiting, counts, gang_counts, blocked)


def _admitted(
    gang: Set[str], gated: Set[str], pods: Mapping[str, Member], holding: Collection[str]
) -> bool:
    """Whether any pod of the gang is past the gate (or was admitted a moment ago) and not
    leaving: the pods of a gang being deleted (reclaimed whole, say) do not make the gang's
    new pods single pods; those are admitted together again."""
    return any((k not in gated or k in holding) and not pods[k].pod.terminating for k in gang)


def _backing_off(gang: str, requeue: Requeue) -> str:
    """`gang team-a/train, 2 times for not starting in time: not admitted before
    2026-12-05T08:10:00Z`."""
    times = "once" if requeue.times == 1 else f"{requeue.times} times"
    return (
        f"gang {gang}, {times} for not starting in time: not admitted again before "
        f"{requeue.until_text}"
    )


def _add(tally: dict[str, int], more: dict[str, int]) -> None:
    for name, n in more.items():
        tally[name] = tally.get(name, 0) + n


def _sums(pods: Sequence[tuple[Pod, Sequence[int]]], width: int) -> tuple[list[int], list[int]]:
    """The summed request of `pods`, and of the non-preemptible ones among them."""
    request, fixed = [0] * width, [0] * width
    for pod, amounts in pods:
        for i, want in enumerate(amounts):
            request[i] += want
            if not pod.preemptible:
                fixed[i] += want
    return request, fixed


def _q(name: str, amount: int) -> str:
    return format_quantity(name, amount)
