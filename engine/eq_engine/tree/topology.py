"""The quota tree: who is whose parent, in an order the arithmetic can sweep level by level.

Topology only, no numbers (numbers live in `accounting.py` and `runtime.py`). The tree always
builds: a missing parent, a parent that is a built-in leaf, or a parent cycle puts the group
directly under the root, and each such case is reported as a `Problem`. Koordinator defines
none of these cases; under the root the group still gets its min and a fair share.

Each node pool's tree (its groups carry its `tree-id` label) hangs from a root of its own,
which splits the pool's total (`Catalog.tree_total`) as the root splits the default tree's; a
group belongs to the tree its label names, a pod to its group's. Such a root has no object:
it is named `<root>/<tree id>` (`pool_root`), and a group's parent is sought in its own tree.

Groups are numbered root first, then the system and default groups (which sit outside the
root's split, docs/how-it-works.md), then the pools' roots, then one level after the other;
within a level the children of one parent are contiguous, so a parent's children are a slice
and a level's sums are `reduceat`s.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field, replace

import numpy as np
import numpy.typing as npt

from ..model import EngineConfig, Pod, Problem, QueuePolicy, Quota, ResourceList, keys, queues
from .catalog import PARENT_FIELD, Catalog, build_catalog, quota_problem
from .checks import tree_problems

IndexArray = npt.NDArray[np.intp]

_EMPTY = np.zeros(0, dtype=np.intp)
_ZERO = np.zeros(1, dtype=np.intp)

ROOT, SYSTEM, DEFAULT = 0, 1, 2
"""Indices of the built-in groups."""

_FIRST_POOL_INDEX = 3


def pool_root(config: EngineConfig, tree_id: str) -> str:
    """The name of a tree's root: the root's for the default tree (""), `<root>/<tree id>`
    for a node pool's (no ElasticQuota can be named so)."""
    return f"{config.root_name}/{tree_id}" if tree_id else config.root_name


@dataclass(frozen=True, slots=True)
class Group:
    """A quota group with its settings resolved (defaults applied)."""

    name: str
    namespace: str
    parent: str | None
    """The effective parent's name; `None` for the root."""
    is_parent: bool
    allow_lent: bool
    min: ResourceList
    max: ResourceList | None
    """`None` means no ceiling on any resource (the root and the system group)."""
    shared_weight: ResourceList
    """The weight in the split: the annotation if it has a non-zero value, else `max`."""
    namespaces: tuple[str, ...] = ()
    tree_id: str = ""
    """The quota tree (node pool) it is in; "": the default tree."""
    queue: QueuePolicy = queues.DEFAULT
    """How its gate lets waiting pods go."""
    lending_limit: ResourceList | None = None
    """The most of its min it lends, per resource it names; None: no limit."""
    borrowing_limit: ResourceList | None = None
    """The most its runtime may exceed its min by, per resource it names; None: no limit."""


@dataclass(frozen=True, slots=True)
class Level:
    """The groups at one depth: indices `start:stop`, children of one parent contiguous."""

    start: int
    stop: int
    segment_starts: IndexArray
    """Offsets (from `start`) where each parent's children begin."""
    parents: IndexArray
    """The parent of each segment."""


@dataclass(frozen=True, slots=True)
class Tree:
    groups: tuple[Group, ...]
    index: Mapping[str, int]
    parent_index: IndexArray
    """Parent of each group; -1 for a root. System and default have the root as parent."""
    depth: IndexArray
    """Depth of each group: 0 for the roots, 1 for system, default and the top-level groups."""
    roots: IndexArray
    """The roots: the default tree's (`ROOT`), then each pool's, by tree id."""
    levels: tuple[Level, ...]
    child_start: IndexArray
    child_stop: IndexArray
    """Each group's children in the split are `child_start[g]:child_stop[g]` (empty for a
    leaf); the system and default groups are nobody's children there."""
    catalog: Catalog
    problems: tuple[Problem, ...] = field(default=())
    """The links the tree had to repair (see the module's docstring), and the catalog's."""
    _group_by_labels: dict[tuple[str, tuple[str | None, ...]], int] = field(
        default_factory=dict, compare=False, repr=False
    )
    """The group of the pods of a namespace with the same quota labels, once found without a
    problem: placing every pod again after a change of the tree asks once per workload."""

    @property
    def config(self) -> EngineConfig:
        return self.catalog.config

    @property
    def size(self) -> int:
        return len(self.groups)

    @property
    def first_level(self) -> int:
        """The index of the first group below a root that is not a built-in one."""
        return _FIRST_POOL_INDEX + len(self.roots) - 1

    def at_depth(self, depth: int) -> IndexArray:
        """The groups at `depth`, sorted (1 includes system and default)."""
        if depth == 0:
            return self.roots
        level = self.levels[depth - 1] if depth <= len(self.levels) else None
        span = np.arange(level.start, level.stop) if level else _EMPTY
        return np.r_[[SYSTEM, DEFAULT], span].astype(np.intp) if depth == 1 else span

    def children_of(self, parents: IndexArray) -> tuple[IndexArray, IndexArray, IndexArray]:
        """The children of `parents` (sorted) as one array, where each parent's run starts,
        and the parents that have any: ready for `np.add.reduceat`."""
        if len(parents) == 1:  # the usual case of an incremental update: one slice
            first_one, stop_one = (
                int(self.child_start[parents[0]]),
                int(self.child_stop[parents[0]]),
            )
            if stop_one == first_one:
                return _EMPTY, _EMPTY, _EMPTY
            return np.arange(first_one, stop_one), _ZERO, parents
        first, stop = self.child_start[parents], self.child_stop[parents]
        having = stop > first
        sizes = (stop - first)[having]
        starts = np.cumsum(sizes) - sizes
        rows = np.repeat(first[having] - starts, sizes) + np.arange(int(sizes.sum()))
        return rows, starts, parents[having]

    def group_of(self, pod: Pod) -> tuple[int, Problem | None]:
        """The index of the group a pod belongs to (`Catalog.group_of`), and any problem."""
        alike = (pod.namespace, (*pod.quota_labels, pod.pool_quota))
        found = self._group_by_labels.get(alike)
        if found is not None:
            return found, None
        name, problem = self.catalog.group_of(pod)
        if problem is None:
            self._group_by_labels[alike] = self.index[name]
        return self.index[name], problem


