"""Label selectors (the full set-based syntax of `labelSelector=`) and field selectors, as
apimachinery parses them."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from .errors import ApiError
from .resources import Resource

Labels = Mapping[str, str]
Match = Callable[[Labels], bool]
# A requirement: `key in (a,b)`, `key notin (a)`, `key op value`, `key`, `!key`.
_SET = re.compile(r"^\s*(!?)\s*([A-Za-z0-9_./-]+)\s*(?:(notin|in)\s*\(([^)]*)\))?\s*$")
_OP = re.compile(r"^\s*([A-Za-z0-9_./-]+)\s*(==|!=|=)\s*([A-Za-z0-9_.-]*)\s*$")


def _split(text: str) -> list[str]:
    """Split on commas outside parentheses: `a in (x,y),b` -> [`a in (x,y)`, `b`]."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        depth += char == "("
        depth -= char == ")"
        if char == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p for p in parts if p.strip()]


def parse_labels(text: str) -> Match:
    """`app=web,tier in (a,b),!canary` -> a predicate on a labels dict."""
    checks: list[Match] = []
    for part in _split(text):
        if m := _OP.match(part):
            key, op, value = m.groups()
            checks.append(_requirement(key, "NotIn" if op == "!=" else "In", {value}))
        elif m := _SET.match(part):
            negated, key, op, values = m.groups()
            if op and negated:
                raise ApiError(400, f"unable to parse requirement: {part.strip()}")
            if op:
                wanted = {v.strip() for v in values.split(",")}
                checks.append(_requirement(key, "In" if op == "in" else "NotIn", wanted))
            else:
                checks.append(_requirement(key, "DoesNotExist" if negated else "Exists", set()))
        else:
            raise ApiError(400, f"unable to parse requirement: {part.strip()}")
    return lambda labels: all(check(labels) for check in checks)


def _requirement(key: str, operator: str, values: set[str]) -> Match:
    if operator == "In":
        return lambda labels: labels.get(key) in values
    if operator == "NotIn":
        # As labels.Selector: a missing key satisfies `notin`.
        return lambda labels: labels.get(key) not in values
    if operator == "Exists":
        return lambda labels: key in labels
    if operator == "DoesNotExist":
        return lambda labels: key not in labels
    raise ValueError(f"unknown selector operator {operator!r}")


def field_value(obj: dict[str, Any], path: str) -> str:
    """The string a field selector compares: missing is "", booleans are "true"/"false"."""
    value: Any = obj
    for part in path.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def parse_fields(text: str, resource: Resource) -> Callable[[dict[str, Any]], bool]:
    """`spec.nodeName=n1,status.phase!=Failed` -> a predicate on an object; unsupported labels
    get 400 as from the real server."""
    checks: list[Callable[[dict[str, Any]], bool]] = []
    for part in _split(text):
        m = _OP.match(part)
        if not m:
            raise ApiError(400, f"invalid selector: '{text}'; can't understand '{part}'")
        path, op, value = m.groups()
        allowed = path in ("metadata.name", "metadata.namespace") or path in resource.field_labels
        if resource.plural == "events" and path.startswith("metadata."):
            allowed = True
        if not allowed:
            raise ApiError(400, f"field label not supported: {path}")
        if resource.plural == "pods" and path == "spec.host":
            path = "spec.nodeName"
        checks.append(_field_is(path, value, equal=op != "!="))
    return lambda obj: all(check(obj) for check in checks)


def _field_is(path: str, value: str, *, equal: bool) -> Callable[[dict[str, Any]], bool]:
    return lambda obj: (field_value(obj, path) == value) == equal
