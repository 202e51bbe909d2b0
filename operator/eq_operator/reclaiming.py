"""Taking borrowed capacity back: evict what the engine's reclaim plans name, with Events.

Reclaim is paced by windows, as Koordinator's revoke is: a group whose used has stayed above
its runtime for a whole delay loses up to `max_evictions` pods, least important first, through
the policy/v1 Eviction API (PodDisruptionBudgets are honoured), and that round starts a new
window: the group is judged again only after another whole delay. So a group loses at most
`max_evictions` pods per delay, and a replacement that runs ungated (gating off, the webhook
down) is judged only after a delay of its own, instead of being evicted as soon as it runs.

The window belongs to the group, not to the leader: before a round's first eviction the leader
stamps the group's ElasticQuota (the `last-reclaim` annotation), and waits for the write to be
taken. Every replica watches that annotation, and a replica that sees it change starts the
group's window there, on its own clock (as with the Lease, clocks of two nodes are never
compared). So a new leader, whether the old one gave the Lease up or was killed mid-round,
never evicts from a group less than a delay after the old leader's round began.

Each eviction is decided on the engine as the watch has it at that moment: before each one the
loop's recompute runs (`refresh`) and the group is planned again, so a pod that the watch has
since made in-quota, or a group no longer over its runtime, is left alone; the Event gives the
numbers of that plan. Every attempt counts against `max_evictions`. A refused (429) or failed
eviction keeps that pod, which is tried again after a backoff (1 s doubling to 30 s, or the
server's `Retry-After`); meanwhile the plan names other over-quota pods only. A pod already
gone (404) counts as done. Pods already terminating, or evicted a moment ago, count as
returned, so nothing is evicted twice.

Every replica keeps the over-use clocks from what it watches; only the leader evicts. A replica
that becomes leader has been timing the groups all along, so losing the Lease for a moment does
not start the clocks over.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from eq_engine import ResourceList, Snapshot, format_resource_list
from eq_engine.decisions import GroupReclaim, Victim, reclaims
from eq_engine.model import keys
from eq_kit.backoff import Backoff
from eq_kit.caching import QUOTAS
from eq_kit.kube import MERGE, micro_time

from .events import Recorder
from .jobs import NOT_A_JOBS, JobPod, JobPods
from .logs import logger
from .metrics import Metrics
from .sending import Done, Gone, Refused, Sender
from .settings import ReclaimSettings
from .view import ClusterView, Ref


class Outcome(StrEnum):
    EVICTED = "evicted"
    BLOCKED = "blocked"
    GONE = "gone"
    FAILED = "failed"
    DRY_RUN = "dry_run"


@dataclass(frozen=True, slots=True)
class Eviction:
    """What came of an eviction."""

    outcome: Outcome
    retry_after: float = 0.0
    """Seconds the server asked to wait before the next try; 0: not said."""
    job: JobPod = NOT_A_JOBS
    """The pod as its Job counts the eviction (`jobs.py`)."""


class Cluster(Protocol):
    """What a round asks of the API server."""

    async def evict(self, namespace: str, name: str) -> Eviction:
        """Evict a pod, out of its Job's accounting where the Job is spared."""

    async def stamp(self, quota: Ref, stamp: str) -> bool:
        """Record a round's start on the group's object; whether the server took it."""


MEMORY = 60.0
"""Seconds an eviction (or a dry-run report) is remembered while the watch catches up."""
REFUSED_FIRST, REFUSED_LAST = 1.0, 30.0
"""Seconds before a refused pod is tried again: the first pause, doubling up to the last."""


