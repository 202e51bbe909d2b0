"""The quota tree: who is whose parent, in an order the arithmetic can sweep level by level.

Topology only, no numbers (numbers live in `accounting.py` and `runtime.py`). The tree always
builds: a missing parent, a parent that is a built-in leaf, or a parent cycle puts the group
directly under the root, and each such case is reported as a `Problem`. Koordinator defines
none of these cases; under the root the group still gets its min and a fair share.

Groups are numbered root first, then the system and default groups (which sit outside the
root's split, DESIGN.md), then one level after the other; within a level the children of one
parent are contiguous, so a parent's children are a slice and a level's sums are `reduceat`s.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from . import keys
from .config import EngineConfig
from .objects import Pod, Quota
from .problems import Problem
from .quantities import ResourceList, format_quantity

IndexArray = npt.NDArray[np.intp]

ROOT, SYSTEM, DEFAULT = 0, 1, 2
"""Indices of the built-in groups."""

_FIRST_TREE_INDEX = 3


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
    """Parent of each group; -1 for the root. System and default have the root as parent."""
    depth: IndexArray
    """Depth of each group: 0 for the root, 1 for system, default and the top-level groups."""
    levels: tuple[Level, ...]
    child_start: IndexArray
    child_stop: IndexArray
    """Each group's children in the split are `child_start[g]:child_stop[g]` (empty for a
    leaf); the system and default groups are nobody's children there."""
    namespace_group: Mapping[str, int]
    """Namespace to the group its unlabelled pods belong to (rules 2 to 4 of `group_of`)."""
    config: EngineConfig
    problems: tuple[Problem, ...] = field(default=())

    @property
    def size(self) -> int:
        return len(self.groups)

    def span(self, depth: int) -> tuple[int, int]:
        """The indices `low, high` of the groups at `depth` (1 includes system and default)."""
        if depth == 0:
            return ROOT, ROOT + 1
        if depth == 1:
            return SYSTEM, self.levels[0].stop if self.levels else _FIRST_TREE_INDEX
        level = self.levels[depth - 1]
        return level.start, level.stop

    def has_children(self, index: int) -> bool:
        return bool(self.child_stop[index] > self.child_start[index])

    def children_of(self, parents: IndexArray) -> tuple[IndexArray, IndexArray, IndexArray]:
        """The children of `parents` (sorted) as one array, where each parent's run starts,
        and the parents that have any: ready for `np.add.reduceat`."""
        first, stop = self.child_start[parents], self.child_stop[parents]
        having = stop > first
        sizes = (stop - first)[having]
        starts = np.cumsum(sizes) - sizes
        rows = np.repeat(first[having] - starts, sizes) + np.arange(int(sizes.sum()))
        return rows, starts, parents[having]

    def ancestors(self, index: int) -> Iterable[int]:
        """`index`'s parent, grandparent, ..., the root."""
        parent = int(self.parent_index[index])
        while parent >= 0:
            yield parent
            parent = int(self.parent_index[parent])

    def group_of(self, pod: Pod) -> tuple[int, Problem | None]:
        """The group a pod belongs to (DESIGN.md), and a problem if its label misleads.

        System namespaces first, then the pod's label, then the namespace's group (an
        ElasticQuota named like the namespace, else one listing it in its `namespaces`
        annotation, else the only ElasticQuota there), else the default group.
        """
        if pod.namespace in self.config.system_namespaces:
            return SYSTEM, None
        label, seed_label = pod.quota_labels
        problem = None
        if label and seed_label and label != seed_label:
            problem = _pod_problem(
                pod,
                keys.POD_QUOTA,
                f"disagrees with {keys.POD_QUOTA_SEED} ({seed_label!r}); {label!r} is used",
            )
        name = label or seed_label
        if name:
            found = self.index.get(name)
            if found is None:
                return DEFAULT, _pod_problem(
                    pod,
                    keys.POD_QUOTA,
                    f"names no ElasticQuota ({name!r}); the default group is used",
                )
            if found == ROOT or self.groups[found].is_parent:
                problem = _pod_problem(
                    pod, keys.POD_QUOTA, f"names a parent group ({name!r}); pods belong in leaves"
                )
            return found, problem
        return self.namespace_group.get(pod.namespace, DEFAULT), problem


