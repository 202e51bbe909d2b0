"""Every group's status as the edges read it, rebuilt from the accounting and kept to report
only what changed.

A `GroupStatus` is replaced whole, never changed, so another thread (the metrics' scrape) may
read the published statuses while the engine recomputes. Amounts in canonical units; a status
shows the resources its group limits, and any other that is not zero.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from ..model import GroupStatus
from ..numbers import NP_REQUEST, NP_USED, USED, Accounting
from ..tree import DEFAULT, SYSTEM, Group


class Publisher:
    """The last status published of every group, by name."""

    def __init__(self) -> None:
        self._published: dict[str, GroupStatus] = {}

    def status(self, name: str) -> GroupStatus:
        return self._published[name]

    def statuses(self, groups: Iterable[Group]) -> Iterator[GroupStatus]:
        """The statuses of `groups`, in their order (none before they are first published)."""
        published = self._published
        return (status for g in groups if (status := published.get(g.name)) is not None)

    def publish(
        self, groups: Iterable[int], accounts: Accounting, over_quota: Sequence[int]
    ) -> tuple[GroupStatus, ...]:
        """Build the status of `groups` again; return those that differ from the last one."""
        changed = []
        for group in sorted(groups):
            status = group_status(accounts, group, over_quota[group])
            if self._published.get(status.name) != status:
                self._published[status.name] = status
                changed.append(status)
        return tuple(changed)

    def prune(self, accounts: Accounting) -> tuple[str, ...]:
        """Forget the groups the tree of `accounts` no longer has; return their names."""
        removed = tuple(sorted(set(self._published) - {g.name for g in accounts.tree.groups}))
        for name in removed:
            del self._published[name]
        return removed


def group_status(accounts: Accounting, index: int, over_quota: int) -> GroupStatus:
    """One group's settings and computed values."""
    group = accounts.tree.groups[index]
    names = accounts.names
    shown = accounts.request_keys[index]
    total: list[int] = accounts.total[index].tolist()

    def values(row: list[int], keys: list[bool] | None = None) -> dict[str, int]:
        """The resources among `keys`, and any other that is not zero."""
        if keys is None:
            return {name: amount for name, amount in zip(names, row, strict=True) if amount}
        return {
            name: amount
            for name, amount, key in zip(names, row, keys, strict=True)
            if amount or key
        }

    def block(number: int) -> list[int]:
        return total[accounts.block(number)]

    runtime = None
    if index != SYSTEM and not (index == DEFAULT and group.max is None):
        runtime = values(accounts.runtime[index].tolist(), accounts.has_runtime[index].tolist())
    effective_min = accounts.effective_min[index].tolist()
    kept = accounts.kept[index].tolist()
    return GroupStatus(  # the settings are shared, not copied: nothing mutates them
        name=group.name,
        namespace=group.namespace,
        parent=group.parent,
        is_parent=group.is_parent,
        min=group.min,
        max=group.max,
        shared_weight=group.shared_weight,
        request=values(accounts.request[index].tolist(), shown),
        runtime=runtime,
        used=values(block(USED), shown),
        effective_min={
            name: effective_min[names.index(name)] for name in group.min if name in names
        },
        non_preemptible_request=values(block(NP_REQUEST)),
        non_preemptible_used=values(block(NP_USED)),
        over_quota_pods=over_quota,
        tree=group.tree_id,
        # all of its min, the usual case: the min itself, shared as the settings are
        lendable=group.min
        if not any(kept)
        else {name: amount - kept[names.index(name)] for name, amount in group.min.items()},
        borrowing_limit=group.borrowing_limit,
    )
