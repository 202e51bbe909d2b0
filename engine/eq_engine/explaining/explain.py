"""Why: the reasons behind a pod's group, label, wait and eviction (a group's runtime is
`group.py`'s).

Read from a recompute's snapshot, in words a user can check against the objects: every
number is a canonical quantity, every rule is the one the engine applied. `kubectl eq explain`
and `elastic-quota simulate --explain` print these lines.

    pod team-a/batch-1
      group: team-a (its label quota.scheduling.koordinator.sh/name names it)
      over-quota: with the 2 more important pods of team-a it needs cpu 1500m; min cpu 1
      reclaim: 1st of 1 pods team-a would lose now (used cpu 2500m, runtime cpu 2)

A gang's member also says which gang, from which form, its pods against its minimum, and, at
the gate, the gang's request against the room its group has left when its turn comes:

    pod team-a/train-b-0
      gang: team-a/train-b, from annotation gang.scheduling.koordinator.sh/name (Koordinator)
      gang pods: 4 of its minimum 4 exist (annotation ...min-available of team-a/train-b-0, ...)
      waiting: 2nd of 2 places behind the admission gate of team-a (a gang takes one place, ...)
      gang request: cpu 2 for its first 4 pods, all admitted together or none; room in team-a:
        cpu 0 (runtime cpu 2, used 0, admitted ahead of it cpu 2)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..decisions import Admissions, Cause, admissions, preemption_plan, queue_order, reclaims
from ..model import GroupStatus, LabelSelector, Requeue, listing
from ..state import Snapshot
from .views import GangView, gang_view
from .wording import Amounts, Explanation, shown, tree_lines


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _add(total: dict[str, int], more: Amounts) -> None:
    for name, amount in more.items():
        total[name] = total.get(name, 0) + amount


def explain_pod(
    snapshot: Snapshot,
    key: str,
    *,
    requeued: Mapping[str, Requeue] | None = None,
    now: float = 0.0,
    selectors: Mapping[str, LabelSelector] | None = None,
) -> Explanation:
    """The pod's group and how it was chosen, its gang, its label and why, its wait, its
    eviction. `selectors`: each node pool's node selector, by tree id, for a pod that may go
    to several pools (`decisions.admissions`)."""
    pod = snapshot.pod(key)
    if pod is None:
        raise KeyError(f"no pod {key} (or it has finished)")
    catalog = snapshot.tree.catalog
    found = catalog.membership(pod)
    group = found.group
    lines = [f"group: {group} ({found.how})", *tree_lines(snapshot, snapshot.status(group).tree)]
    if found.problem is not None:
        lines.append(f"problem: {found.problem.field}: {found.problem.message}")
    gang = None if pod.gang is None else gang_view(snapshot, pod.gang.key)
    if gang is not None:
        lines += _gang(gang)
    label = snapshot.capacity_label(key)
    if label is not None:
        lines.append(_standing(snapshot, key, group, label))
    elif pod.gated:
        decision = admissions(snapshot, requeued=requeued, now=now, selectors=selectors)
        lines += _choice(snapshot, key, decision) or _waiting(snapshot, key, group, gang, decision)
    elif not pod.scheduled:
        lines.append("pending: not bound to a node yet, so it has no capacity label")
    else:
        lines.append(f"no capacity label: {group} is outside quota")
    lines += _young(snapshot, key, group, now)
    lines += _reclaim(snapshot, key, group, now)
    lines += _preemption(snapshot, key, group, now)
    return Explanation(f"pod {key}", tuple(lines))


def _gang(gang: GangView) -> list[str]:
    """Which gang, from which form; its pods against its minimum; what is wrong with it."""
    lines = [f"gang: {gang.name}, from {gang.source}"]
    count = len(gang.pods)
    if gang.minimum is None:
        lines.append(f"gang pods: {count} exist, and no valid minimum")
    elif count <= gang.minimum:
        lines.append(
            f"gang pods: {count} of its minimum {gang.minimum} exist ({gang.minimum_from})"
        )
    else:
        lines.append(
            f"gang pods: {count} exist, its minimum is {gang.minimum} ({gang.minimum_from}): "
            f"the first {gang.minimum} in queue order go together, the others alone"
        )
    if gang.problem is not None:
        lines.append(f"gang problem: {gang.problem}")
    if gang.admitted:
        lines.append(
            f"gang admitted: {count - len(gang.gated)} of its {count} pods are past the "
            f"admission gate, {gang.bound} bound to nodes; those still behind it go as single "
            "pods"
        )
    return lines


def _standing(snapshot: Snapshot, key: str, group: str, label: str) -> str:
    """The running sum of the group's scheduled pods up to this one against its effective min."""
    status = snapshot.status(group)
    running: dict[str, int] = {}
    ahead = 0
    for other, request in snapshot.group_pods(group):
        if not other.scheduled:
            continue
        _add(running, request)
        if other.key == key:
            break
        ahead += 1
    needs = f"with the {ahead} more important pods of {group} it needs {shown(running)}"
    minimum = shown(status.effective_min, status.min)
    if status.effective_min != status.min:
        minimum += f" (scaled down from {shown(status.min)})"
    over = {
        k: v - status.effective_min.get(k, 0)
        for k, v in running.items()
        if v > status.effective_min.get(k, 0)
    }
    by = f", {shown(over)} beyond it" if label == "over-quota" and over else ""
    return f"{label}: {needs}; the group's min is {minimum}{by}"


