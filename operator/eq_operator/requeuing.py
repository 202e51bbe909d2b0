"""Requeuing gangs that cannot start: a gang whose gates this replica lifted and whose minimum is
not Ready within `--gang-start-timeout` is evicted whole (`eq_engine.decisions.stalled`); its
controller makes its pods again behind the gate, where the gate leaves them until a backoff has
passed (`decisions.backoff`), and meanwhile admits others into the room it held.

Before the first eviction the gang's requeue is recorded on its group's ElasticQuota (the
`requeued-gangs` annotation, the operator's own: how many times, and until when), so that every
replica's gate, a new leader's included, holds it back, and `kubectl eq explain` tells it; the
record goes once the gang has started (or is gone). A pod whose eviction is refused (a
PodDisruptionBudget) or fails is tried again at the next look. Each requeue is an Event on each
pod and on the group, and counts in `elastic_quota_gang_requeues_total`.

A gang admitted by another replica before it lost the Lease is not timed here: the timer is the
replica's that lifted the gates.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from eq_engine import Snapshot
from eq_engine.decisions import Stall, backoff, stalled, started
from eq_engine.model import Requeue, keys
from eq_engine.reading import requeued_annotation
from eq_kit.caching import QUOTAS
from eq_kit.kube import MERGE

from .events import Recorder
from .evicting import Cluster, Outcome
from .logs import logger
from .metrics import Metrics
from .sending import Done, Sender
from .settings import OperatorSettings
from .view import ClusterView, Ref


class Requeuer:
    def __init__(
        self,
        view: ClusterView,
        cluster: Cluster,
        sender: Sender,
        events: Recorder,
        settings: OperatorSettings,
        metrics: Metrics,
        admitted: dict[str, float],
    ) -> None:
        """`admitted`: the gangs whose gates this replica lifted, by when (`Admitter`'s); what
        is done with is taken out of it."""
        self._view, self._cluster, self._sender, self._events = view, cluster, sender, events
        self._settings, self._metrics, self._admitted = settings, metrics, admitted
        self._leaving: dict[str, Stall] = {}
        """Gangs being requeued whose pods are not all evicted yet, by key."""
        self._own: dict[str, tuple[str, Requeue]] = {}
        """Requeues this replica recorded (by gang: its group and the requeue), until the watch
        shows them: the gate must hold a gang back at once, and a watch event of the group
        from before the write would not."""
        self._dropped: set[str] = set()
        """Requeues this replica took off the record, until the watch shows them gone."""

    def requeues(self) -> dict[str, Requeue]:
        """Every requeued gang, by key, as the groups record them and this replica wrote them."""
        seen = self._view.requeues()
        for gang, (_, requeue) in list(self._own.items()):
            if seen.get(gang) == requeue:
                del self._own[gang]
        self._dropped &= seen.keys()
        own = {gang: requeue for gang, (_, requeue) in self._own.items()}
        return {**{g: r for g, r in seen.items() if g not in self._dropped}, **own}

    async def round(self, *, refresh: Callable[[], Snapshot | None], acting: bool = True) -> None:
        """When `acting` (leading), requeue the gangs that did not start in time, and forget
        the requeues of those that started since."""
        snapshot = refresh()
        if snapshot is None or not acting:
            return
        now = time.time()
        for gang, begun in started(snapshot, self._admitted).items():
            if begun is not False:  # started, or gone: nothing to time
                del self._admitted[gang]
        timeout = self._settings.gang_start_timeout
        for stall in stalled(snapshot, self._admitted, now=now, timeout=timeout):
            del self._admitted[stall.gang]
            if await self._record(stall, now):
                self._leaving[stall.gang] = stall
        for stall in list(self._leaving.values()):
            await self._evict(stall)
        snapshot = refresh()  # the evictions' awaits let the watch in
        if snapshot is not None:
            await self._forget_started(snapshot, now)

    async def _record(self, stall: Stall, now: float) -> bool:
        """The requeue written on the group's ElasticQuota; whether the server took it."""
        before = self.requeues().get(stall.gang)
        times = 1 if before is None else before.times + 1
        settings = self._settings
        wait = backoff(
            times, base=settings.gang_requeue_backoff, cap=settings.gang_requeue_max_backoff
        )
        requeue = Requeue(stall.gang, times, now + wait)
        recorded = self._group_requeues(stall.group)
        if not await self._write(stall.group, {**recorded, stall.gang: requeue}):
            return False
        self._own[stall.gang] = (stall.group, requeue)
        self._dropped.discard(stall.gang)
        text = (
            f"Gang {stall.name} did not start within {settings.gang_start_timeout:g}s ("
            f"{stall.ready} of its minimum {stall.minimum} pods Ready): its {len(stall.pods)} "
            f"pods are evicted, and wait behind the gate again; not admitted before "
            f"{requeue.until_text} (requeued {times} time{'s' if times > 1 else ''})"
        )
        logger.info("%s", text, extra={"group": stall.group})
        self._tell(stall, text)
        tree = self._view.engine.status(stall.group).tree
        self._metrics.gang_requeues.labels(stall.group, tree).inc()
        return True

    async def _evict(self, stall: Stall) -> None:
        """Every pod of the gang still there; the requeue is done once none is left."""
        left = []
        for key in stall.pods:
            pod = self._view.engine.pod(key)
            if pod is None or pod.terminating:
                continue
            namespace, name = key.split("/", 1)
            eviction = await self._cluster.evict(namespace, name)
            if eviction.outcome in (Outcome.BLOCKED, Outcome.FAILED):
                left.append(key)
        if left:
            logger.warning(
                "gang %s: %d pods not evicted yet; again at the next look", stall.name, len(left)
            )
        else:
            del self._leaving[stall.gang]

    async def _forget_started(self, snapshot: Snapshot, now: float) -> None:
        """Take off the record the requeued gangs that started since, and those with no pods
        whose backoff has passed (gone: the pods its controller makes later are a new gang)."""
        groups = {*self._view.requeued, *(group for group, _ in self._own.values())}
        for group in sorted(groups):
            requeues = self._group_requeues(group)
            done = {
                gang
                for gang, begun in started(snapshot, requeues).items()
                if begun or (begun is None and requeues[gang].until <= now)
            } - self._leaving.keys()
            if done and await self._write(
                group, {g: r for g, r in requeues.items() if g not in done}
            ):
                for gang in done:
                    self._own.pop(gang, None)
                self._dropped |= done

    def _group_requeues(self, group: str) -> dict[str, Requeue]:
        """The group's requeues, by gang, as `requeues` has them."""
        recorded = {
            r.gang: r for r in self._view.requeued.get(group, ()) if r.gang not in self._dropped
        }
        own = {gang: requeue for gang, (owner, requeue) in self._own.items() if owner == group}
        return {**recorded, **own}

    async def _write(self, group: str, requeues: dict[str, Requeue]) -> bool:
        """The group's `requeued-gangs` annotation made of `requeues` (none: it goes); whether
        the server took it."""
        quota = self._view.quota_refs.get(group)
        if quota is None:
            return False
        value = requeued_annotation(requeues)
        patch = {"metadata": {"uid": quota.uid, "annotations": {keys.REQUEUED_GANGS: value}}}
        path = f"{QUOTAS.url(quota.namespace)}/{quota.name}"
        sent = await self._sender.send("PATCH", path, patch, content_type=MERGE)
        if not isinstance(sent, Done):
            logger.warning("cannot record the requeued gangs of %s: %s", group, sent.why)
            return False
        return True

    def _tell(self, stall: Stall, text: str) -> None:
        """An Event on each pod of the gang and on its group."""
        for key in stall.pods:
            pod = self._view.engine.pod(key)
            if pod is not None:
                namespace, name = key.split("/", 1)
                ref = Ref("v1", "Pod", namespace, name, pod.uid)
                self._events.record(ref, type="Warning", reason="GangRequeued", message=text)
        quota = self._view.quota_refs.get(stall.group)
        if quota is not None:
            self._events.record(
                quota, type="Warning", reason="GangRequeued", message=text, about=stall.gang
            )
