"""Quota-gated scheduling, the operator's half: lift the admission gate of the pods the engine
admits, and tell the others why they wait.

The webhook gates new pods; the engine decides (`decisions.admissions`, on a recompute's snapshot);
this module acts, and never changes the engine: only the watch does. An admitted pod holds its
group's budget as soon as the API server accepts the patch (`holding`), so the next decision
counts it even while the watch still shows its gate, until the scheduler binds it, but for
`hold` seconds at most: a pod that never schedules cannot keep the pods behind it waiting for
ever. A pod deleted meanwhile holds nothing: the engine no longer has it. A lift that fails is
decided again after a backoff. Pods this process did not admit (created ungated, or admitted
before a restart) count only once bound.

The lifts go out beside the loop, not inside its step: a round decides and hands its pods to
lifts of their own (as many in flight as their budget lets go at once: `settings.api_qps`),
each holding its group's budget from the decision on, and returns; the loop goes on with its
batches while they are sent. Awaited inside the step, 16 at a time, a round's lifts and the
batch interval after them took turns, and a burst of new pods was lifted slower than the
scheduler binds (46-47 a second against its 50; 16 a round trip from an API server slow to
answer), ever further behind (docs/benchmarks.md, "The real control plane").

The lifts waiting for a place in flight go most important first (priority, then age: the
gate's queue order), whatever their group and round, as a scheduler takes the most important
of every queue's heads first: under the write budget, a large job of one group is not lifted
after the small pods another group was given a moment earlier.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
import time
from collections.abc import AsyncIterator, Callable, Mapping

from eq_engine import Pod, Snapshot
from eq_engine.decisions import Cause, admissions, queue_order
from eq_engine.model import Requeue
from eq_engine.pools import KIND, Profile
from eq_kit.backoff import FIRST_RETRY, LAST_RETRY, Backoff

from .events import Recorder
from .logs import logger
from .metrics import Metrics
from .view import ClusterView, Ref
from .writing import Placement, Writer


class Admitter:
    def __init__(
        self,
        view: ClusterView,
        writer: Writer,
        events: Recorder,
        metrics: Metrics,
        *,
        hold: float,
        lifts: int,
        requeued: Callable[[], Mapping[str, Requeue]],
        admitted: dict[str, float],
        pools: Callable[[], Mapping[str, Profile]] = dict,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """`lifts`: gate removals in flight at once (the operator's: its write budget's burst,
        `--api-burst`), so that a burst of admissions is not a queue of round trips;
        `requeued`: the gangs held back after a requeue (`Requeuer.requeues`); `admitted`: where
        to note each gang whose gates it lifted, and when (`Requeuer` times their start);
        `pools`: the profile of each node pool, by tree id (`Pools.by_tree`)."""
        self._view, self._writer, self._events, self._metrics = view, writer, events, metrics
        self._hold, self._clock = hold, clock
        self._told: dict[str, Cause] = {}  # waiting pods' causes as their Events say
        self._admitted_gangs: set[str] = set()  # gangs whose wait is timed already
        self._requeued, self._gangs_admitted = requeued, admitted
        self._lifted: dict[str, float] = {}  # admitted pods not bound yet, by when
        self._failed: dict[str, Backoff] = {}  # lifts refused or failed, with their backoff
        self._lifting: set[str] = set()  # admitted pods whose lift is not answered yet
        self._lifts = OrderedSlots(lifts)
        self._pools = pools
        self._placed: dict[str, str] = {}  # pods of several pools lifted, by the group chosen
        self._rounds: set[asyncio.Task[None]] = set()  # the rounds' lifts still going on

    def held(self) -> set[str]:
        """The admitted pods that still hold budget: not bound, not gone, not held too long."""
        engine, now = self._view.engine, self._clock()
        for key, when in list(self._lifted.items()):
            pod = engine.pod(key)
            if pod is None or pod.scheduled or now - when > self._hold:
                del self._lifted[key]
        for key in [key for key in self._failed if engine.pod(key) is None]:
            del self._failed[key]
        held = self._lifted.keys() | self._lifting
        self._placed = {key: group for key, group in self._placed.items() if key in held}
        return held

    @property
    def pending(self) -> bool:
        """Whether a hold runs out, a failed lift is due later or a requeued gang's backoff
        ends: a round must come then even if nothing changes."""
        return bool(self._lifted or self._failed or self._requeued())

    async def round(self, snapshot: Snapshot) -> set[str]:
        """Admit what fits now, on the loop's latest snapshot, and start lifting the admitted
        pods' gates (`settled` awaits them); return the groups whose count of waiting pods
        changed."""
        engine, now = self._view.engine, self._clock()
        pools = self._pools()
        decided = admissions(
            snapshot,
            holding=self.held(),
            requeued=self._requeued(),
            now=time.time(),
            placed=self._placed,
            selectors={tree: profile.node_selector for tree, profile in pools.items()},
        )
        # The decision's pods, read before any await: the watch may change the engine meanwhile.
        pods = [
            pod
            for pod in map(engine.pod, decided.admitted)
            if pod is not None and (pod.key not in self._failed or self._failed[pod.key].due(now))
        ]
        # A pod's Event when it starts to wait, and when what it waits for changes (a gang's
        # missing pods, then quota); not each time the numbers in the message move.
        told = {
            key: Ref("v1", "Pod", pod.namespace, pod.name, pod.uid)
            for key, wait in sorted(decided.waiting.items())
            if self._told.get(key) != wait.cause and (pod := engine.pod(key)) is not None
        }
        placements = {
            key: self._placement(snapshot, group, pools) for key, group in decided.placed.items()
        }
        if pods:
            self._lifting.update(pod.key for pod in pods)
            self._placed.update((key, p.group) for key, p in placements.items())
            lifts = asyncio.create_task(self._lift_all(pods, placements))
            self._rounds.add(lifts)
            lifts.add_done_callback(self._rounds.discard)
        for key, ref in told.items():
            reason, message = "WaitingForQuota", decided.waiting[key].message
            self._events.record(ref, type="Normal", reason=reason, message=message)
        self._told = {key: wait.cause for key, wait in decided.waiting.items()}
        waiting = {
            group: _waiting(pods, decided.gangs_waiting_per_group.get(group, 0))
            for group, pods in decided.waiting_per_group.items()
        }
        changed = self._writer.set_waiting(waiting)
        self._metrics.publish_waiting(decided.waiting_per_group, decided.gangs_waiting_per_group)
        return changed

    @staticmethod
    def _placement(snapshot: Snapshot, group: str, pools: Mapping[str, Profile]) -> Placement:
        """Where the gate put a pod of several pools: the group, and its tree's node pool."""
        tree = snapshot.tree
        profile = pools.get(tree.groups[tree.index[group]].tree_id)
        if profile is None:
            return Placement(group, None)
        return Placement(group, profile.node_selector, f"{KIND} {profile.ref}")

    async def _lift_all(self, pods: list[Pod], placements: Mapping[str, Placement]) -> None:
        """Lift the gates of a round's pods, in its order, then time its gangs' waits."""
        await asyncio.gather(*(self._lift(pod, placements.get(pod.key)) for pod in pods))
        lifted = [pod for pod in pods if pod.key in self._lifted]
        self._time_gangs(lifted)
        now = time.time()
        for pod in lifted:
            if pod.gang is not None:
                self._gangs_admitted.setdefault(pod.gang.key, now)

    async def _lift(self, pod: Pod, placement: Placement | None) -> None:
        try:
            async with self._lifts.slot(queue_order(pod)):
                lifted = await self._writer.lift_gate(pod, placement)
        finally:
            self._lifting.discard(pod.key)
        if lifted:
            self._lifted[pod.key] = self._clock()
            self._failed.pop(pod.key, None)
            self._metrics.admitted.inc()
            if pod.created:  # gated when it was created: the webhook gates new pods
                self._metrics.gate_wait.observe(max(0.0, time.time() - pod.created))
            logger.debug("admitted %s", pod.key, extra={"pod": pod.key})
        else:
            retry = self._failed.setdefault(pod.key, Backoff(FIRST_RETRY, LAST_RETRY))
            retry.failed(self._clock())

    async def settled(self) -> None:
        """Until every lift decided so far is answered."""
        while self._rounds:
            await asyncio.gather(*self._rounds)

    def stop(self) -> None:
        """Lift no more gates (a stand-by lifts none; on the way out): the lifts not sent yet
        are dropped, and their pods decided again by the next leader."""
        for lifts in self._rounds:
            lifts.cancel()
        self._lifting.clear()

    def _time_gangs(self, lifted: list[Pod]) -> None:
        """The wait of each gang whose gates were lifted for the first time: from its first
        pod's creation."""
        self._admitted_gangs &= self._view.engine.gang_keys()
        first: dict[str, float] = {}
        for pod in lifted:
            if pod.gang is not None and pod.gang.key not in self._admitted_gangs and pod.created:
                first[pod.gang.key] = min(first.get(pod.gang.key, pod.created), pod.created)
        for created in first.values():
            self._metrics.gang_wait.observe(max(0.0, time.time() - created))
        self._admitted_gangs |= first.keys()