def _weight(quota: Quota) -> ResourceList:
    """The annotation, unless absent or all zero: then `max`, as Koordinator reads it.
    A resource of max that the annotation leaves out weighs its max, as Koordinator's mutating
    webhook fills it in: objects written without that webhook behave the same."""
    weight = quota.shared_weight
    if not weight or not any(weight.values()):
        return dict(quota.max)
    return {**quota.max, **weight}


def build_tree(quotas: Iterable[Quota], config: EngineConfig) -> Tree:
    """The trees of `quotas` plus the built-in groups, and the links it had to repair."""
    catalog = build_catalog(quotas, config)
    problems = list(catalog.problems)
    unique = catalog.quotas
    pool_ids = sorted(
        {q.tree_id for n, q in unique.items() if q.tree_id and not catalog.is_builtin(n)}
    )
    groups = [*_builtin_groups(catalog), *(_pool_root(config, t) for t in pool_ids)]
    problems.extend(_rootless_pools(catalog, pool_ids))
    parents = _resolve_parents(catalog, problems)
    depth = _depths(parents, {g.name for g in groups})
    tree_names = sorted(parents, key=lambda n: depth[n])
    index = {group.name: i for i, group in enumerate(groups)}
    levels: list[Level] = []
    for level_depth in range(1, max(depth.values(), default=0) + 1):
        members = [n for n in tree_names if depth[n] == level_depth]
        members.sort(key=lambda n: (index[parents[n]], n))
        start = len(groups)
        for name in members:
            index[name] = len(groups)
            groups.append(_group(unique[name], parents[name]))
        parent_of = np.array([index[parents[n]] for n in members], dtype=np.intp)
        boundaries = np.flatnonzero(np.r_[True, parent_of[1:] != parent_of[:-1]])
        levels.append(Level(start, len(groups), boundaries, parent_of[boundaries]))

    roots = np.r_[ROOT, np.arange(len(pool_ids)) + _FIRST_POOL_INDEX].astype(np.intp)
    parent_index = np.full(len(groups), -1, dtype=np.intp)
    parent_index[[SYSTEM, DEFAULT]] = ROOT
    depth_index = np.ones(len(groups), dtype=np.intp)
    depth_index[roots] = 0
    child_start = np.zeros(len(groups), dtype=np.intp)
    child_stop = np.zeros(len(groups), dtype=np.intp)
    for level in levels:
        bounds = [*level.segment_starts.tolist(), level.stop - level.start]
        for parent, begin, end in zip(level.parents.tolist(), bounds, bounds[1:], strict=False):
            parent_index[level.start + begin : level.start + end] = parent
            child_start[parent], child_stop[parent] = level.start + begin, level.start + end
    for level_depth, level in enumerate(levels, 1):
        depth_index[level.start : level.stop] = level_depth

    return Tree(
        groups=tuple(groups),
        index=index,
        parent_index=parent_index,
        depth=depth_index,
        roots=roots,
        levels=tuple(levels),
        child_start=child_start,
        child_stop=child_stop,
        catalog=catalog,
        problems=tuple(problems),
    )


def _group(quota: Quota, parent: str) -> Group:
    return Group(
        name=quota.name,
        namespace=quota.namespace,
        parent=parent,
        is_parent=quota.is_parent,
        allow_lent=quota.allow_lent,
        min=quota.min,
        max=quota.max,
        shared_weight=_weight(quota),
        namespaces=quota.namespaces,
        tree_id=quota.tree_id,
        queue=quota.queue,
        lending_limit=quota.lending_limit,
        borrowing_limit=quota.borrowing_limit,
    )


def _pool_root(config: EngineConfig, tree_id: str) -> Group:
    """A node pool's root: unlimited, a parent that never lends, as the default tree's."""
    name = pool_root(config, tree_id)
    return Group(name, config.namespace, None, True, False, {}, None, {}, tree_id=tree_id)


