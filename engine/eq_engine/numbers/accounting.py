"""The numbers of every group of one tree: request and used bottom-up, runtime top-down.

`Accounting` is built for one tree and its resource columns, and holds int64 arrays indexed by
(group, resource) in the order of `tree.py`. A group's row of sums has four blocks side by
side, each as wide as the columns: request, used, non-preemptible request, non-preemptible used
(`REQUEST`, `USED`, `NP_REQUEST`, `NP_USED`). `count` adds or takes away one pod's share of its
group's own sums; `refresh_requests` sums bottom-up from the groups whose sums moved, and
`refresh_runtime` reruns top-down the splits whose inputs moved (the rules: docs/how-it-works.md,
"The numbers"). Both give exactly the numbers of a sweep over every group. Pure arithmetic:
which pod is in which group is `state.py`'s, and what the numbers are shown as is
`publishing.py`'s.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from ..model import Pod
from ..tree import DEFAULT, ROOT, SYSTEM, Group, Tree
from .integers import Amounts, amount_rows, amounts, present, present_rows
from .runtime import Index, Mask, Runs, scale_min, split

REQUEST, USED, NP_REQUEST, NP_USED = range(4)
"""The four blocks of a group's row of sums: request, used, non-preemptible request/used."""


def columns(tree: Tree, capacity: Mapping[str, int]) -> tuple[str, ...]:
    """The resources the accounting counts, sorted: the cluster's, the pools', and those of
    every min and max (a group may limit a resource no node has yet)."""
    resources = set(capacity)
    for pool in tree.catalog.pools.values():
        resources.update(pool)
    for group in tree.groups:
        resources.update(group.max or (), group.min)
    return tuple(sorted(resources))


