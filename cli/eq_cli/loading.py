"""Kubernetes objects from files: YAML (multi-document) or JSON, `kind: List` included.

Turns files into parsed engine objects, naming the file, object and field on bad input. Other
kinds are skipped and counted, so `kubectl get eq,pods,nodes -A -o yaml` loads as it is.
"""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml
from eq_engine import Node, Pod, Quota, QuotaError, parse_node, parse_pod, parse_quota

PARSERS: dict[str, Callable[[Any], Quota | Pod | Node]] = {
    "ElasticQuota": parse_quota,
    "Pod": parse_pod,
    "Node": parse_node,
}
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_SUFFIXES = (".yaml", ".yml", ".json")


class LoadError(Exception):
    """Input that cannot be used, with the file it came from."""

    def __init__(self, source: str, message: str) -> None:
        super().__init__(f"{source}: {message}")


@dataclass
class Objects:
    quotas: list[Quota] = field(default_factory=list)
    pods: list[Pod] = field(default_factory=list)
    nodes: list[Node] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)
    """Kinds that were not ElasticQuota, Pod or Node, with how many of each."""

    def add(self, parsed: Quota | Pod | Node) -> None:
        if isinstance(parsed, Quota):
            self.quotas.append(parsed)
        elif isinstance(parsed, Pod):
            self.pods.append(parsed)
        else:
            self.nodes.append(parsed)


def load(paths: list[str]) -> Objects:
    """Every ElasticQuota, Pod and Node in `paths`: files, directories (their .yaml, .yml and
    .json files, as `kubectl -f` reads them) or `-` for standard input."""
    objects = Objects()
    for path in _files(paths):
        source = "<stdin>" if path == "-" else path
        for raw in _documents(path, source):
            _add(objects, raw, source, kind_hint=None)
    return objects


def _files(paths: list[str]) -> Iterator[str]:
    for path in paths:
        if path != "-" and os.path.isdir(path):
            names = sorted(n for n in os.listdir(path) if n.endswith(_SUFFIXES))
            yield from (os.path.join(path, name) for name in names)
        else:
            yield path


def _documents(path: str, source: str) -> Iterator[Any]:
    try:
        if path == "-":
            text = sys.stdin.read()
        else:
            with open(path, encoding="utf-8") as file:
                text = file.read()
    except (OSError, UnicodeDecodeError) as error:
        raise LoadError(
            source, f"cannot read: {getattr(error, 'strerror', None) or error}"
        ) from None
    if text.lstrip()[:1] in ("{", "["):
        try:
            yield json.loads(text)
        except json.JSONDecodeError as error:
            raise LoadError(source, f"invalid JSON at line {error.lineno}: {error.msg}") from None
        return
    try:
        yield from (document for document in yaml.load_all(text, Loader=_Loader) if document)
    except yaml.YAMLError as error:
        raise LoadError(source, f"invalid YAML: {error}") from None


def _add(objects: Objects, raw: Any, source: str, *, kind_hint: str | None) -> None:
    if isinstance(raw, list):
        for item in raw:
            _add(objects, item, source, kind_hint=kind_hint)
        return
    if not isinstance(raw, Mapping):
        raise LoadError(source, f"expected a Kubernetes object, found {type(raw).__name__}")
    kind = raw.get("kind") or kind_hint
    if isinstance(kind, str) and kind.endswith("List") and "items" in raw:
        items = raw["items"] or []
        if not isinstance(items, list):
            raise LoadError(source, f"{kind}: items: expected a list")
        # PodList items from the API carry no kind of their own.
        _add(objects, items, source, kind_hint=kind.removesuffix("List") or None)
        return
    parse = PARSERS.get(kind) if isinstance(kind, str) else None
    if parse is None:
        objects.skipped[str(kind or "object without kind")] += 1
        return
    try:
        parsed = parse(raw)
    except QuotaError as error:
        raise LoadError(source, str(error)) from None
    objects.add(parsed)
