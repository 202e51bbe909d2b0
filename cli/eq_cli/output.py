"""The three renderings of a simulation report: json, table and tree."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from eq_engine import GroupStatus, ResourceList, format_quantity, format_resource_list

from .simulate import Report

UNLIMITED = "unlimited"
_CELL = 9  # tree columns: 34 + 5 * 9 = 79 characters


def as_json(report: Report) -> str:
    """The documented shape; quantities are canonical Kubernetes quantity strings."""

    def quantities(values: ResourceList | None) -> dict[str, str] | None:
        return None if values is None else format_resource_list(values)

    document = {
        "capacity": format_resource_list(report.capacity),
        "groups": {
            g.name: {
                "namespace": g.namespace,
                "parent": g.parent,
                "isParent": g.is_parent,
                "min": quantities(g.min),
                "max": quantities(g.max),
                "sharedWeight": quantities(g.shared_weight),
                "request": quantities(g.request),
                "runtime": quantities(g.runtime),
                "used": quantities(g.used),
            }
            for g in report.groups
        },
        "pods": {p.key: {"group": p.group, "capacity": p.capacity} for p in report.pods},
        "reclaim": report.reclaim,
        "problems": [str(problem) for problem in report.problems],
    }
    return _entry_per_line(document)


def _entry_per_line(document: dict[str, Any]) -> str:
    """JSON with one line per group, pod or problem: readable, diffable and quick to write
    (the C encoder does each line; an indented dump of 100,000 pods takes seconds)."""
    lines = ["{"]
    for i, (key, value) in enumerate(document.items()):
        comma = "," if i < len(document) - 1 else ""
        if isinstance(value, dict) and value:
            lines.append(f"  {json.dumps(key)}: {{")
            items = [f"    {json.dumps(k)}: {json.dumps(v)}" for k, v in value.items()]
            lines.append(",\n".join(items))
            lines.append(f"  }}{comma}")
        elif isinstance(value, list) and value:
            lines.append(f"  {json.dumps(key)}: [")
            lines.append(",\n".join(f"    {json.dumps(v)}" for v in value))
            lines.append(f"  ]{comma}")
        else:
            lines.append(f"  {json.dumps(key)}: {json.dumps(value)}{comma}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _compact(values: ResourceList | None) -> str:
    if values is None:
        return UNLIMITED
    return ",".join(f"{k}={v}" for k, v in format_resource_list(values).items()) or "-"


def as_table(report: Report) -> str:
    """One row per group: name, namespace, parent and its resource lists."""
    header = ("NAME", "NAMESPACE", "PARENT", "MIN", "MAX", "REQUEST", "RUNTIME", "USED")
    rows = [header] + [
        (
            g.name,
            g.namespace,
            g.parent or "-",
            _compact(g.min),
            _compact(g.max),
            _compact(g.request),
            _compact(g.runtime),
            _compact(g.used),
        )
        for g in report.groups
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = [
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]
    return "\n".join(lines) + "\n" + _footer(report)


def as_tree(report: Report) -> str:
    """The hierarchy, each group followed by one line per resource (fits 80 columns)."""
    children: dict[str | None, list[GroupStatus]] = {}
    for group in report.groups:
        children.setdefault(group.parent, []).append(group)
    columns = ("min", "max", "request", "runtime", "used")
    lines = [f"{'':<34}" + "".join(f"{c:>{_CELL}}" for c in columns)]

    def draw(group: GroupStatus, lead: str, branch: str) -> None:
        kind = " (parent)" if group.is_parent and group.parent else ""
        lines.append(f"{lead}{branch}{group.name}{kind}")
        inner = lead + ("│  " if branch == "├─ " else "   " if branch else "")
        kids = children.get(group.name, [])
        bar = "│ " if kids else "  "
        for resource in _resources(group):
            cells = [
                _cell(values, resource)
                for values in (group.min, group.max, group.request, group.runtime, group.used)
            ]
            label = f"{inner}{bar}{resource}"
            lines.append(f"{_fit(label, 34):<34}" + "".join(f"{c:>{_CELL}}" for c in cells))
        for i, kid in enumerate(kids):
            draw(kid, inner, "└─ " if i == len(kids) - 1 else "├─ ")

    for root in children.get(None, []):
        draw(root, "", "")
    return "\n".join(lines) + "\n" + _footer(report)


def _resources(group: GroupStatus) -> list[str]:
    names: set[str] = set(group.request) | set(group.used) | set(group.min)
    names |= set(group.max or ()) | set(group.runtime or ())
    return sorted(names)


def _cell(values: ResourceList | None, resource: str) -> str:
    if values is None:
        return "∞"
    return _short(resource, values[resource]) if resource in values else "-"


def _short(resource: str, amount: int) -> str:
    """The exact quantity if it fits a column, else a rounded one marked `~` (display only)."""
    exact = format_quantity(resource, amount)
    if len(exact) <= _CELL - 1:
        return exact
    binary = resource == "memory" or "storage" in resource or resource.startswith("hugepages-")
    base, suffixes = (
        (1024, ("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"))
        if binary
        else (1000, ("", "k", "M", "G", "T", "P", "E"))
    )
    value = amount / 1000 if resource == "cpu" else float(amount)
    power = 0
    while abs(value) >= base and power < len(suffixes) - 1:
        value /= base
        power += 1
    return f"~{value:.1f}{suffixes[power]}"


def _fit(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _footer(report: Report) -> str:
    lines = []
    capacity = _compact(report.capacity)
    lines.append(f"\nCapacity: {capacity}")
    if report.reclaim:
        lines.append("Reclaim (evicted in this order):")
        lines += [
            f"  {group}: {', '.join(pods) or 'nothing (its used is in its child groups)'}"
            for group, pods in report.reclaim.items()
        ]
    if report.problems:
        lines.append("Problems:")
        lines += [f"  {problem}" for problem in report.problems]
    return "\n".join(lines) + "\n"


RENDERERS: dict[str, Callable[[Report], str]] = {
    "json": as_json,
    "table": as_table,
    "tree": as_tree,
}