class Accounting:
    """Every group's settings and computed values on one tree, by (group, resource)."""

    def __init__(self, tree: Tree, names: tuple[str, ...], *, min_scaling: bool) -> None:
        self.tree = tree
        self.names = names
        self.min_scaling = min_scaling
        groups = tree.groups
        rows = len(groups)

        has_max = present_rows([g.max for g in groups], names)
        bounded = np.array([g.max is not None for g in groups])
        lend = np.array([g.allow_lent for g in groups])
        has_runtime = has_max.copy()
        has_runtime[tree.roots] = True
        has_runtime[SYSTEM] = False
        tree_rows = slice(tree.first_level, rows)
        split_keys = has_max & bounded[:, None]  # a parent's split covers its max keys...
        split_keys[tree.roots] = True  # ...a root's, every resource
        has_runtime[tree_rows] &= split_keys[tree.parent_index[tree_rows]]
        if not bounded[DEFAULT]:
            has_runtime[DEFAULT] = False
        ceiling = has_max & bounded[:, None]
        ceiling[[SYSTEM, DEFAULT]] = False  # their whole request goes up
        order = sorted(range(rows), key=lambda i: groups[i].name)
        tie_rank = np.empty(rows, dtype=np.intp)
        tie_rank[order] = np.arange(rows)
        width = 4 * len(names)

        self.request_keys: list[list[bool]] = has_max.tolist()
        """A pod's request counts on its group's max keys (all of them: unlimited groups)."""
        shapes: dict[tuple[bool, ...], int] = {}
        self.request_shape: list[int] = [
            shapes.setdefault(tuple(keys), len(shapes)) for keys in self.request_keys
        ]
        """The same number for groups of the same `request_keys`: a pod's vector is the same in
        each."""
        self.ceiling: Mask = ceiling
        """Clip to `cap`: bounded groups on their max keys (never the built-ins)."""
        self.max: Amounts = amount_rows([g.max for g in groups], names)
        self.min: Amounts = amount_rows([g.min for g in groups], names)
        self.cap: Amounts = _capped(groups, names, self.min, self.max)
        """What a group's request is clipped to: its max, or its min plus its borrowing limit
        where that is less. Its runtime never exceeds what it asks for, so never this either."""
        self.kept: Amounts = _kept(groups, names, self.min, lend)
        """What of its min a group never lends, whether it uses it or not: its request is
        raised to it. All of it for a group that does not lend, its min less its lending limit
        where it has one, else nothing."""
        self.weight: Amounts = amount_rows([g.shared_weight for g in groups], names)
        self.tie_rank: Index = tie_rank
        self.has_runtime: Mask = has_runtime
        self.own: Amounts = np.zeros((rows, width), dtype=np.int64)
        """Pods bound to the group itself: the four blocks side by side."""
        self.total: Amounts = np.zeros((rows, width), dtype=np.int64)
        """`own` plus what the children pass up."""
        self.passed_up: Amounts = np.zeros((rows, width), dtype=np.int64)
        """Request clipped to max, then used and non-preemptible, unclipped."""
        self.request: Amounts = np.zeros((rows, len(names)), dtype=np.int64)
        self.effective_min: Amounts = self.min.copy()
        self.runtime: Amounts = np.zeros((rows, len(names)), dtype=np.int64)
        self.runtime[DEFAULT] = np.where(has_runtime[DEFAULT], self.max[DEFAULT], 0)
        self.pool: Amounts = np.zeros((rows, len(names)), dtype=np.int64)
        """A root's total, to split: each pool's from its roots' annotation; the default
        tree's (`ROOT`) is set from the cluster's capacity by `refresh_runtime`."""
        self.pooled: Mask = np.zeros((rows, len(names)), dtype=bool)
        """The resources a root's total has at all: the others' mins are never scaled."""
        for root in tree.roots[1:].tolist():
            pool = tree.catalog.pools.get(tree.groups[root].tree_id, {})
            self.pool[root], self.pooled[root] = amounts(pool, names), present(pool, names)
        self._depths: list[int] = tree.depth.tolist()  # plain integers for the sweeps

    def block(self, block: int) -> slice:
        """The columns of one block of a row of sums (`USED`, ...)."""
        width = len(self.names)
        return slice(block * width, (block + 1) * width)

    def count(self, group: int, pod: Pod, request: tuple[int, ...], sign: int = 1) -> None:
        """Add a pod's `request` (on the columns) to its group's own sums; sign -1 takes it
        away. It counts in used once scheduled, in the non-preemptible blocks if it is so."""
        self.add(group, request, pod.scheduled, not pod.preemptible, sign)

    def add(
        self, group: int, request: tuple[int, ...], scheduled: bool, locked: bool, times: int
    ) -> None:
        """`times` pods alike (negative: taken away): `request` each, scheduled or not,
        non-preemptible (`locked`) or not."""
        # Multiplied in int64, as `times` additions of one pod would sum (a Python product of
        # amounts near LIMIT could exceed int64, which numpy refuses to convert).
        self.own[group] += _row(request, scheduled, locked) * times

    def add_all(self, alike: Mapping[tuple[int, tuple[int, ...], bool, bool], int]) -> None:
        """`add` for each (group, request, scheduled, locked) its number of times, at once."""
        if not alike:
            return
        rows = np.array([_row(*key[1:]) for key in alike], dtype=np.int64)
        times = np.fromiter(alike.values(), np.int64, len(alike))
        np.add.at(self.own, [key[0] for key in alike], rows * times[:, None])

    def _by_depth(self, groups: Iterable[int]) -> dict[int, set[int]]:
        depth = self._depths
        found: dict[int, set[int]] = {}
        for group in groups:
            found.setdefault(depth[group], set()).add(group)
        return found

    def refresh_requests(self, dirty: set[int] | None) -> tuple[set[int], set[int]]:
        """Request, used and non-preemptible sums, bottom-up from `dirty` groups (None: all of
        them).

        Returns the groups whose values changed, and the parents whose split must rerun: those
        with a child whose request moved, unless the child stays short of its new and old
        request on every resource that moved. Such a child is never capped in the split's
        rounds either way, so its parent's split gives the same numbers.
        """
        tree = self.tree
        pending = {} if dirty is None else self._by_depth(dirty)
        changed: set[int] = set()
        resplit: set[int] = set()
        request_block = self.block(REQUEST)
        for depth in range(max(len(tree.levels), 1), -1, -1):  # system/default sit at depth 1
            if dirty is None:
                groups = tree.at_depth(depth)
            elif depth in pending:
                groups = np.array(sorted(pending[depth]), dtype=np.intp)
            else:
                continue
            total = self.own[groups]
            rows, starts, owners = tree.children_of(groups)
            if len(rows):
                total[np.searchsorted(groups, owners)] += np.add.reduceat(
                    self.passed_up[rows], starts, axis=0
                )
            if groups[0] == ROOT:  # the root also counts the system and default groups' pods
                total[0] += self.passed_up[SYSTEM] + self.passed_up[DEFAULT]
            request = total[:, request_block]
            request = np.maximum(request, self.kept[groups])
            passed = total.copy()
            passed[:, request_block] = np.where(
                self.ceiling[groups], np.minimum(request, self.cap[groups]), request
            )
            moved = (passed != self.passed_up[groups]).any(axis=1)
            before, after = self.passed_up[groups, request_block], passed[:, request_block]
            short_of_both = self.has_runtime[groups] & (
                self.runtime[groups] < np.minimum(before, after)
            )
            reshares = ((before != after) & ~short_of_both).any(axis=1)
            differs = (
                moved
                | (request != self.request[groups]).any(axis=1)
                | (total != self.total[groups]).any(axis=1)
            )
            self.total[groups], self.request[groups], self.passed_up[groups] = (
                total,
                request,
                passed,
            )
            if dirty is None:
                continue  # everything is recomputed and reported anyway
            changed.update(groups[differs].tolist())
            parents = [p for p in tree.parent_index[groups[moved]].tolist() if p >= 0]
            changed.update(parents)
            if parents:
                pending.setdefault(depth - 1, set()).update(parents)
            resplit.update(p for p in tree.parent_index[groups[reshares]].tolist() if p >= 0)
        if dirty is None:
            return set(range(tree.size)), set(range(tree.size))
        return changed, resplit

    def refresh_runtime(
        self, resplit: set[int], *, capacity: Mapping[str, int], total_changed: bool
    ) -> tuple[set[int], set[int]]:
        """Runtime top-down: reruns the split of the parents in `resplit`, of the
        roots if the total changed (the cluster's `capacity`, or what the system and default
        groups use), and of every parent whose own runtime changes on the way. A pool's root
        has its pool's total; the default tree's root what the pools leave of the cluster's
        (`Catalog.tree_total`) less what the system and default groups use.

        Returns the groups whose runtime or effective min changed, and those among them whose
        effective min changed: their pods' labels follow it.
        """
        tree = self.tree
        used = self.block(USED)
        changed: set[int] = set()
        shifted_min: set[int] = set()
        rerun = self._by_depth(resplit)
        if total_changed:
            left = tree.catalog.tree_total("", capacity)
            scaled_before = self.pooled[ROOT].copy()
            self.pool[ROOT], self.pooled[ROOT] = (
                amounts(left, self.names),
                present(left, self.names),
            )
            if not np.array_equal(scaled_before, self.pooled[ROOT]):
                # The cluster gained or lost a resource (a first node with it, say, with 0 of
                # it): what the root may scale moved, even if its runtime did not.
                rerun.setdefault(0, set()).add(ROOT)
            self.pool[ROOT] -= self.total[SYSTEM, used] + self.total[DEFAULT, used]
            totals = np.maximum(self.pool[tree.roots], 0)
            for root, total in zip(tree.roots.tolist(), totals, strict=True):
                if not np.array_equal(total, self.runtime[root]):
                    self.runtime[root] = total
                    changed.add(root)
                    rerun.setdefault(0, set()).add(root)
        for depth in range(len(tree.levels)):
            if depth not in rerun:
                continue
            parents = np.array(sorted(rerun[depth]), dtype=np.intp)
            rows, starts, owners = tree.children_of(parents)
            if not len(rows):
                continue
            runtime, effective_min = self._shares(
                rows,
                starts,
                owners,
                self.runtime[owners],
                self.passed_up[rows, self.block(REQUEST)],
            )
            shifted = (effective_min != self.effective_min[rows]).any(axis=1)
            moved = (runtime != self.runtime[rows]).any(axis=1) | shifted
            shifted_min.update(rows[shifted].tolist())
            self.runtime[rows], self.effective_min[rows] = runtime, effective_min
            moved_rows = rows[moved].tolist()
            changed.update(moved_rows)
            if moved_rows:  # their own children's split reruns, if they have any
                rerun.setdefault(depth + 1, set()).update(moved_rows)
        return changed, shifted_min

    def _shares(
        self, rows: Index, starts: Index, owners: Index, totals: Amounts, requests: Amounts
    ) -> tuple[Amounts, Amounts]:
        """The runtime and effective min of the children `rows` of `owners` (each owner's
        run starting at `starts`), their parents having `totals` and they asking `requests`
        (as passed up)."""
        runs = Runs.of(starts, len(rows), len(self.names))
        scalable = self.has_runtime[owners] & self.min_scaling
        roots = self.tree.depth[owners] == 0
        scalable[roots] &= self.pooled[owners[roots]]  # a root scales only what its total has
        parent_total = runs.flat(np.where(self.has_runtime[owners], totals, 0))
        effective_min = scale_min(
            total=parent_total,
            scalable=runs.flat(scalable),
            min_=runs.flat(self.min[rows]),
            runs=runs,
        )
        flat_runtime = split(
            total=parent_total,
            request=runs.flat(requests),
            min_=effective_min,
            weight=runs.flat(self.weight[rows]),
            kept=runs.flat(self.kept[rows]),
            tie_rank=runs.per_child(self.tie_rank[rows]),
            runs=runs,
        )
        runtime = np.where(self.has_runtime[rows], runs.matrix(flat_runtime), 0)
        return runtime, runs.matrix(effective_min)

    def runtime_with(self, group: int, more: Amounts) -> Amounts:
        """The group's runtime were it to ask for `more` besides what it asks: its request and
        its ancestors' raised by it, every split on the way down run again. Pure: nothing here
        changes (the gate weighs a pod's place in a group it is not counted in)."""
        path = [group]
        while (parent := int(self.tree.parent_index[path[-1]])) >= 0:
            path.append(parent)
        path.reverse()  # root first
        request_block = self.block(REQUEST)
        passed = self.passed_up[path, request_block].copy()
        asked = self.total[group, request_block] + more  # before its kept min raises it
        for step in range(len(path) - 1, 0, -1):  # bottom-up: what each passes up now
            node = path[step]
            raised = np.maximum(asked, self.kept[node])
            passed[step] = np.where(self.ceiling[node], np.minimum(raised, self.cap[node]), raised)
            parent = path[step - 1]
            asked = (
                self.total[parent, request_block]
                + passed[step]
                - self.passed_up[node, request_block]
            )
        runtime = self.runtime[path[0]]
        for step in range(1, len(path)):  # top-down: the splits on the way
            parent, node = path[step - 1], path[step]
            rows, starts, owners = self.tree.children_of(np.array([parent], dtype=np.intp))
            requests = self.passed_up[rows, request_block].copy()
            requests[rows == node] = passed[step]
            shares, _ = self._shares(rows, starts, owners, runtime[None, :], requests)
            runtime = shares[rows == node][0]
        found: Amounts = runtime
        return found