def _pod_problem(pod: Pod, label: str, message: str) -> Problem:
    return Problem("Pod", pod.key, f"metadata.labels[{label}]", message)


def _quota_problem(quota: Quota, field: str, message: str) -> Problem:
    return Problem("ElasticQuota", quota.ref, field, message)


def _negative_amounts(quota: Quota) -> Iterable[Problem]:
    """Negative amounts count as 0; Kubernetes quantities may be negative, quotas may not."""
    fields = {
        "spec.min": quota.min,
        "spec.max": quota.max,
        f"metadata.annotations[{keys.SHARED_WEIGHT}]": quota.shared_weight or {},
    }
    for path, resources in fields.items():
        for name, amount in sorted(resources.items()):
            if amount < 0:
                yield _quota_problem(
                    quota,
                    f"{path}.{name}" if path.startswith("spec") else path,
                    f"{format_quantity(name, amount)} is negative; 0 is used",
                )


def _weight(quota: Quota) -> ResourceList:
    """The annotation, unless absent or all zero: then `max` (koordinator-semantics.md 2.6)."""
    weight = quota.shared_weight
    return dict(quota.max) if not weight or not any(weight.values()) else weight


def build_tree(quotas: Iterable[Quota], config: EngineConfig) -> Tree:
    """The tree of `quotas` plus the built-in groups, and what is wrong with it."""
    problems: list[Problem] = []
    unique: dict[str, Quota] = {}
    for quota in sorted(quotas, key=lambda q: (q.name, q.namespace)):
        if quota.name in unique:
            problems.append(
                _quota_problem(
                    quota,
                    "metadata.name",
                    (
                        f"another ElasticQuota has this name ({unique[quota.name].ref}); names are "
                        "unique cluster-wide, this one is ignored"
                    ),
                )
            )
        else:
            unique[quota.name] = quota

    for quota in unique.values():
        problems.extend(_negative_amounts(quota))
    builtins = _builtin_groups(unique, config)
    parents = _resolve_parents(unique, config, problems)
    depth = _depths(parents, config.root_name)
    tree_names = sorted(parents, key=lambda n: depth[n])
    groups = list(builtins)
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

    parent_index = np.full(len(groups), -1, dtype=np.intp)
    parent_index[[SYSTEM, DEFAULT]] = ROOT
    depth_index = np.ones(len(groups), dtype=np.intp)
    depth_index[ROOT] = 0
    child_start = np.zeros(len(groups), dtype=np.intp)
    child_stop = np.zeros(len(groups), dtype=np.intp)
    for level in levels:
        bounds = [*level.segment_starts.tolist(), level.stop - level.start]
        for parent, begin, end in zip(level.parents.tolist(), bounds, bounds[1:], strict=False):
            parent_index[level.start + begin : level.start + end] = parent
            child_start[parent], child_stop[parent] = level.start + begin, level.start + end
    for level_depth, level in enumerate(levels, 1):
        depth_index[level.start : level.stop] = level_depth

    for name, quota in unique.items():
        parent = parents.get(name)
        if parent and parent != config.root_name and not unique[parent].is_parent:
            problems.append(
                _quota_problem(
                    quota,
                    f"metadata.labels[{keys.PARENT}]",
                    f"parent {parent!r} is not a parent group "
                    f'(label {keys.IS_PARENT} is not "true")',
                )
            )
    return Tree(
        groups=tuple(groups),
        index=index,
        parent_index=parent_index,
        depth=depth_index,
        levels=tuple(levels),
        child_start=child_start,
        child_stop=child_stop,
        namespace_group=_namespace_groups(groups, index, problems, unique),
        config=config,
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
    )


