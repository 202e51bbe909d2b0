"""The part of Kubernetes JSONPath that printer columns use (k8s.io/client-go/util/jsonpath, as
kube-apiserver's tableconvertor evaluates a CRD's `additionalPrinterColumns[].jsonPath`).

Understood: `.field` (a `\\.` inside a name is a literal dot: `.metadata.labels.a\\.b/c`),
`['field']` and `["field"]`, `[N]` (negative counts from the end), `[*]`, and the filter
`[?(@.path=="value")]` / `!=`. Not understood (ValueError when parsed): recursive descent `..`,
slices, unions and functions; no CRD this project serves uses them. As the tableconvertor does,
only the first result is used: `first(path, obj)` returns it, or MISSING.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

MISSING: Any = object()
_FILTER = re.compile(
    r"""^\?\(@((?:\.[A-Za-z0-9_\-/]+)+)\s*(==|!=)\s*(?:"([^"]*)"|'([^']*)'|(\S+))\)$"""
)


@dataclass(frozen=True)
class _Step:
    kind: str  # "field", "index", "all", "filter"
    key: Any = None
    op: str = ""
    value: str = ""


def parse(path: str) -> tuple[_Step, ...]:
    """`{.a.b[0]}` or `.a.b[0]` -> steps; ValueError for what the module does not understand."""
    text = path.strip()
    if text.startswith("{") and text.endswith("}"):
        text = text[1:-1].strip()
    steps: list[_Step] = []
    i = 0
    while i < len(text):
        if text.startswith("..", i):
            raise ValueError(f"recursive descent is not supported: {path!r}")
        if text[i] == ".":
            i, name = _name(text, i + 1)
            steps.append(_Step("field", name))
        elif text[i] == "[":
            end = _closing(text, i)
            steps.append(_bracket(text[i + 1 : end].strip(), path))
            i = end + 1
        else:
            raise ValueError(f"unexpected {text[i]!r} at {i} in {path!r}")
    return tuple(steps)


def _name(text: str, i: int) -> tuple[int, str]:
    out = []
    while i < len(text) and text[i] not in ".[":
        if text[i] == "\\" and i + 1 < len(text):
            i += 1
        out.append(text[i])
        i += 1
    return i, "".join(out)


def _closing(text: str, start: int) -> int:
    quote = None
    for i in range(start + 1, len(text)):
        if quote:
            quote = None if text[i] == quote else quote
        elif text[i] in "'\"":
            quote = text[i]
        elif text[i] == "]":
            return i
    raise ValueError(f"unclosed [ in {text!r}")


def _bracket(inner: str, path: str) -> _Step:
    if inner == "*":
        return _Step("all")
    if len(inner) >= 2 and inner[0] == inner[-1] and inner[0] in "'\"":
        return _Step("field", inner[1:-1])
    if re.fullmatch(r"-?\d+", inner):
        return _Step("index", int(inner))
    if m := _FILTER.match(inner):
        field, op = m[1][1:], m[2]
        value = next(v for v in (m[3], m[4], m[5]) if v is not None)
        return _Step("filter", tuple(field.split(".")), op, value)
    raise ValueError(f"unsupported JSONPath element [{inner}] in {path!r}")


def _results(steps: tuple[_Step, ...], value: Any) -> Iterator[Any]:
    if not steps:
        yield value
        return
    step, rest = steps[0], steps[1:]
    if step.kind == "field":
        if isinstance(value, dict) and step.key in value:
            yield from _results(rest, value[step.key])
    elif step.kind == "index":
        if isinstance(value, list) and -len(value) <= step.key < len(value):
            yield from _results(rest, value[step.key])
    elif step.kind == "all":
        items = (
            value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
        )
        for item in items:
            yield from _results(rest, item)
    elif isinstance(value, list):  # filter
        for item in value:
            found = _lookup(item, step.key)
            text = _scalar_text(found) if found is not MISSING else None
            if (text == step.value) == (step.op == "=="):
                yield from _results(rest, item)


def _lookup(value: Any, keys: tuple[str, ...]) -> Any:
    for key in keys:
        if not isinstance(value, dict) or key not in value:
            return MISSING
        value = value[key]
    return value


def _scalar_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def first(path: str | tuple[_Step, ...], obj: Any) -> Any:
    """The first value `path` finds in `obj`, or MISSING (a missing key is not an error)."""
    steps = parse(path) if isinstance(path, str) else path
    return next(_results(steps, obj), MISSING)