def _waiting(pods: int, gangs: int) -> str:
    """`4`, or `8 (2 gangs)`: the pods waiting, and the gangs among them."""
    if not gangs:
        return str(pods)
    return f"{pods} ({gangs} gang{'s' if gangs > 1 else ''})"


class OrderedSlots:
    """At most `slots` holders at once; those waiting are let in lowest order first (a
    semaphore lets them in as they came)."""

    def __init__(self, slots: int) -> None:
        self._free = slots
        self._waiting: list[tuple[tuple[int, float, str], int, asyncio.Future[None]]] = []
        self._arrivals = itertools.count()  # equal orders: as they came

    @contextlib.asynccontextmanager
    async def slot(self, order: tuple[int, float, str]) -> AsyncIterator[None]:
        if self._free and not self._waiting:
            self._free -= 1
        else:
            given = asyncio.get_running_loop().create_future()
            heapq.heappush(self._waiting, (order, next(self._arrivals), given))
            try:
                await given
            except asyncio.CancelledError:
                if given.done() and not given.cancelled():  # handed over as it was cancelled
                    self._release()
                raise
        try:
            yield
        finally:
            self._release()

    def _release(self) -> None:
        while self._waiting:
            _, _, given = heapq.heappop(self._waiting)
            if not given.done():  # a waiter cancelled meanwhile is skipped
                given.set_result(None)
                return
        self._free += 1
