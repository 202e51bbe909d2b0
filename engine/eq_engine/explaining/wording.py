"""The words both explanations share: an `Explanation`, amounts as a reader reads them, and
which quota tree a group is in."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ..model import format_quantity
from ..state import Snapshot
from ..tree import pool_root

Amounts = Mapping[str, int]


@dataclass(frozen=True, slots=True)
class Explanation:
    """What is explained (`pod team-a/batch-1`, `group team-a`), and the lines that explain it."""

    subject: str
    lines: tuple[str, ...]

    def __str__(self) -> str:
        return "\n".join([self.subject, *(f"  {line}" for line in self.lines)])


def shown(amounts: Amounts | None, names: Iterable[str] | None = None) -> str:
    """`cpu 2, memory 1Gi` (of `names` only, 0 where missing), `unlimited` or `nothing`."""
    if amounts is None:
        return "unlimited"
    keys = sorted(amounts if names is None else names)
    return ", ".join(f"{k} {format_quantity(k, amounts.get(k, 0))}" for k in keys) or "nothing"


def tree_lines(snapshot: Snapshot, tree_id: str) -> list[str]:
    """Which quota tree, and the total it splits: said once there are node pools."""
    catalog = snapshot.tree.catalog
    if not catalog.pools and not tree_id:
        return []
    total = snapshot.status(pool_root(snapshot.config, tree_id)).runtime
    if not tree_id:
        return [
            "tree: the default one, on what the node pools leave of the cluster less what the "
            f"system and default groups use: {shown(total)}"
        ]
    roots = sorted(q.name for q in catalog.quotas.values() if q.is_root and q.tree_id == tree_id)
    whose = f"the total-resource of its root {', '.join(roots)}" if roots else "no root"
    return [f"tree: {tree_id!r}, a node pool's: {shown(catalog.pools.get(tree_id, {}))} ({whose})"]