@dataclass(frozen=True, slots=True)
class _Place:
    """One place in a group's queue (as `admission.admit` walks it): a pod, or a gang."""

    keys: tuple[str, ...]
    """Its pods: one, or a gang's (in queue order)."""
    core: tuple[str, ...]
    """Those that go together: the pod, or the gang's first `minimum`."""
    gang: str = ""


def _queue(snapshot: Snapshot, group: str) -> list[_Place]:
    """The group's queue: each pod behind the gate, a gang not admitted yet in one place (its
    most important pod's); a gang that cannot be judged yet takes none."""
    places: list[_Place] = []
    seen: set[str] = set()
    gated = sorted((pod for pod, _ in snapshot.group_pods(group) if pod.gated), key=queue_order)
    for pod in gated:
        if pod.gang is not None and pod.gang.key in seen:
            continue
        gang = None if pod.gang is None else gang_view(snapshot, pod.gang.key)
        if gang is None or gang.admitted:  # a member of an admitted gang goes alone
            places.append(_Place((pod.key,), (pod.key,)))
            continue
        seen.add(gang.key)
        if gang.unready is None:
            places.append(_Place(gang.pods, gang.pods[: gang.minimum], gang.name))
    return places


def _choice(snapshot: Snapshot, key: str, decision: Admissions) -> list[str]:
    """For a pod whose group lists pools, before the gate chose one: where the gate sends it
    now, or why none of the pools takes it; nothing for any other pod."""
    pod = snapshot.pod(key)
    assert pod is not None
    home, pools = snapshot.tree.catalog.open_pools(pod)
    if not pools:
        return []
    head = f"waiting: behind the admission gate, for one of {home}'s pools ({', '.join(pools)})"
    if key in decision.placed:
        return [
            head,
            f"it goes to {decision.placed[key]} now: the operator narrows its node affinity to "
            "that pool and lifts the gate at its next round",
        ]
    wait = decision.waiting.get(key)
    return [head, wait.message if wait is not None else "it is not judged yet"]


def _waiting(
    snapshot: Snapshot, key: str, group: str, gang: GangView | None, decision: Admissions
) -> list[str]:
    """Its place in the group's queue, why it waits, and what would let it in."""
    wait = decision.waiting.get(key)
    reason = None if wait is None else wait.message
    if wait is not None and wait.cause is Cause.REQUEUED:
        return [f"waiting, with no place in {group}'s queue meanwhile: {reason}"]
    if gang is not None and not gang.admitted and gang.unready is not None:
        return [
            f"waiting: its gang cannot be judged yet, so it takes no place in {group}'s queue",
            reason or gang.unready,
        ]
    queue = _queue(snapshot, group)
    place = next(i for i, p in enumerate(queue) if key in p.keys)
    lines = [f"waiting: {_ordinal(place + 1)} of {len(queue)} behind the admission gate of {group}"]
    if any(p.gang for p in queue):
        lines[0] = (
            f"waiting: {_ordinal(place + 1)} of {len(queue)} places behind the admission gate "
            f"of {group} (a gang takes one place, its most important pod's)"
        )
    status = snapshot.status(group)
    core = queue[place].core
    together = core if key in core else (*core, key)
    if queue[place].gang and key in core:
        lines.append(_room(snapshot, status, queue, place, set(decision.admitted)))
    elif queue[place].gang:
        lines.append(
            f"beyond the first {len(core)} of its gang: it goes alone, right after them, if "
            "it fits then"
        )
    if reason is None:
        what = (
            f"its gang's {len(core)} pods fit together"
            if key in core and len(core) > 1
            else "it fits now"
        )
        return [*lines, f"{what}: the operator lifts the gate at its next round"]
    needed: dict[str, int] = dict(status.used)
    for ahead in queue[:place]:
        for other in ahead.core:
            _add(needed, snapshot.pod_request(other))
    for other in together:
        _add(needed, snapshot.pod_request(other))
    runtime = status.runtime or {}
    missing = {k: needed.get(k, 0) - v for k, v in runtime.items() if needed.get(k, 0) > v}
    lines.append(reason)
    if missing:
        lines.append(
            f"to be admitted: {group}'s runtime must grow, or its pods must free, "
            f"{shown(missing)} (with the pods ahead of it in the queue)"
        )
    return lines


