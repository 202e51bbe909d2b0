"""What the webhook knows of the cluster: ElasticQuota objects and node capacity.

Fed by `watching.py`; read by `admission.py`. The catalog is rebuilt lazily, at the first
review after a change, so a burst of watch events costs one rebuild.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from eq_engine import EngineConfig, Node, Quota, QuotaError, parse_node, parse_quota
from eq_engine.catalog import Catalog, build_catalog

from .logs import logger


class ClusterState:
    def __init__(self, config: EngineConfig) -> None:
        self.config = config
        self._quotas: dict[tuple[str, str], Quota] = {}
        self._nodes: dict[str, Node] = {}
        self._catalog: Catalog | None = None
        self._capacity: dict[str, int] | None = None
        self.synced: set[str] = set()
        """The watched kinds whose first listing has been loaded."""

    @property
    def ready(self) -> bool:
        return {"ElasticQuota", "Node"} <= self.synced

    @property
    def catalog(self) -> Catalog:
        if self._catalog is None:
            self._catalog = build_catalog(self._quotas.values(), self.config)
        return self._catalog

    def capacity(self) -> dict[str, int]:
        """The sum of every node's allocatable (recomputed after a node event)."""
        if self._capacity is None:
            self._capacity = {}
            for node in self._nodes.values():
                for name, amount in node.allocatable.items():
                    self._capacity[name] = self._capacity.get(name, 0) + amount
        return self._capacity

    def replace(self, kind: str, objects: list[Mapping[str, Any]]) -> None:
        """A fresh listing: forget what it does not contain."""
        if kind == "ElasticQuota":
            self._quotas.clear()
            self._catalog = None
        else:
            self._nodes.clear()
            self._capacity = None
        for raw in objects:
            self.apply(kind, "ADDED", raw)
        self.synced.add(kind)

    def apply(self, kind: str, event: str, raw: Mapping[str, Any]) -> None:
        """One watch event (ADDED, MODIFIED, DELETED)."""
        metadata = raw.get("metadata") or {}
        key = (str(metadata.get("namespace", "")), str(metadata.get("name", "")))
        if kind == "ElasticQuota":
            self._catalog = None
            if event == "DELETED":
                self._quotas.pop(key, None)
            elif (quota := _parsed(parse_quota, raw)) is not None:
                self._quotas[key] = quota
        else:
            self._capacity = None
            if event == "DELETED":
                self._nodes.pop(key[1], None)
            elif (node := _parsed(parse_node, raw)) is not None:
                self._nodes[key[1]] = node


_Parsed = TypeVar("_Parsed", Quota, Node)


def _parsed(
    parse: Callable[[Mapping[str, Any]], _Parsed], raw: Mapping[str, Any]
) -> _Parsed | None:
    """An object the cluster holds but the engine cannot read is left out, and logged."""
    try:
        return parse(raw)
    except QuotaError as error:
        logger.warning("ignoring an unreadable object: %s", error)
        return None
