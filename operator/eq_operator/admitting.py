"""Quota-gated scheduling, the operator's half: lift the admission gate of the pods the engine
admits, and tell the others why they wait.

The webhook gates new pods; the engine decides (`QuotaEngine.admissions`); this module acts.
An admitted pod is marked ungated in the engine as soon as the API server accepts the patch,
so the next decision counts it even before the watch shows the change. It holds its group's
budget until the scheduler binds it, but for `hold` seconds at most: a pod that never schedules
cannot keep the pods behind it waiting for ever. Pods this process did not admit (created
ungated, or admitted before a restart) count only once bound.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Callable

from eq_engine import Pod

from .events import Recorder
from .logs import logger
from .metrics import Metrics
from .view import ClusterView, Ref
from .writing import Writer

CONCURRENT_LIFTS = 16
"""Gate removals in flight at once: a burst of admissions is not a queue of round trips."""


class Admitter:
    def __init__(
        self,
        view: ClusterView,
        writer: Writer,
        events: Recorder,
        metrics: Metrics,
        *,
        hold: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._view, self._writer, self._events, self._metrics = view, writer, events, metrics
        self._hold, self._clock = hold, clock
        self._told: set[str] = set()  # waiting pods that have their Event already
        self._lifted: dict[str, float] = {}  # admitted pods not bound yet, by when

    def _holding(self) -> set[str]:
        """The admitted pods that still hold budget: not bound, not gone, not held too long."""
        engine, now = self._view.engine, self._clock()
        for key, when in list(self._lifted.items()):
            pod = engine.pod(key)
            if pod is None or pod.scheduled or now - when > self._hold:
                del self._lifted[key]
        return set(self._lifted)

    @property
    def pending(self) -> bool:
        """Whether a hold runs out later: a round must come then even if nothing changes."""
        return bool(self._lifted)

    async def round(self) -> set[str]:
        """Admit what fits now; return the groups whose count of waiting pods changed."""
        engine = self._view.engine
        decided = engine.admissions(holding=self._holding())
        pods = [p for p in map(engine.pod, decided.admitted) if p is not None]
        lifts = asyncio.Semaphore(CONCURRENT_LIFTS)

        async def lift(pod: Pod) -> None:
            async with lifts:
                lifted = await self._writer.lift_gate(pod)
            if lifted:
                self._lifted[pod.key] = self._clock()
                engine.set_pod(dataclasses.replace(pod, scheduling_gates=pod.other_gates))
                self._metrics.admitted.inc()
                logger.debug("admitted %s", pod.key, extra={"pod": pod.key})

        await asyncio.gather(*map(lift, pods))
        for key in sorted(decided.waiting.keys() - self._told):
            pod = engine.pod(key)
            if pod is not None:
                ref = Ref("v1", "Pod", pod.namespace, pod.name, pod.uid)
                reason, message = "WaitingForQuota", decided.waiting[key]
                await self._events.record(ref, type="Normal", reason=reason, message=message)
        self._told = set(decided.waiting)
        changed = {
            group
            for group in decided.waiting_per_group.keys() | self._view.waiting.keys()
            if decided.waiting_per_group.get(group) != self._view.waiting.get(group)
        }
        self._view.waiting = dict(decided.waiting_per_group)
        self._metrics.publish_waiting(decided.waiting_per_group)
        return changed
