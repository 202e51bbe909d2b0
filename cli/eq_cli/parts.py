"""The parts of a report the commands show: one quota tree (`--tree`), one group and those
below it (`kubectl eq tree GROUP`), or the groups of one namespace (`kubectl eq tree -n NS`)."""

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
    return _restricted(report, _below(report, group))


def in_namespace(report: Report, namespace: str) -> Report:
    """The report on the groups whose objects are in `namespace`, each drawn with the groups
    below it (wherever those are): what a namespace's team owns."""
    tops = [g.name for g in report.groups if g.namespace == namespace]
    kept = set().union(*(_below(report, top) for top in tops)) if tops else set()
    return _restricted(report, kept)


def _below(report: Report, group: str) -> set[str]:
    parents = {status.name: status.parent for status in report.groups}
    kept = set()
    for name in parents:
        ancestor: str | None = name
        while ancestor is not None and ancestor != group:
            ancestor = parents.get(ancestor)
        if ancestor == group:
            kept.add(name)
    return kept


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