def _room(
    snapshot: Snapshot,
    status: GroupStatus,
    queue: Sequence[_Place],
    place: int,
    admitted: set[str],
) -> str:
    """A gang's request against the room its group has left when its turn comes: the runtime
    less used and less what the same decision admits ahead of it."""
    request = _summed(snapshot, queue[place].core)
    ahead = _summed(snapshot, [k for p in queue[:place] for k in p.keys if k in admitted])
    count = len(queue[place].core)
    text = (
        f"gang request: {shown(request)} for its first {count} pods, all admitted together "
        f"or none; room in {status.name}: "
    )
    if status.runtime is None:
        return text + "unlimited"
    names = sorted(n for n in request if n in status.runtime)
    room = {n: status.runtime[n] - status.used.get(n, 0) - ahead.get(n, 0) for n in names}
    return (
        text
        + f"{shown(room)} (runtime {shown(status.runtime, names)}, used "
        + f"{shown(status.used, names)}, admitted ahead of it {shown(ahead, names)})"
    )


def _summed(snapshot: Snapshot, keys: Iterable[str]) -> dict[str, int]:
    total: dict[str, int] = {}
    for key in keys:
        _add(total, snapshot.pod_request(key))
    return total


def _young(snapshot: Snapshot, key: str, group: str, now: float) -> list[str]:
    """What the minimum run time (`reclaim_min_runtime`) does for it, while it is young."""
    pod, config = snapshot.pod(key), snapshot.config
    minimum = config.reclaim_min_runtime
    if pod is None or not minimum or not pod.scheduled or not pod.preemptible:
        return []
    age = None if pod.start_time is None else now - pod.start_time
    if age is not None and age >= minimum:
        return []
    ran = "it has not started" if age is None else f"it has run {age:.0f}s"
    if config.reclaim_min_runtime_hard:
        return [
            f"protected: {ran} of the minimum run time {minimum:g}s: reclaim and preemption "
            "never take it before then"
        ]
    return [
        f"young: {ran} of the minimum run time {minimum:g}s: reclaim and preemption take it "
        f"only after every older candidate of {group}"
    ]


def _reclaim(snapshot: Snapshot, key: str, group: str, now: float) -> list[str]:
    """Its place in its group's reclaim plan, if reclaim would evict it now; a gang goes
    whole, in one eviction."""
    plan = reclaims(snapshot, now=now).get(group)
    victims = [] if plan is None else plan.victims()
    taken = next((i for i, v in enumerate(victims) if key in v.keys), None)
    if plan is None or taken is None:
        return []
    numbers = f"used {shown(plan.used)}, runtime {shown(plan.runtime)}"
    if not any(v.gang for v in victims):
        pods = [k for v in victims for k in v.keys]
        return [
            f"reclaim: {_ordinal(pods.index(key) + 1)} of {len(pods)} pods {group} would lose "
            f"now ({numbers})"
        ]
    victim = victims[taken]
    with_gang = (
        f" with its gang {victim.gang}'s {len(victim.keys)} running pods" if victim.gang else ""
    )
    return [
        f"reclaim: {_ordinal(taken + 1)} of {len(victims)} evictions {group} would make now"
        f"{with_gang} (a gang goes whole, as one eviction; {numbers})"
    ]


def _preemption(snapshot: Snapshot, key: str, group: str, now: float) -> list[str]:
    """The pods it would have evicted to make its room, if it waits first in its group; its
    place among them, if it would go for a more important pod."""
    planned = preemption_plan(snapshot, now=now).get(group)
    if planned is None:
        return []
    victims = [k for c in planned.victims() for k in c.keys]
    wants = f"{planned.what} of priority {planned.priority}"
    if key in planned.preemptor and planned.refusal:
        return [f"preemption: none for its {planned.what}: {planned.refusal}"]
    if key in planned.preemptor:
        return [
            f"preemption: {listing(victims)} of lower priority would be evicted now to make "
            f"room in {group} for {wants}, in this order"
        ]
    if key in victims:
        return [
            f"preemption: {_ordinal(victims.index(key) + 1)} of {len(victims)} pods evicted to "
            f"make room in {group} for {wants}"
        ]
    return []