def _rootless_pools(catalog: Catalog, pool_ids: Iterable[str]) -> Iterator[Problem]:
    """A tree whose groups have no root to give it a total, reported on its first group; one
    with several (their totals are summed), on each but the first."""
    for tree_id in pool_ids:
        roots = sorted(n for n, q in catalog.quotas.items() if q.is_root and q.tree_id == tree_id)
        for extra in roots[1:]:
            yield quota_problem(
                catalog.quotas[extra],
                f"metadata.labels[{keys.IS_ROOT}]",
                f"tree {tree_id!r} has {len(roots)} roots ({', '.join(roots)}): its total is "
                "the sum of theirs; one ElasticQuotaProfile per tree id makes one root",
            )
        if tree_id in catalog.pools:
            continue
        first = min(n for n, q in catalog.quotas.items() if q.tree_id == tree_id)
        yield quota_problem(
            catalog.quotas[first],
            f"metadata.labels[{keys.TREE_ID}]",
            f'tree {tree_id!r} has no root (an ElasticQuota labelled {keys.IS_ROOT}: "true" '
            f"with a {keys.TOTAL_RESOURCE} annotation, made from an ElasticQuotaProfile): "
            "its total is 0",
        )


def _builtin_groups(catalog: Catalog) -> list[Group]:
    """Root, system and default. The default group's settings come from its object if any."""
    config = catalog.config
    default = catalog.quotas.get(config.default_name)
    default_min = default.min if default else config.default_min

    def builtin(
        name: str,
        *,
        parent: str | None = config.root_name,
        min: ResourceList | None = None,
        max: ResourceList | None = None,
        namespaces: tuple[str, ...] = (),
    ) -> Group:
        return Group(
            name=name,
            namespace=config.namespace,
            parent=parent,
            is_parent=parent is None,
            allow_lent=parent is not None,
            min=min or {},
            max=max,
            shared_weight={},
            namespaces=namespaces,
        )

    return [
        builtin(config.root_name, parent=None),  # a parent that never lends
        builtin(config.system_name),
        builtin(
            config.default_name,
            min=default_min,
            max=catalog.default_max,
            namespaces=default.namespaces if default else (),
        ),
    ]


def _resolve_parents(catalog: Catalog, problems: list[Problem]) -> dict[str, str]:
    """Each non-built-in group's effective parent, in its own tree: the top-level groups of a
    pool hang from the pool's root; broken links go to the group's tree's root."""
    config = catalog.config
    parents: dict[str, str] = {}
    for name, quota in catalog.quotas.items():
        if catalog.is_builtin(name):
            continue
        top = pool_root(config, quota.tree_id)
        parent = catalog.parent_of(quota)
        fault = catalog.parent_fault(quota)  # two disagreeing labels: `checks.own_problems`
        if fault is not None:
            problems.append(quota_problem(quota, PARENT_FIELD, f"{fault}; {_placed(quota)}"))
            parents[name] = top
        elif parent == config.root_name:
            parents[name] = top
        elif catalog.quotas[parent].tree_id != quota.tree_id:
            for problem in tree_problems(quota, catalog.quotas[parent], subject=quota):
                problems.append(replace(problem, message=f"{problem.message}; {_placed(quota)}"))
            parents[name] = top
        else:
            parents[name] = parent
    _break_cycles(parents, catalog.quotas, config, problems)
    return parents


def _placed(quota: Quota, who: str = "the group") -> str:
    tree = f" of tree {quota.tree_id!r}" if quota.tree_id else ""
    return f"{who} is placed under the root{tree}"


def _break_cycles(
    parents: dict[str, str],
    unique: Mapping[str, Quota],
    config: EngineConfig,
    problems: list[Problem],
) -> None:
    """Put the smallest-named member of each parent cycle under its tree's root."""
    state: dict[str, int] = {}  # 1: on the current path, 2: known to reach a root
    for start in sorted(parents):
        path: list[str] = []
        node = start
        while node in parents and state.get(node) is None:
            state[node] = 1
            path.append(node)
            node = parents[node]
        if node in parents and state[node] == 1:
            cycle = path[path.index(node) :]
            breaker = min(cycle)
            loop = " -> ".join([*cycle, cycle[0]])
            problems.append(
                quota_problem(
                    unique[breaker],
                    PARENT_FIELD,
                    f"parent cycle {loop}; {_placed(unique[breaker], repr(breaker))}",
                )
            )
            parents[breaker] = pool_root(config, unique[breaker].tree_id)
        for member in path:
            state[member] = 2


def _depths(parents: Mapping[str, str], roots: AbstractSet[str]) -> dict[str, int]:
    depth: dict[str, int] = {}

    def of(name: str) -> int:
        chain = []
        while name not in roots and name not in depth:
            chain.append(name)
            name = parents[name]
        level = depth.get(name, 0)
        for member in reversed(chain):
            level += 1
            depth[member] = level
        return level

    for name in parents:
        of(name)
    return depth