class ClusterApi:
    """The Eviction API and the group's `last-reclaim` stamp, within the writes' budget."""

    def __init__(self, sender: Sender, *, spare_jobs: bool) -> None:
        self._sender = sender
        self._jobs = JobPods(sender, enabled=spare_jobs)

    async def evict(self, namespace: str, name: str) -> Eviction:
        match await self._jobs.release(namespace, name):
            case JobPod() as job:
                pass
            case Gone():
                return Eviction(Outcome.GONE)
            case failure:
                logger.warning(
                    "not evicting %s/%s now: cannot take it out of its Job's count: %s",
                    namespace,
                    name,
                    failure.why,
                )
                return Eviction(Outcome.FAILED, failure.retry_after)
        outcome, retry_after = await self._evict(namespace, name)
        if job.released and outcome in (Outcome.BLOCKED, Outcome.FAILED):
            await self._jobs.restore(namespace, name)
        return Eviction(outcome, retry_after, job)

    async def _evict(self, namespace: str, name: str) -> tuple[Outcome, float]:
        body = {
            "apiVersion": "policy/v1",
            "kind": "Eviction",
            "metadata": {"name": name, "namespace": namespace},
        }
        path = f"/api/v1/namespaces/{namespace}/pods/{name}/eviction"
        match await self._sender.send("POST", path, body):
            case Done(answer) if answer.get("status") == "Failure":
                # e.g. two PDBs: a 500 Status sent with 201
                message = answer.get("message")
                logger.warning("evicting %s/%s failed: %s", namespace, name, message)
                return Outcome.FAILED, 0.0
            case Done():
                return Outcome.EVICTED, 0.0
            case Refused(error):
                return Outcome.BLOCKED, error.retry_after
            case Gone():
                return Outcome.GONE, 0.0
            case failure:
                logger.warning("evicting %s/%s failed: %s", namespace, name, failure.why)
                return Outcome.FAILED, failure.retry_after

    async def stamp(self, quota: Ref, stamp: str) -> bool:
        patch = {"metadata": {"uid": quota.uid, "annotations": {keys.LAST_RECLAIM: stamp}}}
        path = f"{QUOTAS.url(quota.namespace)}/{quota.name}"
        sent = await self._sender.send("PATCH", path, patch, content_type=MERGE)
        if not isinstance(sent, Done):
            logger.warning("no reclaim round for %s: its stamp failed: %r", quota.name, sent.error)
            return False
        return True


def _job_note(name: str, job: JobPod) -> str:
    """What the eviction means to the pod's Job, for the Events."""
    if job.released:
        return (
            f"; Job {name} does not count it as a failure and replaces it at once (its tracking "
            "finalizer was taken off first)"
        )
    if job.counted is not None:
        return f"; Job {name} counts it as a failure, as it asks: {job.counted}"
    return ""


def _shown(resources: ResourceList | None) -> str:
    if resources is None:
        return "unlimited"
    return ", ".join(f"{k} {v}" for k, v in format_resource_list(resources).items()) or "none"


