"""The parts of a report the commands show: one quota tree (`--tree`), or one group and those
below it (`kubectl eq tree GROUP`)."""

from __future__ import annotations

import dataclasses

from .simulate import Report
from .trees import find_tree


def only_tree(report: Report, wanted: str) -> Report:
    """The report on one tree's groups (its pods, waits, gangs, reclaim, preemption); the
    capacity, the problems and the list of trees stay whole."""
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
        preemption={g: plan for g, plan in report.preemption.items() if g in kept},
        waiting={g: n for g, n in report.waiting.items() if g in kept},
        gangs=tuple(g for g in report.gangs if kept.intersection(g.view.groups)),
    )
