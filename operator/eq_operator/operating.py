"""The operator's clock: recompute in batches, write what changed, reclaim when leading."""

from __future__ import annotations

import asyncio
import time

from .logs import logger
from .metrics import Metrics
from .reclaiming import Reclaimer
from .settings import OperatorSettings
from .view import ClusterView
from .writing import Writer


class Loop:
    def __init__(
        self,
        view: ClusterView,
        writer: Writer,
        reclaimer: Reclaimer,
        metrics: Metrics,
        settings: OperatorSettings,
    ) -> None:
        self._view, self._writer, self._reclaimer = view, writer, reclaimer
        self._metrics, self._settings = metrics, settings
        self.leading = False
        self.heartbeat = time.monotonic()
        self._groups: set[str] = set()
        self._pods: set[str] = set()

    def leading_changed(self, leading: bool) -> None:
        """A new leader compares every object once; it inherits no reclaim timers."""
        self.leading = leading
        if leading:
            self._groups.update(self._view.quota_refs)
            self._pods.update(self._view.pod_labels)
            self._reclaimer.forget()

    async def run(self) -> None:
        reclaim = self._settings.reclaim
        next_reclaim = time.monotonic() + reclaim.interval
        while True:
            await asyncio.sleep(self._settings.batch_interval)
            self.heartbeat = time.monotonic()
            try:
                await self.step()
                if reclaim.enabled and self.heartbeat >= next_reclaim:
                    next_reclaim = self.heartbeat + reclaim.interval
                    if self.leading and self._view.synced:
                        await self._reclaimer.round()
            except Exception:  # a bug must not stop the operator's clock
                logger.exception("the operator's loop failed; going on")

    async def step(self) -> None:
        """Recompute if anything changed, then (when leading) write what differs."""
        view = self._view
        if view.dirty:
            view.dirty = False
            started = time.perf_counter()
            changes = view.engine.recompute()
            self._metrics.recompute.observe(time.perf_counter() - started)
            self._metrics.publish(changes.groups, changes.removed_groups)
            self._groups.update(status.name for status in changes.groups)
            self._pods.update(changes.pod_labels)
        self._groups |= view.touched_quotas
        self._pods |= view.touched_pods
        view.touched_quotas, view.touched_pods = set(), set()
        if self.leading and view.synced and (self._groups or self._pods):
            groups, pods = self._groups, self._pods
            self._groups, self._pods = set(), set()
            await self._writer.write(sorted(groups), sorted(pods))
