"""Kubernetes objects from files: YAML (multi-document) or JSON, `kind: List` included.

Turns files into parsed engine objects, naming the file, object and field on bad input. Other
kinds are skipped and counted, so `kubectl get eq,pods,nodes -A -o yaml` loads as it is.
ElasticQuotaProfiles are read in `quota.koordinator.sh/v1alpha1` (`simulate` makes each one's
tree root from the Nodes, `pools.py`). PodGroups are told apart by their apiVersion
(`eq_engine.model.gangs.POD_GROUP_KINDS`): Koordinator's
`scheduling.sigs.k8s.io/v1alpha1`, scheduler-plugins' `scheduling.x-k8s.io/v1alpha1` and
Kubernetes' `scheduling.k8s.io/v1alpha2`; another API's PodGroup (Volcano's) is skipped, as
is a PodDisruptionBudget of another version than `policy/v1`.
"""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import yaml
from eq_engine import Node, Pod, Quota, QuotaError, parse_node, parse_pod, parse_quota
from eq_engine.explaining import Object
from eq_engine.model import (
    POD_GROUP_KINDS,
    DisruptionBudget,
    PodGroup,
    parse_disruption_budget,
    parse_pod_group,
)
from eq_engine.pools import KIND as PROFILE
from eq_engine.pools import Profile, parse_profile

PROFILE_API = "quota.koordinator.sh/v1alpha1"
Parsed = Quota | Pod | Node | PodGroup | DisruptionBudget | Profile
Parser = Callable[[Any], Parsed]

PARSERS: dict[str, Parser] = {
    "ElasticQuota": parse_quota,
    "Pod": parse_pod,
    "Node": parse_node,
}
"""The kinds read whatever their apiVersion."""
VERSIONED: dict[str, dict[str, Parser]] = {
    "PodGroup": {kind.api_version: partial(parse_pod_group, kind) for kind in POD_GROUP_KINDS},
    "PodDisruptionBudget": {"policy/v1": parse_disruption_budget},
    PROFILE: {PROFILE_API: parse_profile},
}
"""The kinds read only in these apiVersions (three PodGroup APIs share the kind's name)."""


def parser_for(kind: str, api_version: str) -> Parser | None:
    """How to read an object of `kind` and `api_version`; None: the engine does not use it."""
    if kind in VERSIONED:
        return VERSIONED[kind].get(api_version)
    return PARSERS.get(kind)


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
    pod_groups: list[PodGroup] = field(default_factory=list)
    budgets: list[DisruptionBudget] = field(default_factory=list)
    profiles: list[Profile] = field(default_factory=list)
    bodies: dict[str, Mapping[str, Any]] = field(default_factory=dict)
    """Each ElasticQuota as written, by `namespace/name`: a tree's root that a profile keeps is
    patched, its other labels and annotations kept (`pools.py`)."""
    skipped: Counter[str] = field(default_factory=Counter)
    """The kinds (and versions) the engine does not read, with how many of each."""

    def add(self, parsed: Parsed, raw: Mapping[str, Any] | None = None) -> None:
        """`raw`: the object as written, kept for an ElasticQuota (`bodies`)."""
        if isinstance(parsed, Quota):
            self.quotas.append(parsed)
            if raw is not None:
                self.bodies[parsed.ref] = raw
        elif isinstance(parsed, Pod):
            self.pods.append(parsed)
        elif isinstance(parsed, Node):
            self.nodes.append(parsed)
        elif isinstance(parsed, PodGroup):
            self.pod_groups.append(parsed)
        elif isinstance(parsed, Profile):
            self.profiles.append(parsed)
        else:
            self.budgets.append(parsed)

    def everything(self) -> list[Object]:
        """Every object the engine reads (not the profiles), the kinds in the order the engine
        is best fed them."""
        return [*self.quotas, *self.nodes, *self.pod_groups, *self.budgets, *self.pods]


def load(paths: list[str]) -> Objects:
    """Every object the engine reads in `paths`: files, directories (their .yaml, .yml and
    .json files, as `kubectl -f` reads them) or `-` for standard input."""
    objects = Objects()
    for path in _files(paths):
        source = "<stdin>" if path == "-" else path
        for raw in _documents(path, source):
            _add(objects, raw, source, hint=("", ""))
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


def _add(objects: Objects, raw: Any, source: str, *, hint: tuple[str, str]) -> None:
    """`hint`: the kind and apiVersion of the list `raw` came in, for items without their own."""
    if isinstance(raw, list):
        for item in raw:
            _add(objects, item, source, hint=hint)
        return
    if not isinstance(raw, Mapping):
        raise LoadError(source, f"expected a Kubernetes object, found {type(raw).__name__}")
    kind = raw.get("kind") or hint[0]
    api_version = raw.get("apiVersion") or hint[1]
    if isinstance(kind, str) and kind.endswith("List") and "items" in raw:
        items = raw["items"] or []
        if not isinstance(items, list):
            raise LoadError(source, f"{kind}: items: expected a list")
        # PodList items from the API carry no kind of their own.
        _add(objects, items, source, hint=(kind.removesuffix("List"), str(api_version)))
        return
    parse = parser_for(kind, str(api_version)) if isinstance(kind, str) else None
    if parse is None:
        named = str(kind or "object without kind")
        if kind in VERSIONED:  # not a version the engine reads: say which it was
            named += f" ({api_version})"
        objects.skipped[named] += 1
        return
    try:
        parsed = parse(raw)
    except QuotaError as error:
        raise LoadError(source, str(error)) from None
    objects.add(parsed, raw)