def _capped(
    groups: Sequence[Group], names: tuple[str, ...], min_: Amounts, max_: Amounts
) -> Amounts:
    """Each group's max, lowered to its min plus its borrowing limit where it has one (the max
    itself, not a copy, where no group has one)."""
    if not any(g.borrowing_limit for g in groups):
        return max_
    limits = [g.borrowing_limit or {} for g in groups]
    limited = present_rows(limits, names)
    return np.where(limited, np.minimum(max_, min_ + amount_rows(limits, names)), max_)


def _kept(groups: Sequence[Group], names: tuple[str, ...], min_: Amounts, lend: Mask) -> Amounts:
    """Each group's min less what it may lend (`Accounting.kept`)."""
    limits = [g.lending_limit or {} for g in groups]
    limited = present_rows(limits, names)
    partly = np.where(limited, np.maximum(min_ - amount_rows(limits, names), 0), 0)
    return np.where(lend[:, None], partly, min_)


@functools.lru_cache(maxsize=4096)
def _row(request: tuple[int, ...], scheduled: bool, locked: bool) -> Amounts:
    """One pod's row of sums: its request in each block it counts in. Shared by the pods of
    a workload (alike), so never changed in place."""
    share = list(request)
    zero = [0] * len(share)
    used = share if scheduled else zero
    blocks = share + used + (share if locked else zero) + (used if locked else zero)
    row = np.array(blocks, dtype=np.int64)
    row.flags.writeable = False
    return row