class Reclaimer:
    def __init__(
        self,
        view: ClusterView,
        cluster: Cluster,
        events: Recorder,
        settings: ReclaimSettings,
        metrics: Metrics,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._view, self._cluster, self._events, self._settings = view, cluster, events, settings
        self._metrics, self._clock = metrics, clock
        self._over_since: dict[str, float] = {}
        self._stamps: dict[str, tuple[str, float]] = {}
        """Each group's `last-reclaim` stamp as last seen, and since when (this clock)."""
        self._own: dict[str, str] = {}
        """The stamps this replica wrote: they start no window, `_over_since` times its own."""
        self._evicted: dict[str, float] = {}
        """Pods evicted, by when: they count as returned until the watch catches up."""
        self._refused: dict[str, Backoff] = {}
        """Pods whose eviction was refused or failed, with their backoff."""
        self._reported: dict[str, float] = {}
        """Dry-run decisions, by when: reported once a MEMORY, not every round."""

    def _remember(self, now: float) -> None:
        """Forget evictions the watch has caught up with (the pod is gone or terminating), and
        refusals of pods that are gone; date the stamps that changed."""
        engine = self._view.engine
        for key, when in list(self._evicted.items()):
            pod = engine.pod(key)
            if pod is None or pod.terminating or now - when > MEMORY:
                del self._evicted[key]
        for key in [key for key in self._refused if engine.pod(key) is None]:
            del self._refused[key]
        for key, when in list(self._reported.items()):
            if now - when > MEMORY:
                del self._reported[key]
        stamps, seen = self._view.reclaim_stamps, self._stamps
        self._stamps = {
            group: seen[group]
            if group in seen and seen[group][0] == stamp
            else (stamp, float("-inf") if self._own.get(group) == stamp else now)
            for group, stamp in stamps.items()
        }
        self._own = {g: stamp for g, stamp in self._own.items() if g in self._view.quota_refs}

    async def round(self, *, refresh: Callable[[], Snapshot | None], acting: bool = True) -> None:
        """Time every group over its runtime; when `acting` (leading), evict where due.
        `refresh` brings the engine up to date with the watch and hands back its snapshot (the
        loop's recompute; None before every kind's first LIST)."""
        now = self._clock()
        self._remember(now)
        # The loop's awaits since its last recompute may have let the watch in.
        snapshot = refresh()
        if snapshot is None:
            return
        plans = self._plans(snapshot, self._evicted)
        for group in list(self._over_since):
            if group not in plans:
                del self._over_since[group]
        for group, plan in plans.items():
            since = self._over_since.setdefault(group, now)
            window = max(since, self._stamps.get(group, ("", since))[1])
            if not acting or now - window < self._settings.delay or not plan.candidates:
                continue
            if await self._reclaim(plan, now - since, refresh):
                self._over_since[group] = self._clock()  # a new window: a whole delay

    async def _reclaim(
        self, planned: GroupReclaim, over_for: float, refresh: Callable[[], Snapshot | None]
    ) -> bool:
        """One round for the `planned` group; whether it evicted (or, dry, reported) any pod.
        A pod that became a candidate during the round (a replacement that runs ungated) is
        judged in a later round, after a delay of its own."""
        group = planned.group
        known = {key for candidate in planned.candidates for key in candidate.keys}
        now = self._clock()
        refused = {key for key, retry in self._refused.items() if not retry.due(now)}
        leaving: set[str] = set()
        stamped = self._settings.dry_run  # a dry run evicts nothing, and writes no stamp
        attempts = 0
        acted = False
        while attempts < self._settings.max_evictions:
            snapshot = refresh()  # planned again on what the watch shows now, never on an old plan
            if snapshot is None:
                break
            plan = self._plans(snapshot, leaving.union(self._evicted), only=group).get(group)
            if plan is None:
                break
            tree = self._view.engine.status(group).tree  # for the metrics; it never changes
            new = {key for c in plan.candidates for key in c.keys if key not in known}
            victims = plan.victims(refused | new)
            if not attempts:
                self._report_kept(plan, refused | new)
            if not victims:
                break
            if not stamped:
                stamped = await self._stamp(group)
                if not stamped:
                    break
            candidate = victims[0]
            attempts += 1  # a gang counts as one
            reason = f"group {group} uses {_shown(plan.used)}, above its runtime " + (
                f"{_shown(plan.runtime)}, for {over_for:.0f}s; "
            )
            if candidate.gang:
                reason += (
                    f"the pod's gang {candidate.gang} goes whole ({len(candidate.pods)} pods); "
                )
            for victim in candidate.pods:
                eviction = await self._attempt(victim)
                if eviction is not None and eviction.outcome in (Outcome.BLOCKED, Outcome.FAILED):
                    refused.add(victim.key)  # it stays, and is tried again after its backoff
                else:
                    leaving.add(victim.key)
                if eviction is None:
                    continue  # a dry run reported it a moment ago
                acted = acted or victim.key in leaving
                self._metrics.evictions.labels(group, tree, eviction.outcome.value).inc()
                why = f"{reason}the pod requests {_shown(victim.request)}"
                self._record(group, victim, eviction, why)
            if candidate.gang and any(key in leaving for key in candidate.keys):
                self._metrics.gang_evictions.labels(group, tree).inc()
        return acted

    def _plans(
        self, snapshot: Snapshot, leaving: Collection[str], only: str | None = None
    ) -> dict[str, GroupReclaim]:
        """Every group over its runtime, or `only` that one."""
        settings = self._settings
        return reclaims(
            snapshot,
            leaving=leaving,
            now=time.time(),
            min_runtime=settings.min_runtime,
            only=only,
        )

    def _report_kept(self, plan: GroupReclaim, refused: set[str]) -> None:
        """An Event on each pod its PodDisruptionBudget keeps from a round that would take it."""
        wanted = plan.victims(refused, budgets=False)
        kept = plan.kept_by_budgets(wanted)
        for candidate in wanted:
            budget = kept.get(candidate.keys)
            if budget is None:
                continue
            for victim in candidate.pods:
                text = (
                    f"Pod {victim.key} is kept from reclaim by PodDisruptionBudget {budget}, "
                    f"which allows no disruption now; other over-quota pods are taken instead"
                )
                logger.info("%s", text, extra={"group": plan.group, "pod": victim.key})
                self._event(plan.group, victim, "Normal", "ReclaimSkipped", text)

    async def _stamp(self, group: str) -> bool:
        """Start the group's window in the cluster, before its first eviction."""
        quota = self._view.quota_refs.get(group)
        if quota is None:
            return False
        stamp = micro_time()
        if not await self._cluster.stamp(quota, stamp):
            return False
        self._own[group] = stamp
        return True

    async def _attempt(self, victim: Victim) -> Eviction | None:
        key = victim.key
        if self._settings.dry_run:
            if key in self._reported:
                return None
            self._reported[key] = self._clock()
            return Eviction(Outcome.DRY_RUN)
        namespace, name = key.split("/", 1)
        eviction = await self._cluster.evict(namespace, name)
        if eviction.outcome in (Outcome.BLOCKED, Outcome.FAILED):
            retry = self._refused.setdefault(key, Backoff(REFUSED_FIRST, REFUSED_LAST))
            retry.failed(self._clock(), eviction.retry_after)
        else:
            self._refused.pop(key, None)
            if eviction.outcome is Outcome.EVICTED:
                # Until the watch shows it terminating or gone, it counts as returned.
                self._evicted[key] = self._clock()
        return eviction

    def _record(self, group: str, victim: Victim, eviction: Eviction, why: str) -> None:
        key, outcome, job = victim.key, eviction.outcome, eviction.job
        text = {
            Outcome.EVICTED: f"Evicted pod {key} to return borrowed capacity: {why}",
            Outcome.GONE: f"Pod {key} was already gone when evicted: {why}",
            Outcome.BLOCKED: f"Eviction of pod {key} refused (PodDisruptionBudget); it is "
            f"tried again later, other over-quota pods meanwhile: {why}",
            Outcome.FAILED: f"Eviction of pod {key} failed; it is tried again later, other "
            f"over-quota pods meanwhile: {why}",
            Outcome.DRY_RUN: f"Dry run: would evict pod {key}: {why}",
        }[outcome]
        kind = "Warning" if outcome in (Outcome.BLOCKED, Outcome.FAILED) else "Normal"
        reason = {
            Outcome.EVICTED: "Reclaimed",
            Outcome.GONE: "Reclaimed",
            Outcome.BLOCKED: "ReclaimBlocked",
            Outcome.FAILED: "ReclaimFailed",
            Outcome.DRY_RUN: "ReclaimDryRun",
        }[outcome]
        if outcome is Outcome.EVICTED and job.job is not None:
            text += _job_note(job.job.name, job)
            if job.released or job.counted is not None:
                counted = job.counted is not None
                self._events.record(
                    job.job,
                    type="Warning" if counted else "Normal",
                    reason="ReclaimCountedAsFailure" if counted else reason,
                    message=text,
                    about=key,
                )
        logger.info("%s", text, extra={"group": group, "pod": key})
        self._event(group, victim, kind, reason, text)

    def _event(self, group: str, victim: Victim, kind: str, reason: str, text: str) -> None:
        """The Event on the pod and on its group's ElasticQuota."""
        namespace, name = victim.key.split("/", 1)
        ref = Ref("v1", "Pod", namespace, name, victim.uid)
        self._events.record(ref, type=kind, reason=reason, message=text)
        quota = self._view.quota_refs.get(group)
        if quota is not None:
            self._events.record(quota, type=kind, reason=reason, message=text, about=victim.key)
