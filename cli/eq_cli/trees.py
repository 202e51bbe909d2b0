"""The quota trees of a report (one per node pool, Koordinator's MultiQuotaTree), and how
`--tree` names one (`parts.py` cuts a report down to one).

The default tree's id is "" (the groups without a `tree-id` label); `--tree default` names it
too, unless a node pool's tree is called `default` (an exact id wins: `--tree ""` then names the
default tree).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from eq_engine import QuotaEngine, ResourceList

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
