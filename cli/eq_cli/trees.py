"""The quota trees of a report (one per node pool, Koordinator's MultiQuotaTree) and the parts
of a report the commands show: one tree (`--tree`), or one group and those below it
(`kubectl eq tree GROUP`).

The default tree's id is "" (the groups without a `tree-id` label); `--tree default` names it
too, unless a node pool's tree is called `default` (an exact id wins: `--tree ""` then names the
default tree).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from eq_engine import QuotaEngine, ResourceList

if TYPE_CHECKING:
    from .simulate import Report

DEFAULT = "default"
"""What `--tree` takes for the default tree, whose id is ""."""


@dataclass(frozen=True)
class QuotaTree:
    """One quota tree: the default one, or a node pool's."""

    id: str
    """Its tree id; "" for the default tree."""
    total: ResourceList
    """What it splits: a pool's total (its roots' `total-resource`), or for the default tree
    what the pools leave of the cluster."""
    roots: tuple[str, ...] = ()
    """A pool's root ElasticQuotas (labelled `is-root`), by name; none for the default tree."""
    made_by: str | None = None
    """Where its root comes from when `simulate` made it: `ElasticQuotaProfile NS/NAME on 2
    nodes`."""

    @property
    def name(self) -> str:
        """As the outputs name it: its id, or `default`."""
        return self.id or DEFAULT


def quota_trees(
    engine: QuotaEngine, made_by: Mapping[str, str] | None = None
) -> tuple[QuotaTree, ...]:
    """The default tree, then each pool's by tree id (the order the engine keeps its roots);
    `made_by`: per tree id, where `simulate` made its root from."""
    catalog = engine.tree.catalog
    capacity = engine.capacity()
    trees = []
    for status in engine.statuses():
        if status.parent is not None:
            continue
        roots = sorted(
            q.name for q in catalog.quotas.values() if q.is_root and q.tree_id == status.tree
        )
        trees.append(
            QuotaTree(
                id=status.tree,
                total=catalog.tree_total(status.tree, capacity),
                roots=tuple(roots) if status.tree else (),
                made_by=(made_by or {}).get(status.tree),
            )
        )
    return tuple(trees)


def pooled(trees: Iterable[QuotaTree]) -> bool:
    """Whether there is more than the default tree: then the outputs tell the trees apart."""
    return any(tree.id for tree in trees)


def find_tree(trees: tuple[QuotaTree, ...], wanted: str) -> QuotaTree:
    """The tree `--tree` names: its id, or `default` (or "") for the default tree; KeyError
    lists the trees there are."""
    for tree in trees:
        if tree.id == wanted:
            return tree
    if wanted == DEFAULT:
        return trees[0]
    if not pooled(trees):
        there = "there is only the default tree (no ElasticQuota is in a node pool's tree)"
    else:
        there = f'the trees are {DEFAULT} (or ""), {", ".join(t.id for t in trees if t.id)}'
    raise KeyError(f"no tree {wanted!r}: {there}")


def only_tree(report: Report, wanted: str) -> Report:
    """The report on one tree's groups (its pods, waits, gangs, reclaim); the capacity, the
    problems and the list of trees stay whole."""
    tree = find_tree(report.trees, wanted)
    return _restricted(report, {g.name for g in report.groups if g.tree == tree.id})


def subtree(report: Report, group: str) -> Report:
    """The report on `group` and the groups below it; KeyError if there is no such group."""
    if group not in report.depth:
        raise KeyError(f"no group {group}")
    parents = {status.name: status.parent for status in report.groups}
    kept = set()
    for name in parents:
        ancestor: str | None = name
        while ancestor is not None and ancestor != group:
            ancestor = parents.get(ancestor)
        if ancestor == group:
            kept.add(name)
    return _restricted(report, kept)


def _restricted(report: Report, kept: set[str]) -> Report:
    return dataclasses.replace(
        report,
        groups=tuple(g for g in report.groups if g.name in kept),
        depth={name: depth for name, depth in report.depth.items() if name in kept},
        pods=tuple(p for p in report.pods if p.group in kept),
        reclaim={g: pods for g, pods in report.reclaim.items() if g in kept},
        waiting={g: n for g, n in report.waiting.items() if g in kept},
        gangs=tuple(g for g in report.gangs if kept.intersection(g.view.groups)),
    )
