"""Why: the reasons behind a pod's group, label, wait and eviction, and behind a group's runtime.

Read from an engine that has recomputed, in words a user can check against the objects: every
number is a canonical quantity, every rule is the one the engine applied. `kubectl eq explain`
and `elastic-quota simulate --explain` print these lines.

    pod team-a/batch-1
      group: team-a (its label quota.scheduling.koordinator.sh/name names it)
      over-quota: with the 2 more important pods of team-a it needs cpu 1500m; min cpu 1
      reclaim: 1st of 1 pods team-a would lose now (used cpu 2500m, runtime cpu 2)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from .admission import admissions, queue_order
from .engine import QuotaEngine
from .quantities import format_quantity
from .reclaim import reclaim_plan
from .status import GroupStatus

Amounts = Mapping[str, int]


def _shown(amounts: Amounts | None, names: Iterable[str] | None = None) -> str:
    if amounts is None:
        return "unlimited"
    keys = sorted(amounts if names is None else names)
    return ", ".join(f"{k} {format_quantity(k, amounts.get(k, 0))}" for k in keys) or "nothing"


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _add(total: dict[str, int], more: Amounts) -> None:
    for name, amount in more.items():
        total[name] = total.get(name, 0) + amount


@dataclass(frozen=True, slots=True)
class Explanation:
    subject: str
    lines: tuple[str, ...]

    def __str__(self) -> str:
        return "\n".join([self.subject, *(f"  {line}" for line in self.lines)])


def explain_pod(engine: QuotaEngine, key: str) -> Explanation:
    """The pod's group and how it was chosen, its label and why, its wait, its eviction."""
    pod = engine.pod(key)
    if pod is None:
        raise KeyError(f"no pod {key} (or it has finished)")
    catalog = engine.tree.catalog
    found = catalog.membership(pod)
    group = found.group
    lines = [f"group: {group} ({found.how})"]
    if found.problem is not None:
        lines.append(f"problem: {found.problem.field}: {found.problem.message}")
    status = engine.status(group)
    label = engine.capacity_label(key)
    if label is not None:
        lines.append(_standing(engine, key, group, label))
    elif pod.gated:
        lines += _waiting(engine, key, group)
    elif not pod.scheduled:
        lines.append("pending: not bound to a node yet, so it has no capacity label")
    else:
        lines.append(f"no capacity label: {group} is outside quota")
    victims = reclaim_plan(engine).get(group, [])
    if key in victims:
        lines.append(
            f"reclaim: {_ordinal(victims.index(key) + 1)} of {len(victims)} pods {group} would "
            f"lose now (used {_shown(status.used)}, runtime {_shown(status.runtime)})"
        )
    return Explanation(f"pod {key}", tuple(lines))


def _standing(engine: QuotaEngine, key: str, group: str, label: str) -> str:
    """The running sum of the group's scheduled pods up to this one against its effective min."""
    status = engine.status(group)
    running: dict[str, int] = {}
    ahead = 0
    for other, request in engine.group_pods(group):
        if not other.scheduled:
            continue
        _add(running, request)
        if other.key == key:
            break
        ahead += 1
    needs = f"with the {ahead} more important pods of {group} it needs {_shown(running)}"
    minimum = _shown(status.effective_min, status.min)
    if status.effective_min != status.min:
        minimum += f" (scaled down from {_shown(status.min)})"
    over = {
        k: v - status.effective_min.get(k, 0)
        for k, v in running.items()
        if v > status.effective_min.get(k, 0)
    }
    by = f", {_shown(over)} beyond it" if label == "over-quota" and over else ""
    return f"{label}: {needs}; the group's min is {minimum}{by}"


def _waiting(engine: QuotaEngine, key: str, group: str) -> list[str]:
    """Its place in the group's queue, why it waits, and what would let it in."""
    queue = sorted((pod for pod, _ in engine.group_pods(group) if pod.gated), key=queue_order)
    place = [pod.key for pod in queue].index(key) + 1
    reason = admissions(engine).waiting.get(key)
    lines = [f"waiting: {_ordinal(place)} of {len(queue)} behind the admission gate of {group}"]
    if reason is None:
        return [*lines, "it fits now: the operator lifts its gate at its next round"]
    status = engine.status(group)
    needed: dict[str, int] = dict(status.used)
    for pod in queue[:place]:
        _add(needed, engine.pod_request(pod.key))
    runtime = status.runtime or {}
    missing = {k: needed.get(k, 0) - v for k, v in runtime.items() if needed.get(k, 0) > v}
    lines.append(reason)
    if missing:
        lines.append(
            f"to be admitted: {group}'s runtime must grow, or its pods must free, "
            f"{_shown(missing)} (with the pods ahead of it in the queue)"
        )
    return lines


def explain_group(engine: QuotaEngine, name: str) -> Explanation:
    """How the group's runtime was reached, and who lends to it and borrows from it."""
    status = engine.status(name)
    lines = [f"parent: {status.parent or 'none (the root)'}"]
    scaled = status.effective_min != status.min
    lines.append(
        f"min {_shown(status.min)}"
        + (f", scaled down to {_shown(status.effective_min, status.min)}" if scaled else "")
        + f"; max {_shown(status.max)}; shared weight {_shown(status.shared_weight)}"
    )
    lines.append(f"request {_shown(status.request)}; used {_shown(status.used)}")
    if status.runtime is None:
        lines.append("runtime: unlimited (a group without a max takes no part in any split)")
    else:
        lines += [_runtime_line(status, k) for k in sorted(status.runtime)]
    if status.parent is not None:
        lines += _neighbours(engine, name, status.parent)
    return Explanation(f"group {name}", tuple(lines))


def _runtime_line(status: GroupStatus, resource: str) -> str:
    """One resource's runtime, taken apart: min, share of the parent's leftover, the cap."""
    assert status.runtime is not None
    runtime = status.runtime[resource]
    floor = status.effective_min.get(resource, 0)
    asked = status.request.get(resource, 0)
    limit = None if status.max is None else status.max.get(resource)

    def q(amount: int) -> str:
        return format_quantity(resource, amount)

    if runtime < floor:
        return (
            f"runtime {resource} {q(runtime)}: it asks {q(asked)}, less than its min "
            f"{q(floor)}, and lends the rest"
        )
    share = runtime - floor
    text = f"runtime {resource} {q(runtime)} = its min {q(floor)}"
    if share:
        text += f" + {q(share)} of what its parent had left after the mins, shared by weight"
    if runtime == asked and asked > floor:
        text += " (all it asks for)"
    elif limit is not None and runtime == limit:
        text += " (its max)"
    elif runtime < asked:
        text += f"; it asks {q(asked)}: the rest is its siblings' share or their min"
    return text


def _neighbours(engine: QuotaEngine, name: str, parent: str) -> list[str]:
    """Siblings lending idle min, and the ones using above their min (borrowed)."""
    lending: list[str] = []
    borrowing: list[str] = []
    for sibling in engine.statuses():
        if sibling.parent != parent or sibling.runtime is None:
            continue
        idle, above = sibling.lent, sibling.borrowed
        who = "it" if sibling.name == name else sibling.name
        if idle:
            lending.append(f"{who} ({_shown(idle)})")
        if above:
            borrowing.append(f"{who} ({_shown(above)})")
    return [
        f"lending idle min under {parent}: {', '.join(lending) or 'nobody'}",
        f"using above its min (borrowed) under {parent}: {', '.join(borrowing) or 'nobody'}",
    ]
