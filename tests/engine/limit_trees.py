"""Random trees of groups with lending and borrowing limits (`limits_reference.Group`), and
the ElasticQuota and Pod manifests that make them: for the property tests of the split."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from tests.manifests import pod, quota

from .limits_reference import Group


@st.composite
def trees(draw: st.DrawFn) -> tuple[list[Group], int]:
    """Up to 8 groups on 3 levels, each maybe with limits, and a cluster total (milli-cpu)."""
    groups: list[tuple[Group, Group | None]] = []
    for i in range(draw(st.integers(1, 8))):
        parents = [g for g, _ in groups if g.children is not None and depth_of(g, groups) < 3]
        parent = draw(st.sampled_from([None, *parents])) if parents else None
        minimum = draw(st.integers(0, 20))
        group = Group(
            name=f"g{i}",
            min=minimum,
            max=draw(st.integers(minimum, 30)),
            weight=draw(st.integers(1, 5)),
            lends=draw(st.booleans()),
            lending_limit=draw(st.none() | st.integers(0, minimum)),
            borrowing_limit=draw(st.none() | st.integers(0, 15)),
        )
        if parent is not None:
            parent.children.append(group)
        groups.append((group, parent))
    for group, _ in groups:
        if not group.children:
            group.pods = draw(st.integers(0, 30))
    top = [g for g, parent in groups if parent is None]
    return top, draw(st.integers(0, 60))


def depth_of(group: Group, groups: list[tuple[Group, Group | None]]) -> int:
    parent = dict((g.name, p) for g, p in groups)[group.name]
    return 1 if parent is None else 1 + depth_of(parent, groups)


def manifests(top: list[Group], total: int) -> list[dict[str, Any]]:
    objects: list[dict[str, Any]] = []

    def add(group: Group, parent: str | None) -> None:
        objects.append(
            quota(
                group.name,
                parent=parent,
                is_parent=bool(group.children),
                lend=group.lends,
                min={"cpu": f"{group.min}m"},
                max={"cpu": f"{group.max}m"},
                weight={"cpu": f"{group.weight}m"},
                lending_limit=_milli(group.lending_limit),
                borrowing_limit=_milli(group.borrowing_limit),
            )
        )
        if group.pods:
            objects.append(
                pod(f"p-{group.name}", quota=group.name, node=None, cpu=f"{group.pods}m")
            )
        for child in group.children:
            add(child, group.name)

    for group in top:
        add(group, None)
    return objects


def _milli(limit: int | None) -> dict[str, str] | None:
    return None if limit is None else {"cpu": f"{limit}m"}


def every(top: list[Group]) -> list[Group]:
    return [g for t in top for g in (t, *every(t.children))]
