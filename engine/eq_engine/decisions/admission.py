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

from collections.abc import Collection, Mapping, Sequence, Set
from dataclasses import dataclass, field

from ..model import LabelSelector, Pod, QueuePolicy, Requeue, listing, queues
from ..numbers import NP_USED, USED
from ..state import Member, Snapshot, gang_minimum, gang_unready
from . import placing
from .queueing import Budget, Cause, Entry, Wait, queue_order, sums


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
    placed: dict[str, str] = field(default_factory=dict)
    """Pod key to the group of its pools it goes to, for the admitted pods that may use several
    (`placing`): the operator labels it and narrows its node affinity to the group's pool."""


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
        request, fixed = sums(core, len(budget.names))
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
                request, fixed = sums(((pod, alone),), len(budget.names))
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
    placed: Mapping[str, str] | None = None,
    selectors: Mapping[str, LabelSelector] | None = None,
) -> Admissions:
    """For every group with pods behind the admission gate: which may go now (`admit`), and
    which pool's group each pod that may use several goes to (`placing`).

    `holding`: pods the edge admitted a moment ago. Those the scheduler has not bound yet
    count as taken, also while the watch still shows their gate, so calling this again
    after the edge lifted the gates admits nobody twice. An unbound pod not in `holding`
    counts only once bound. `requeued`: gangs taken back whole (by key), each waiting until its
    `until` (seconds since the epoch; `now` is the time) without a place in its group's queue.
    `placed`: the group given a moment ago to each held pod of several pools, until the watch
    shows it there. `selectors`: each node pool's node selector, by tree id.
    """
    accounts, pods, gated, gangs_of = (
        snapshot.accounts,
        snapshot.pods,
        snapshot.gated,
        snapshot.gangs,
    )
    pooled = bool(accounts.tree.catalog.pool_lists)  # any group lists pools
    placed = placed or {}
    queued: dict[int, list[Entry]] = {}
    choosing: list[placing.Choosing] = []
    waiting: dict[str, Wait] = {}
    counts: dict[str, int] = {}
    gang_counts: dict[str, int] = {}
    gangs: set[str] = set()

    def enqueue(group: int, entry: Entry) -> None:
        """Into its group's queue, or among those choosing a pool."""
        choice = placing.choice(snapshot, entry, placed, selectors or {}) if pooled else None
        if choice is None:
            queued.setdefault(group, []).append(entry)
        else:
            choosing.append(choice)

    for key in gated - set(holding):
        member = pods[key]
        gang = member.pod.gang
        if gang is None or _admitted(gangs_of[gang.key], gated, pods, holding):
            enqueue(member.group, Entry(((member.pod, member.request),)))
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
                enqueue(member.group, entry)
            else:
                waiting.update((m.pod.key, outside) for m in members)
                names = [accounts.tree.groups[m.group].name for m in members]
                _add(counts, {name: names.count(name) for name in names})
                _add(gang_counts, dict.fromkeys(names, 1))
    budgets: dict[int, tuple[Budget, list[str]]] = {}

    def budget_of(group: int) -> Budget:
        if group not in budgets:
            budgets[group] = _budget(snapshot, group, holding, placed)
        return budgets[group][0]

    admitted: list[str] = []
    blocked: dict[str, Blocked] = {}
    busy: dict[int, str] = {}
    for group, queue in queued.items():
        budget = budget_of(group)
        policy = accounts.tree.groups[group].queue
        name = accounts.tree.groups[group].name
        decided = admit(name, budget, queue, policy, budgets[group][1])
        admitted += decided.admitted
        waiting.update(decided.waiting)
        _add(counts, decided.waiting_per_group)
        _add(gang_counts, decided.gangs_waiting_per_group)
        blocked.update(decided.blocked)
        if decided.waiting and policy.block:
            busy[group] = f"its own {decided.waiting_per_group[name]} waiting pods go first"
    if not choosing:
        return Admissions(tuple(admitted), waiting, counts, gang_counts, blocked)
    chosen = placing.place(choosing, budget_of, accounts, lambda key: pods[key].group, busy)
    admitted += chosen.admitted
    waiting.update(chosen.waiting)
    for choice in choosing:
        entry = choice.entry
        counted = accounts.tree.groups[pods[entry.pods[0][0].key].group].name
        left = sum(pod.key in chosen.waiting for pod, _ in entry.pods)
        _add(counts, {counted: left} if left else {})
        _add(gang_counts, {counted: 1} if entry.gang and left else {})
    return Admissions(tuple(admitted), waiting, counts, gang_counts, blocked, chosen.placed)


def _budget(
    snapshot: Snapshot, group: int, holding: Collection[str], placed: Mapping[str, str]
) -> tuple[Budget, list[str]]:
    """What `group` may still admit, counting the pods admitted a moment ago that are not
    bound yet (those placed in another pool's group count there); and the pods it admitted
    that do not run yet (for `wait-for-pods-running`)."""
    accounts = snapshot.accounts
    name = accounts.tree.groups[group].name
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
        guaranteed=[name in accounts.tree.groups[group].min for name in accounts.names],
    )
    policy = accounts.tree.groups[group].queue
    unstarted = []
    for member in snapshot.members[group]:
        pod = member.pod
        if pod.key in holding and not pod.scheduled:
            if placed.get(pod.key, name) == name:
                budget.hold(pod.key, member.request, pod.preemptible)
                unstarted.append(pod.key)
        elif policy.wait_for_running and pod.scheduled and pod.phase != "Running":
            unstarted.append(pod.key)
    for key, there in placed.items():
        elsewhere = snapshot.pods.get(key)
        if elsewhere is None or there != name or elsewhere.group == group or key not in holding:
            continue
        if not elsewhere.pod.scheduled:
            request = placing.request_in(accounts, elsewhere.pod, group)
            budget.hold(key, request, elsewhere.pod.preemptible)
            unstarted.append(key)
    return budget, unstarted


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
