"""Why a group's runtime is what it is: its min, what its parent had left and its weight, its
caps, what its limits hold back, and who lends to it and borrows from it."""

from __future__ import annotations

from ..model import GroupStatus, format_quantity, keys
from ..state import Snapshot
from .wording import Explanation, shown, tree_lines


def explain_group(snapshot: Snapshot, name: str) -> Explanation:
    """How the group's runtime was reached, and who lends to it and borrows from it."""
    status = snapshot.status(name)
    lines = [f"parent: {status.parent or 'none (the root)'}", *tree_lines(snapshot, status.tree)]
    scaled = status.effective_min != status.min
    lines.append(
        f"min {shown(status.min)}"
        + (f", scaled down to {shown(status.effective_min, status.min)}" if scaled else "")
        + f"; max {shown(status.max)}; shared weight {shown(status.shared_weight)}"
    )
    lines += _limit_lines(status)
    lines.append(f"request {shown(status.request)}; used {shown(status.used)}")
    if status.runtime is None:
        lines.append("runtime: unlimited (a group without a max takes no part in any split)")
    else:
        lines += [_runtime_line(status, k) for k in sorted(status.runtime)]
    if status.parent is not None:
        lines += _neighbours(snapshot, name, status.parent)
    return Explanation(f"group {name}", tuple(lines))


def _limit_lines(status: GroupStatus) -> list[str]:
    """What its lending and borrowing limits (or `allow-lent-resource: "false"`) hold back."""
    lines = []
    kept = {r: status.min[r] - lent for r, lent in status.lendable.items() if lent < status.min[r]}
    if kept:
        lines.append(
            f"keeps {shown(kept)} of its min whether it asks for it or not: it lends at most "
            f"{shown(status.lendable, kept)}"
        )
    if status.borrowing_limit:
        lines.append(
            f"borrows at most {shown(status.borrowing_limit)} above its min "
            f"({keys.BORROWING_LIMIT})"
        )
    return lines


def _runtime_line(status: GroupStatus, resource: str) -> str:
    """One resource's runtime, taken apart: min, share of the parent's leftover, the cap."""
    assert status.runtime is not None
    runtime = status.runtime[resource]
    floor = status.effective_min.get(resource, 0)
    asked = status.request.get(resource, 0)
    limit = None if status.max is None else status.max.get(resource)
    borrowing = (status.borrowing_limit or {}).get(resource)
    capped = borrowing is not None and runtime == status.min.get(resource, 0) + borrowing

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
    elif capped:
        text += " (its min plus its borrowing limit)"
    elif runtime < asked:
        text += f"; it asks {q(asked)}: the rest is its siblings' share or their min"
    return text


def _neighbours(snapshot: Snapshot, name: str, parent: str) -> list[str]:
    """Siblings lending idle min, and the ones using above their min (borrowed)."""
    lending: list[str] = []
    borrowing: list[str] = []
    for sibling in snapshot.statuses():
        if sibling.parent != parent or sibling.runtime is None:
            continue
        idle, above = sibling.lent, sibling.borrowed
        who = "it" if sibling.name == name else sibling.name
        if idle:
            lending.append(f"{who} ({shown(idle)})")
        if above:
            borrowing.append(f"{who} ({shown(above)})")
    return [
        f"lending idle min under {parent}: {', '.join(lending) or 'nobody'}",
        f"using above its min (borrowed) under {parent}: {', '.join(borrowing) or 'nobody'}",
    ]
