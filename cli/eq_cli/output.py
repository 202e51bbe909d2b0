"""The renderings of a simulation report for people: table, tree, and `kubectl eq`'s wide
table; the JSON and YAML documents are `documents.py`'s."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence

from eq_engine import GroupStatus, ResourceList, format_quantity

from .display import ROUNDED, readable
from .documents import as_json, as_yaml
from .simulate import Report, Waiting
from .trees import QuotaTree, pooled

COLUMNS = ("min", "max", "request", "runtime", "used")
_CELL = 9  # a quantity (display.WIDTH) and its padding; the tree: 34 + 5 * 9 = 79 characters
TREE_WIDTH = 80
"""Columns every line of the tree keeps within: longer lists wrap (a name is never split)."""
UNLIMITED, NOT_SET, SCALED = "∞", "-", "*"
SYMBOLS = {
    UNLIMITED: "unlimited",
    NOT_SET: "not set",
    ROUNDED: "rounded (-o json is exact)",
    SCALED: "min scaled down",
}


def as_table(report: Report) -> str:
    """One row per group and resource, every row whole (grep `ml` for the ml group); fits 100
    columns with names up to 30 characters. With node pools, each tree's rows come under its
    head line, the default tree's first."""
    groups = sorted(report.groups, key=lambda g: g.tree)  # stable: in tree order within one
    header = ("GROUP", "RESOURCE", *(c.upper() for c in COLUMNS))
    rows = [[(g.name, r, *_cells(g, r)) for r in _resources(g)] for g in groups]
    every = [header, *(row for group_rows in rows for row in group_rows)]
    name, resource = (max(len(row[i]) for row in every) for i in (0, 1))

    def line(row: tuple[str, ...]) -> str:
        return f"{row[0]:<{name}}  {row[1]:<{resource}}" + "".join(f"{c:>{_CELL}}" for c in row[2:])

    lines = [line(header)]
    for head, group_rows in zip(_tree_heads(report, groups), rows, strict=True):
        lines += head + [line(row) for row in group_rows]
    return "\n".join(lines) + "\n" + _footer(report)


def as_wide(report: Report) -> str:
    """`kubectl eq tree -o wide`: the table with every column, as kubectl's wide adds them: each
    group's namespace, parent, tree and shared weight, and every quantity exact."""
    header = ("NAMESPACE", "GROUP", "PARENT", "TREE", "RESOURCE", "MIN", "MAX", "WEIGHT")
    rows = [(*header, *(c.upper() for c in COLUMNS[2:]), "LENDABLE", "LENT", "BORROWED")]
    for g in sorted(report.groups, key=lambda g: g.tree):
        for r in _resources(g):
            values = (g.min, g.max, g.shared_weight, g.request, g.runtime, g.used, g.lendable)
            exact = [_exact(v, r) for v in values]
            if r in g.min or r in (g.runtime or ()):  # what it lends or borrows, 0 included
                exact += [format_quantity(r, v.get(r, 0)) for v in (g.lent, g.borrowed)]
            else:
                exact += [NOT_SET, NOT_SET]
            rows.append((g.namespace, g.name, g.parent or NOT_SET, g.tree or NOT_SET, r, *exact))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "".join(
        "   ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        + "\n"
        for row in rows
    )


def _exact(values: ResourceList | None, resource: str) -> str:
    if values is None:
        return UNLIMITED
    return format_quantity(resource, values[resource]) if resource in values else NOT_SET


def as_tree(report: Report) -> str:
    """The hierarchy, each group followed by one line per resource (fits 80 columns)."""
    children: dict[str | None, list[GroupStatus]] = {}
    shown = {group.name for group in report.groups}
    for group in report.groups:  # a subtree (`kubectl eq tree GROUP`) is drawn from its top
        children.setdefault(group.parent if group.parent in shown else None, []).append(group)
    lines = [f"{'':<34}" + "".join(f"{c:>{_CELL}}" for c in COLUMNS)]

    def draw(group: GroupStatus, lead: str, branch: str) -> None:
        inner = lead + ("│  " if branch == "├─ " else "   " if branch else "")
        kids = children.get(group.name, [])
        bar = "│ " if kids else "  "
        lines.extend(_named(f"{lead}{branch}{group.name}", _notes(report, group), inner + bar))
        for resource in _resources(group):
            label = f"{inner}{bar}{resource}"
            cells = _cells(group, resource)
            lines.append(f"{_fit(label, 34):<34}" + "".join(f"{c:>{_CELL}}" for c in cells))
        for i, kid in enumerate(kids):
            draw(kid, inner, "└─ " if i == len(kids) - 1 else "├─ ")

    tops = sorted(children.get(None, []), key=lambda g: g.tree)
    for head, top in zip(_tree_heads(report, tops), tops, strict=True):
        lines.extend(head)
        draw(top, "", "")
    return "\n".join(lines) + "\n" + _footer(report, width=TREE_WIDTH, waiting=False)


