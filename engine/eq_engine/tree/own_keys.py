"""Checks of the keys that are the product's own, not Koordinator's (`keys.OWN_PREFIX`): the
lending and borrowing limits and the `pools` a group sends its pods to. Of one group alone, as
`checks.own_problems` (which calls these) judges it; each `Problem` names the object, the field
and the numbers.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..model import Problem, Quota, format_quantity, keys
from .catalog import quota_problem

LENDING_FIELD = f"metadata.annotations[{keys.LENDING_LIMIT}]"
BORROWING_FIELD = f"metadata.annotations[{keys.BORROWING_LIMIT}]"


def limit_problems(quota: Quota) -> Iterator[Problem]:
    """A lending limit bounds what of a min is lent, so it names resources of min and is no
    more than the min; a borrowing limit bounds what is borrowed above the min, within max."""
    for name, amount in sorted((quota.lending_limit or {}).items()):
        if amount < 0:
            yield quota_problem(
                quota, LENDING_FIELD, f"{name} {format_quantity(name, amount)} is negative"
            )
        elif name not in quota.min:
            yield quota_problem(
                quota, LENDING_FIELD, f"{name}: the resource is not in spec.min, nothing to lend"
            )
        elif amount > quota.min[name]:
            yield quota_problem(
                quota,
                LENDING_FIELD,
                f"{name} {format_quantity(name, amount)} exceeds spec.min.{name} "
                f"{format_quantity(name, quota.min[name])}: a group lends at most its min",
            )
    for name, amount in sorted((quota.borrowing_limit or {}).items()):
        if amount < 0:
            yield quota_problem(
                quota, BORROWING_FIELD, f"{name} {format_quantity(name, amount)} is negative"
            )
        elif name not in quota.max:
            yield quota_problem(quota, BORROWING_FIELD, f"{name}: the resource is not in spec.max")


POOLS_FIELD = f"metadata.annotations[{keys.POOLS}]"
LABEL_VALUE = 63
"""The longest label value: a pool group's name is its pods' `pool-quota` label."""


def pools_problems(quota: Quota) -> Iterator[Problem]:
    """A group that lists pools holds no pods itself: no min or max of its own, not a parent,
    and each group listed can be named by a pod's label."""
    if not quota.pools:
        return
    if quota.min or quota.max:
        yield quota_problem(
            quota,
            POOLS_FIELD,
            "a group that lists pools has no min or max of its own: its pods are counted in "
            "the group of the pool each goes to; set spec.min and spec.max on those",
        )
    if quota.is_parent:
        yield quota_problem(
            quota, POOLS_FIELD, "a parent group has no pods to send to pools; list them on a leaf"
        )
    for name in quota.pools:
        if name == quota.name:
            yield quota_problem(quota, POOLS_FIELD, f"{name!r} lists itself")
        elif len(name) > LABEL_VALUE:
            yield quota_problem(
                quota,
                POOLS_FIELD,
                f"{name!r} is {len(name)} characters long: a pool group is named by its pods' "
                f"{keys.POOL_QUOTA} label, at most {LABEL_VALUE}",
            )