def _builtin_groups(unique: Mapping[str, Quota], config: EngineConfig) -> list[Group]:
    """Root, system and default. The default group's settings come from its object if any."""
    default = unique.get(config.default_name)
    default_min = default.min if default else config.default_min
    default_max = default.max if default and default.max else config.default_max

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
            max=default_max,
            namespaces=default.namespaces if default else (),
        ),
    ]


def _resolve_parents(
    unique: dict[str, Quota], config: EngineConfig, problems: list[Problem]
) -> dict[str, str]:
    """Each non-built-in group's effective parent; broken links go to the root."""
    root = config.root_name
    parents: dict[str, str] = {}
    for name, quota in unique.items():
        if name in config.builtin_names:
            continue
        field = f"metadata.labels[{keys.PARENT}]"
        label, seed_label = quota.parent_labels
        if label and seed_label and label != seed_label:
            problems.append(
                _quota_problem(
                    quota,
                    field,
                    (f"disagrees with {keys.PARENT_SEED} ({seed_label!r}); {label!r} is used"),
                )
            )
        parent = quota.parent
        if parent in ("", "root", root):
            parents[name] = root
        elif parent in config.builtin_names or parent not in unique:
            what = (
                "is a built-in group that cannot have children"
                if parent in unique or (parent in config.builtin_names)
                else "does not exist"
            )
            problems.append(
                _quota_problem(
                    quota, field, f"parent {parent!r} {what}; the group is placed under the root"
                )
            )
            parents[name] = root
        else:
            parents[name] = parent
    _break_cycles(parents, unique, root, problems)
    return parents


def _break_cycles(
    parents: dict[str, str], unique: Mapping[str, Quota], root: str, problems: list[Problem]
) -> None:
    """Put the smallest-named member of each parent cycle under the root."""
    state: dict[str, int] = {}  # 1: on the current path, 2: known to reach the root
    for start in sorted(parents):
        path: list[str] = []
        node = start
        while node != root and state.get(node) is None:
            state[node] = 1
            path.append(node)
            node = parents[node]
        if node != root and state[node] == 1:
            cycle = path[path.index(node) :]
            breaker = min(cycle)
            loop = " -> ".join([*cycle, cycle[0]])
            problems.append(
                _quota_problem(
                    unique[breaker],
                    f"metadata.labels[{keys.PARENT}]",
                    (f"parent cycle {loop}; {breaker!r} is placed under the root"),
                )
            )
            parents[breaker] = root
        for member in path:
            state[member] = 2


def _depths(parents: Mapping[str, str], root: str) -> dict[str, int]:
    depth: dict[str, int] = {}

    def of(name: str) -> int:
        chain = []
        while name != root and name not in depth:
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


def _namespace_groups(
    groups: list[Group],
    index: Mapping[str, int],
    problems: list[Problem],
    unique: Mapping[str, Quota],
) -> dict[str, int]:
    """Namespace to group for pods without a label: named-like, then annotated, then only one."""
    by_namespace: dict[str, list[Group]] = defaultdict(list)
    for group in groups[_FIRST_TREE_INDEX:]:
        by_namespace[group.namespace].append(group)
    annotated: dict[str, int] = {}
    for group in groups[_FIRST_TREE_INDEX - 1 :]:  # the default group may list namespaces too
        for namespace in group.namespaces:
            owner = annotated.setdefault(namespace, index[group.name])
            if owner != index[group.name] and group.name in unique:
                problems.append(
                    _quota_problem(
                        unique[group.name],
                        f"metadata.annotations[{keys.NAMESPACES}]",
                        f"namespace {namespace!r} is already bound to {groups[owner].name!r}; "
                        "a namespace belongs to at most one group",
                    )
                )
    result = dict(annotated)
    for namespace, members in by_namespace.items():
        named = index.get(namespace)
        if named is not None and groups[named].namespace == namespace:
            result[namespace] = named
        elif namespace not in annotated and len(members) == 1:
            result[namespace] = index[members[0].name]
    return result
