"""Preemption inside a group: evict what the engine's preemption plans name, with Events.

The pod (or gang) that holds its group's queue, on what the admission decision sees
(`eq_engine.decisions.preemptions`), has lower-priority pods of its group evicted through the
Eviction API (`evicting.Evictions.take`: budgets honoured, `max_evictions` a round, refusals
tried again after a backoff, a Job's pod out of its Job's count first), and is admitted by the
gate once the room is there, before anything of lower priority (the gate's queue order). No
delay, unlike reclaim: the room is the group's own, and a more important pod waiting for it is
no burst. A round goes on only while the same pods wait first: should another pod go ahead of
them meanwhile, it is planned for at the next look. Each preemption is told on both sides:
`Preempted` on each pod taken and its group, `Preempting` on the pods it makes room for. A
gang whose pods disagree on their priority preempts nobody, and a Warning on its pods says why.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Mapping

from eq_engine import Snapshot
from eq_engine.decisions import Candidate, GroupPreemption, GroupReclaim, admissions, preemptions
from eq_engine.model import Requeue

from .events import Recorder
from .evicting import Evictions, Purpose
from .logs import logger
from .metrics import Metrics
from .settings import ReclaimSettings
from .view import ClusterView, Ref


class Preempter:
    def __init__(
        self,
        view: ClusterView,
        evictions: Evictions,
        events: Recorder,
        settings: ReclaimSettings,
        metrics: Metrics,
        holding: Callable[[], Collection[str]],
        requeued: Callable[[], Mapping[str, Requeue]],
    ) -> None:
        """`holding`: the pods the gate admitted a moment ago, not bound yet (they hold their
        group's room, as the admission decision counts them); `requeued`: the gangs held back
        after a requeue, which preempt nobody meanwhile."""
        self._view, self._evictions, self._events = view, evictions, events
        self._settings, self._holding, self._requeued = settings, holding, requeued
        self._purpose = Purpose.named(
            "Preempted", "Preemption", others="lower-priority pods", attempts=metrics.preemptions
        )
        self._refused: dict[tuple[str, ...], str] = {}
        """Gangs told they preempt nobody, and why: told once while it stays so."""

    async def round(self, *, refresh: Callable[[], Snapshot | None], acting: bool = True) -> None:
        """When `acting` (leading), make room where a more important pod waits."""
        snapshot = refresh()
        if snapshot is None or not snapshot.gated or not self._anywhere(snapshot):
            self._refused.clear()
            return
        plans = self._plans(snapshot, self._evictions.evicted)
        refusals = {p.preemptor: p.refusal for p in plans.values() if p.refusal}
        if acting:
            for planned in plans.values():
                if planned.refusal and self._refused.get(planned.preemptor) != planned.refusal:
                    self._refuse(planned)
                elif planned.victims((), self._evictions.evicted):
                    await self._preempt(planned, refresh)
        self._refused = refusals

    def _anywhere(self, snapshot: Snapshot) -> bool:
        """Whether any group may preempt: all by default (`--preemption`), else those whose
        `koord-queue/enable-queueunit-preemption` says so."""
        return self._settings.preemption or any(
            group.queue.preemption for group in snapshot.tree.groups
        )

    def _plans(
        self, snapshot: Snapshot, leaving: Collection[str], only: str | None = None
    ) -> dict[str, GroupPreemption]:
        settings, now = self._settings, time.time()
        return preemptions(
            snapshot,
            admissions(snapshot, holding=self._holding(), requeued=self._requeued(), now=now),
            leaving=leaving,
            now=now,
            only=only,
            default=settings.preemption,
        )

    async def _preempt(
        self, planned: GroupPreemption, refresh: Callable[[], Snapshot | None]
    ) -> None:
        group, engine = planned.group, self._view.engine
        assert planned.plan is not None

        def replan(leaving: Collection[str]) -> GroupReclaim | None:
            snapshot = refresh()  # on what the watch shows now, never on an old plan
            if snapshot is None:
                return None
            now = self._plans(snapshot, leaving, group).get(group)
            return now.plan if now is not None and now.preemptor == planned.preemptor else None

        def reason(_: GroupReclaim, candidate: Candidate) -> str:
            priorities = {p.priority for key in candidate.keys if (p := engine.pod(key))}
            return f"its priority {', '.join(map(str, sorted(priorities)))} is lower; "

        before = set(self._evictions.evicted)
        await self._evictions.take(
            planned.plan,
            replan,
            purpose=self._purpose,
            phrase=f"to make room in group {group} for {planned.what} of priority "
            f"{planned.priority}",
            reason=reason,
        )
        taken = sorted(set(self._evictions.evicted) - before)
        if taken:
            text = (
                f"Evicted {', '.join(taken)} of lower priority in group {group} to make room "
                f"for {planned.what} of priority {planned.priority}"
            )
            logger.info("%s", text, extra={"group": group})
            self._tell(planned, "Normal", "Preempting", text)

    def _refuse(self, planned: GroupPreemption) -> None:
        text = f"{planned.what.capitalize()} in group {planned.group}: {planned.refusal}"
        logger.warning("%s", text, extra={"group": planned.group})
        self._tell(planned, "Warning", "PreemptionRefused", text)

    def _tell(self, planned: GroupPreemption, kind: str, reason: str, text: str) -> None:
        """An Event on each of the pods the room is for."""
        for key in planned.preemptor:
            pod = self._view.engine.pod(key)
            if pod is not None:
                namespace, name = key.split("/", 1)
                ref = Ref("v1", "Pod", namespace, name, pod.uid)
                self._events.record(ref, type=kind, reason=reason, message=text)
