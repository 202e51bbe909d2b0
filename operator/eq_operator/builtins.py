"""The root, system and default groups exist as ElasticQuota objects: created by the leader when
its cache lacks them, never deleted, never changed once there.

The leader creates them before its first computation and waits, briefly, for its watch to
show them, so that the computation counts them: a group arriving after it would make the
engine place every pod again in a tree with a new root.

Creating them is not part of start-up: a replica that starts while the API server is away
serves its probes and follows the Lease at once, and the leader creates what is missing as
soon as its caches are listed, trying again after a short backoff if the API refuses.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from eq_engine import EngineConfig, format_resource_list
from eq_engine.model import keys
from eq_kit.backoff import Backoff
from eq_kit.caching import QUOTAS

from .logs import logger
from .sending import Conflict, Done, NotDone, Sender
from .view import ClusterView, until_shown


def builtin_objects(config: EngineConfig) -> list[dict[str, Any]]:
    def group(name: str, labels: dict[str, str], spec: dict[str, Any]) -> dict[str, Any]:
        return {
            "apiVersion": QUOTAS.api_version,
            "kind": "ElasticQuota",
            "metadata": {"name": name, "namespace": config.namespace, "labels": labels},
            "spec": spec,
        }

    default_spec: dict[str, Any] = {}
    if config.default_min:
        default_spec["min"] = format_resource_list(config.default_min)
    if config.default_max is not None:
        default_spec["max"] = format_resource_list(config.default_max)
    return [
        group(config.root_name, {keys.IS_PARENT: "true"}, {}),
        group(config.system_name, {keys.PARENT: config.root_name}, {}),
        group(config.default_name, {keys.PARENT: config.root_name}, default_spec),
    ]


class Builtins:
    def __init__(
        self,
        sender: Sender,
        view: ClusterView,
        config: EngineConfig,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._sender, self._view, self._clock = sender, view, clock
        self._objects = builtin_objects(config)
        self._namespace = config.namespace
        self._retry = Backoff(first=1.0, cap=5.0)  # a reflector's pace, capped low: readiness waits

    def missing(self) -> list[str]:
        """The built-in groups the cache does not hold (in their namespace)."""
        refs = self._view.quota_refs
        names = (body["metadata"]["name"] for body in self._objects)
        return [
            name for name in names if name not in refs or refs[name].namespace != self._namespace
        ]

    async def ensure(self) -> None:
        """Create the built-in groups the cache lacks (leader only, caches listed), unless the
        last attempt failed less than a backoff ago."""
        missing = set(self.missing())
        if not missing or not self._retry.due(self._clock()):
            return
        path = QUOTAS.url(self._namespace)
        for body in self._objects:
            name = body["metadata"]["name"]
            if name not in missing:
                continue
            match await self._sender.send("POST", path, body):
                case Done():
                    logger.info("created the built-in group %s/%s", self._namespace, name)
                case Conflict():
                    pass  # created meanwhile: the watch will show it
                case failure:
                    self._failed(name, failure)
                    return
        self._retry.reset()
        await until_shown(lambda: not self.missing())

    def _failed(self, name: str, failure: NotDone) -> None:
        now = self._clock()
        self._retry.failed(now)
        logger.warning(
            "could not create the built-in group %s/%s (%r); trying again in %.1fs",
            self._namespace,
            name,
            failure.error,
            self._retry.not_before - now,
        )