def _tree_heads(report: Report, groups: Sequence[GroupStatus]) -> list[list[str]]:
    """For each of `groups` (sorted by tree), the lines to print before it: where its tree
    begins, the tree's head line (after a blank line, but for the first tree). None without
    node pools: the output is as it was before there were any."""
    if not pooled(report.trees):
        return [[] for _ in groups]
    trees = {tree.id: tree for tree in report.trees}
    heads: list[list[str]] = []
    previous: str | None = None
    for group in groups:
        if group.tree == previous:
            heads.append([])
            continue
        heads.append(([""] if previous is not None else []) + _tree_head(trees[group.tree]))
        previous = group.tree
    return heads


def _tree_head(tree: QuotaTree) -> list[str]:
    """`Tree a100: nvidia.com/gpu 10 (the total-resource of its root a100)`: the tree's id and
    the total it splits, wrapped at the tree's 80 columns."""
    if not tree.id:
        head, why = "Default tree:", "(what the node pools leave of the cluster)"
    elif tree.roots:
        made = f", made from {tree.made_by}" if tree.made_by else ""
        why = f"(the total-resource of its root {', '.join(tree.roots)}{made})"
        head = f"Tree {tree.id}:"
    else:
        head, why = f"Tree {tree.id}:", "(no root ElasticQuota: see the problems)"
    items = [*_listed(tree.total), *_words(why)]
    return _wrapped(head, items, hang=" " * (len(head) + 1), width=TREE_WIDTH)


def _named(head: str, notes: list[str], bars: str) -> list[str]:
    """A group's line in the tree, its notes wrapped under the first one where they can be, or
    else just inside the tree's bars (`bars`, which the continuation lines carry on)."""
    if not notes:
        return [head]
    items = _commas(notes)
    items[0] = f"({items[0]}"
    items[-1] += ")"
    under = len(head) + 2  # the first note's first letter, after " ("
    if under + max(len(item) for item in items) > TREE_WIDTH:
        under = len(bars) + 2
    return _wrapped(head, items, hang=bars.ljust(under), width=TREE_WIDTH)


def _notes(report: Report, group: GroupStatus) -> list[str]:
    """What the numbers do not show: a parent, a group that does not lend or lends or borrows
    at most so much, waiting pods, problems."""
    notes = []
    if group.is_parent and group.parent:
        notes.append("parent")
    if group.parent and not report.engine.lends(group.name):
        notes.append("does not lend")
    elif limited := {r: n for r, n in group.lendable.items() if n < group.min[r]}:
        notes.append(f"lends at most {_listing(limited)}")
    if group.borrowing_limit:
        notes.append(f"borrows at most {_listing(group.borrowing_limit)}")
    if pools := report.engine.tree.catalog.pools_of(group.name):
        notes.append(f"its pods go to {' or '.join(pools)}")
    if waiting := report.waiting.get(group.name):
        notes.append(_waiting_note(waiting))
    if over := group.over_quota_pods:
        notes.append(f"{over} over quota")
    problems = sum(
        1
        for p in report.problems
        if p.kind == "ElasticQuota" and p.ref.rpartition("/")[2] == group.name
    )
    if problems:
        notes.append(f"{problems} problem{'s' if problems > 1 else ''}")
    return notes


def _waiting_note(waiting: Waiting, *, pods: bool = False) -> str:
    """`5 waiting`, `8 waiting in 2 gangs`, `5 waiting: 4 in 1 gang`; with `pods`: `1 pod`,
    `5 pods: 4 in 1 gang`."""
    note = _count(waiting.pods, "pod") if pods else f"{waiting.pods} waiting"
    if not waiting.gangs:
        return note
    gangs = _count(waiting.gangs, "gang")
    if waiting.gang_pods == waiting.pods:
        return f"{note} in {gangs}"
    return f"{note}: {waiting.gang_pods} in {gangs}"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _resources(group: GroupStatus) -> list[str]:
    names: set[str] = set(group.request) | set(group.used) | set(group.min)
    names |= set(group.max or ()) | set(group.runtime or ())
    return sorted(names) or [NOT_SET]


def _cells(group: GroupStatus, resource: str) -> list[str]:
    """min, max, request, runtime, used; a min that scaling shrank is marked."""
    cells = [
        _cell(values, resource)
        for values in (group.min, group.max, group.request, group.runtime, group.used)
    ]
    if resource in _scaled(group):
        cells[0] += SCALED
    return cells


