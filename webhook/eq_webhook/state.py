"""What the webhook knows of the cluster: ElasticQuota objects and node capacity.

Fed by `watching.py`; read by `admission.py`. The catalog is rebuilt lazily, at the first
review after a change, so a burst of watch events costs one rebuild.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from eq_engine import EngineConfig, Node, Quota, QuotaError, parse_node, parse_quota
from eq_engine.catalog import Catalog, build_catalog

from .logs import logger


class ClusterState:
    def __init__(self, config: EngineConfig) -> None:
        self.config = config
        self._quotas: dict[tuple[str, str], Quota] = {}
        self._nodes: dict[str, Node] = {}
        self._catalog: Catalog | None = None
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
        total: dict[str, int] = {}
        for node in self._nodes.values():
            for name, amount in node.allocatable.items():
                total[name] = total.get(name, 0) + amount
        return total

    def replace(self, kind: str, objects: list[Mapping[str, Any]]) -> None:
        """A fresh listing: forget what it does not contain."""
        if kind == "ElasticQuota":
            self._quotas.clear()
            self._catalog = None
        else:
            self._nodes.clear()
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
        elif event == "DELETED":
            self._nodes.pop(key[1], None)
        elif (node := _parsed(parse_node, raw)) is not None:
            self._nodes[key[1]] = node


def _parsed(parse: Any, raw: Mapping[str, Any]) -> Any:
    """An object the cluster holds but the engine cannot read is left out, and logged."""
    try:
        return parse(raw)
    except QuotaError as error:
        logger.warning("ignoring an unreadable object: %s", error)
        return None
