"""What the webhook knows of the cluster: ElasticQuota objects, node capacity, and the
ElasticQuotaProfiles that say which nodes each quota tree's pods belong on.

Fed by the kit's list-then-watch caches (`quotas`, `nodes` and `profiles` are their sinks); read by
`deciding.py`. The catalog is rebuilt lazily, at the first review after a change, so a burst
of watch events costs one rebuild.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import Any, Generic, TypeVar

from eq_engine import (
    EngineConfig,
    Node,
    Quota,
    QuotaError,
    cluster_capacity,
    parse_node,
    parse_quota,
)
from eq_engine.pools import Profile, parse_profile, profile_of_tree
from eq_engine.tree import Catalog, build_catalog
from eq_kit.caching import Caches

from .logs import logger

_Parsed = TypeVar("_Parsed", Quota, Node, Profile)


class Parsed(Generic[_Parsed]):
    """A kind's objects as the engine reads them, by key; an unreadable one is left out and
    logged. `changed` is called after every change."""

    def __init__(self, parse: Callable[[Any], _Parsed], changed: Callable[[], None]) -> None:
        self.objects: dict[str, _Parsed] = {}
        self._parse: Callable[[Any], _Parsed] = parse
        self._changed = changed

    def upsert(self, key: str, obj: Mapping[str, Any]) -> None:
        try:
            self.objects[key] = self._parse(obj)
        except QuotaError as error:
            logger.warning("ignoring an unreadable object: %s", error)
            self.objects.pop(key, None)
        self._changed()

    def delete(self, key: str) -> None:
        self.objects.pop(key, None)
        self._changed()

    def held(self) -> Collection[str]:
        return self.objects.keys()


class ClusterState:
    def __init__(self, config: EngineConfig) -> None:
        self.config = config
        self.quotas = Parsed(parse_quota, self._quotas_changed)
        self.nodes = Parsed(parse_node, self._nodes_changed)
        self.profiles = Parsed(parse_profile, lambda: None)
        self._catalog: Catalog | None = None
        self._capacity: dict[str, int] | None = None
        self.caches = Caches(())
        """Set by the process once it follows the cluster; ready when every first LIST is."""

    @property
    def ready(self) -> bool:
        return self.caches.ready and bool(self.caches.reflectors)

    @property
    def catalog(self) -> Catalog:
        if self._catalog is None:
            self._catalog = build_catalog(self.quotas.objects.values(), self.config)
        return self._catalog

    def capacity(self) -> dict[str, int]:
        """The cluster's total, as the engine counts it (recomputed after a node event)."""
        if self._capacity is None:
            self._capacity = cluster_capacity(self.nodes.objects.values())
        return self._capacity

    def pool(self, tree_id: str) -> Profile | None:
        """The profile whose pool quota tree `tree_id` covers (the profiles are few)."""
        return profile_of_tree(self.profiles.objects.values(), tree_id)

    def _quotas_changed(self) -> None:
        self._catalog = None

    def _nodes_changed(self) -> None:
        self._capacity = None