def _cell(values: ResourceList | None, resource: str) -> str:
    if values is None:
        return UNLIMITED
    return readable(resource, values[resource]) if resource in values else NOT_SET


def _scaled(group: GroupStatus) -> list[str]:
    """The resources whose min scaling shrank (the parent's total cannot cover the mins)."""
    return [r for r, amount in sorted(group.min.items()) if group.effective_min.get(r, 0) < amount]


def _listing(values: ResourceList) -> str:
    """`cpu 4 and memory 1Gi`: a list inside a group's notes, which commas separate."""
    return " and ".join(f"{r} {readable(r, values[r])}" for r in sorted(values))


def _listed(values: ResourceList) -> list[str]:
    return _commas([f"{r} {readable(r, values[r])}" for r in sorted(values)]) or ["nothing"]


def _commas(items: Sequence[str]) -> list[str]:
    """The items of a list as `_wrapped` takes them: each but the last followed by a comma."""
    return [f"{item}," for item in items[:-1]] + list(items[-1:])


def _words(text: str) -> list[str]:
    """A sentence as `_wrapped` takes it, to break between its words."""
    return text.split(" ")


def _wrapped(head: str, items: Sequence[str], *, hang: str, width: int) -> list[str]:
    """`head` and `items` joined by spaces, broken before an item that would take a line past
    `width`; the lines after the first begin with `hang`. An item is never split: one longer than
    a line has a line to itself.

    `_wrapped("  ml:", ["ml/a,", "ml/b"], hang="      ", width=12)` is
    `["  ml: ml/a,", "      ml/b"]`; with `width=80` it is `["  ml: ml/a, ml/b"]`."""
    lines, line = [], head
    for item in items:
        if len(line) + 1 + len(item) > width and len(line) > len(hang):
            lines.append(line)
            line = hang + item
        else:
            line += " " + item
    return [*lines, line]


def _fit(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _footer(report: Report, *, width: int = sys.maxsize, waiting: bool = True) -> str:
    """Capacity, scaled mins, waiting pods (unless the tree's notes say it: `waiting` False),
    reclaim and problems, then what the symbols mean; long lists wrap at `width` (the tree's
    80 columns; the table's footer keeps one line per entry)."""

    def entry(head: str, items: Sequence[str], hang: int | None = None) -> list[str]:
        """`head` and its items; the lines after the first start under the first item."""
        under = len(head) + 1 if hang is None else hang
        return _wrapped(head, items, hang=" " * under, width=width)

    lines = entry("Capacity:", _listed(report.capacity))
    if scaled := [g for g in report.groups if _scaled(g)]:
        lines.append(
            f"Mins scaled down ({SCALED}: the parent's total cannot cover its children's):"
        )
        for g in scaled:
            changes = [
                f"{r} {readable(r, g.min[r])} to {readable(r, g.effective_min.get(r, 0))}"
                for r in _scaled(g)
            ]
            lines += entry(f"  {g.name}:", _commas(changes))
    if waiting and report.waiting:
        lines.append("Waiting (behind the admission gate; a gang waits whole):")
        for name in (g.name for g in report.groups if g.name in report.waiting):
            lines.append(f"  {name}: {_waiting_note(report.waiting[name], pods=True)}")
    if report.placed:
        lines.append("Pools (where the gate lets the pods of several pools go now):")
        for group in sorted(set(report.placed.values())):
            pods = [key for key, there in report.placed.items() if there == group]
            lines += entry(f"  {group}:", _commas(pods))
    if report.reclaim:
        lines.append("Reclaim (evicted in this order):")
        for group, pods in report.reclaim.items():
            items = _commas(pods) or _words("nothing (its used is in its child groups)")
            lines += entry(f"  {group}:", items)
    if report.preemption:
        lines.append("Preemption (evicted in this order, for what waits first in the group):")
        for group, planned in report.preemption.items():
            wants = f"  {group}, for {planned.what} of priority {planned.priority}:"
            victims = [key for c in planned.victims() for key in c.keys]
            lines += entry(wants, _commas(victims) or _words(f"nothing: {planned.refusal}"))
    if report.problems:
        lines.append("Problems:")
        for problem in report.problems:
            first, *rest = _words(str(problem))
            lines += entry(f"  {first}", rest, hang=4)
    symbols = [f"{mark} {text}" for mark, text in SYMBOLS.items()]
    lines += entry("Symbols:", _commas(symbols))
    return "\n" + "\n".join(lines) + "\n"


RENDERERS: dict[str, Callable[[Report], str]] = {
    "json": as_json,
    "table": as_table,
    "tree": as_tree,
    "yaml": as_yaml,
}
