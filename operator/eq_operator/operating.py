"""The operator's clock: recompute in batches, admit gated pods and write what changed, reclaim
when leading.

Only the watch changes the engine (view.py); each step here recomputes it once, then takes its
decisions (admissions, the fields to write, reclaim plans) from that state and applies them.
What the watch delivered comes from the view in one call (`ClusterView.take`), made where the
loop acts on it (before a recompute, before it wants the objects seen compared, before it
reports the unreadable ones); what it has not acted on yet it keeps (`_observed`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from typing import Protocol

from eq_engine import Problem, Snapshot
from eq_engine.pools import KIND as PROFILE_KIND

from .admitting import Admitter
from .builtins import Builtins
from .events import Recorder
from .logs import logger
from .metrics import Metrics
from .pools import Pools
from .preempting import Preempter
from .reclaiming import Reclaimer
from .requeuing import Requeuer
from .settings import OperatorSettings
from .view import ClusterView, Observed, Ref
from .writing import Writer

AUDIT_INTERVAL = 10.0
"""Seconds between two looks for new configuration problems (each one is reported once)."""


class Readiness(Protocol):
    @property
    def ready(self) -> bool: ...

    async def wait_ready(self) -> None: ...


class Loop:
    def __init__(
        self,
        view: ClusterView,
        writer: Writer,
        admitter: Admitter,
        reclaimer: Reclaimer,
        preempter: Preempter,
        requeuer: Requeuer,
        builtins: Builtins,
        pools: Pools,
        events: Recorder,
        metrics: Metrics,
        settings: OperatorSettings,
        *,
        ready: Readiness,
    ) -> None:
        self._view, self._writer = view, writer
        self._reclaimer, self._preempter, self._requeuer = reclaimer, preempter, requeuer
        self._builtins, self._pools = builtins, pools
        self._ready = ready
        self._admitter = admitter
        self._admit = True  # something changed since the last admission round
        self._snapshot: Snapshot | None = None  # the last recompute's
        self._events, self._metrics, self._settings = events, metrics, settings
        self.leading = False
        self._promoted = asyncio.Event()
        """Set when this replica becomes the leader: the loop's pause ends."""
        self.heartbeat = time.monotonic()
        self._reported: set[Problem] = set()
        self._synced = False
        self._observed = Observed()
        """What the view handed over that the loop has not acted on yet."""
        self._next_audit = 0.0
        self._audit_held: float | None = None  # since when the node pools hold the audit back

    @property
    def synced(self) -> bool:
        """Every kind's first LIST was in the engine when the last step began: no decision is
        taken before."""
        return self._synced

    def _take(self) -> Observed:
        """What the view observed since the last take, with what the loop has not acted on."""
        self._observed |= self._view.take()
        return self._observed

    def leading_changed(self, leading: bool) -> None:
        """A new leader compares every object once; one that stops leaves its pending writes
        to the next. The reclaim clocks run on every replica and are kept."""
        self.leading = leading
        if leading:
            self._writer.want(self._view.quota_refs, self._view.pod_keys())
            self._admit = True
            self._promoted.set()
        else:
            self._admitter.stop()
            self._writer.clear()

    async def run(self) -> None:
        reclaim = self._settings.reclaim
        next_reclaim = time.monotonic() + reclaim.interval
        while True:
            await self._pause()
            self.heartbeat = now = time.monotonic()
            try:
                if self.leading and self._ready.ready:
                    # before the recompute, which then counts them, rather than placing every
                    # pod a second time in a tree with a new root
                    await self._builtins.ensure()
                    if not self._synced:  # the node pools' roots, for the first one
                        await self._pools.ensure(wait=True)
                computed_before = self._synced
                await self.step()
                acting = self.leading and self._synced
                if acting:
                    await self._pools.ensure()
                    self.report_unreadable()
                # The audit sweeps every group (0.1 s on 11,110): not in the pass of the first
                # computation, whose writes and the probes' answers go first.
                audit = acting and computed_before and now >= self._next_audit
                if audit and self._audit_due(now):
                    self._next_audit = now + AUDIT_INTERVAL
                    self.report_problems()
                if now >= next_reclaim and self._synced:
                    next_reclaim = now + reclaim.interval
                    if reclaim.enabled:
                        await self._reclaimer.round(acting=acting, refresh=self.recompute)
                    await self._preempter.round(acting=acting, refresh=self.recompute)
                    if self._settings.gang_start_timeout:
                        await self._requeuer.round(acting=acting, refresh=self.recompute)
                if acting:
                    self._events.flush()
            except Exception:  # a bug must not stop the operator's clock
                logger.exception("the operator's loop failed; going on")

    async def _pause(self) -> None:
        """A batch interval, cut short when this replica becomes the leader and, until the
        first LISTs are in, when they are: the first computation, and a new leader's first
        writes, start at once rather than up to an interval later."""
        waits: list[asyncio.Future[object]] = [asyncio.ensure_future(self._promoted.wait())]
        if not self._ready.ready:
            waits.append(asyncio.ensure_future(self._ready.wait_ready()))
        try:
            await asyncio.wait(
                waits, timeout=self._settings.batch_interval, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            for waiting in waits:
                waiting.cancel()
        self._promoted.clear()

    def _audit_due(self, now: float) -> bool:
        """Not while the node pools' roots are being written (a tree whose root has not come
        back yet would be reported rootless), but never put off by more than a few intervals
        (a root that cannot be written must not silence every other problem)."""
        if self._pools.settled:
            self._audit_held = None
            return True
        if self._audit_held is None:
            self._audit_held = now
        return now - self._audit_held >= 3 * AUDIT_INTERVAL

    async def step(self) -> None:
        """Recompute if anything changed, then (when leading) admit the gated pods that fit and
        start writing what differs, with the writes that failed before and are due again (the
        writes go on in the background while the next batch of events comes in)."""
        writer = self._writer
        # Decisions start once every kind's first LIST is in the engine.
        self._synced = self._synced or self._ready.ready
        snapshot = self.recompute()
        if self.leading and snapshot is not None and (self._admit or self._admitter.pending):
            self._admit = False
            admitted = await self._admitter.round(snapshot)
            if self.leading:  # still: the Lease may have been lost meanwhile
                writer.want(admitted)
        seen = self._take()  # the objects seen meanwhile too
        if self.leading:
            writer.want(seen.quotas, seen.pods)
        self._observed = dataclasses.replace(seen, quotas=frozenset(), pods=frozenset())
        if self.leading and self._synced:
            writer.start()  # the workers, unless they run

    def recompute(self) -> Snapshot | None:
        """Bring the engine up to date with what the watch delivered and hand back its snapshot;
        when leading, want the fields that changed written. None before every kind's first LIST
        is in: nothing reads the numbers before, and while the tree is incomplete the engine
        only keeps the pods it is fed, to place them all once (each recompute meanwhile would
        place every pod listed so far again, as each page of groups changes the tree)."""
        view, observed = self._view, self._take()
        if observed.changed and self._synced:
            self._observed = dataclasses.replace(observed, changed=False)
            started = time.perf_counter()
            self._snapshot = view.engine.recompute()
            self._metrics.recompute.observe(time.perf_counter() - started)
            changes = self._snapshot.changes
            if self.leading:
                self._writer.want((status.name for status in changes.groups), changes.pod_labels)
            self._admit = True
        return self._snapshot

    def report_unreadable(self) -> None:
        """An Event on each object found unreadable since the last report."""
        observed = self._take()
        self._observed = dataclasses.replace(observed, unreadable=())
        for ref, error in observed.unreadable:
            message = f"not counted: {error}"
            self._events.record(ref, type="Warning", reason="InvalidObject", message=message)

    def report_problems(self) -> None:
        """Log, and record as an Event on the object, each problem not reported before."""
        problems = {*self._view.engine.problems, *self._pools.problems}
        for problem in sorted(problems - self._reported):
            logger.warning("%s", problem, extra={"object": f"{problem.kind} {problem.ref}"})
            ref = self._ref(problem)
            if ref is not None:
                self._events.record(
                    ref,
                    type="Warning",
                    reason="ConfigurationProblem",
                    message=f"{problem.field}: {problem.message}",
                )
        self._reported = problems

    def _ref(self, problem: Problem) -> Ref | None:
        namespace, _, name = problem.ref.partition("/")
        if problem.kind == PROFILE_KIND:
            return self._pools.ref(problem.ref)
        if problem.kind == "Pod":
            pod = self._view.engine.pod(problem.ref)
            return None if pod is None else Ref("v1", "Pod", namespace, name, pod.uid)
        ref = self._view.quota_refs.get(name)
        return ref if ref is not None and ref.namespace == namespace else None
