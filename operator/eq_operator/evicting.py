"""Evicting pods through the policy/v1 Eviction API, for reclaim (`reclaiming.py`) and for
preemption inside a group (`preempting.py`), with what both remember and tell.

A round for one group (`Evictions.take`) evicts up to `max_evictions` candidates (a gang counts
as one), each decided on the engine as the watch has it at that moment: before each one the
loop's recompute runs and the group is planned again (`replan`), so a pod that the watch has
since made safe, or a group that no longer needs the room, is left alone; the Event gives the
numbers of that plan. A pod that became a candidate during the round (a replacement that runs
ungated) is judged in a later round. Every attempt counts against `max_evictions`. A refused
(429: a PodDisruptionBudget) or failed eviction keeps that pod, which is tried again after a
backoff (1 s doubling to 30 s, or the server's `Retry-After`); meanwhile the plan names other
candidates only. A pod already gone (404) counts as done. Pods already terminating, or evicted a
moment ago, count as returned, so nothing is evicted twice, whichever purpose evicted them. A
Job's pod is taken out of its Job's count first (`jobs.py`).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Collection, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from eq_engine import ResourceList, format_resource_list
from eq_engine.decisions import Candidate, GroupReclaim, Victim
from eq_engine.model import keys
from eq_kit.backoff import Backoff
from eq_kit.caching import QUOTAS
from eq_kit.kube import MERGE
from prometheus_client import Counter

from .events import Recorder
from .jobs import NOT_A_JOBS, JobPod, JobPods
from .logs import logger
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


@dataclass(frozen=True, slots=True)
class Purpose:
    """Why a round evicts, as its Events and metrics say it."""

    noun: str
    """`reclaim`: what keeps a pod when a budget does ("kept from reclaim")."""
    others: str
    """`over-quota pods`: what is taken instead of a pod kept."""
    reasons: Mapping[Outcome, str]
    """The Event's reason for each outcome of an eviction."""
    skipped: str
    """The reason of the Event on a pod its PodDisruptionBudget keeps from the round."""
    counted: str
    """The reason of the Warning on a Job that counts its evicted pod as a failure."""
    attempts: Counter
    """Eviction attempts, by group, tree and result."""
    gangs: Counter | None = None
    """Gangs taken whole, by group and tree; None: not counted."""

    @classmethod
    def named(
        cls, done: str, stem: str, *, others: str, attempts: Counter, gangs: Counter | None = None
    ) -> Purpose:
        """The Events' reasons made from `done` (`Reclaimed`) and `stem` (`Reclaim`:
        `ReclaimBlocked`, `ReclaimFailed`, `ReclaimDryRun`, `ReclaimSkipped`,
        `ReclaimCountedAsFailure`)."""
        return cls(
            noun=stem.lower(),
            others=others,
            reasons={
                Outcome.EVICTED: done,
                Outcome.GONE: done,
                Outcome.BLOCKED: f"{stem}Blocked",
                Outcome.FAILED: f"{stem}Failed",
                Outcome.DRY_RUN: f"{stem}DryRun",
            },
            skipped=f"{stem}Skipped",
            counted=f"{stem}CountedAsFailure",
            attempts=attempts,
            gangs=gangs,
        )


Replan = Callable[[Collection[str]], GroupReclaim | None]
"""The group planned again on what the watch shows now, with these pods counted as leaving."""
Reason = Callable[[GroupReclaim, Candidate], str]
"""Why a candidate goes, for its Events: the plan's numbers, ending with "; "."""


class Evictions:
    """The evictions of every round, whatever its purpose, and what they leave to remember."""

    def __init__(
        self,
        view: ClusterView,
        cluster: Cluster,
        events: Recorder,
        settings: ReclaimSettings,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._view, self._cluster, self._events, self._settings = view, cluster, events, settings
        self._clock = clock
        self.evicted: dict[str, float] = {}
        """Pods evicted, by when: they count as returned until the watch catches up."""
        self._refused: dict[str, Backoff] = {}
        """Pods whose eviction was refused or failed, with their backoff."""
        self._reported: dict[str, float] = {}
        """Dry-run decisions, by when: reported once a MEMORY, not every round."""

    def forget(self, now: float) -> None:
        """Forget evictions the watch has caught up with (the pod is gone or terminating), and
        refusals of pods that are gone."""
        engine = self._view.engine
        for key, when in list(self.evicted.items()):
            pod = engine.pod(key)
            if pod is None or pod.terminating or now - when > MEMORY:
                del self.evicted[key]
        for key in [key for key in self._refused if engine.pod(key) is None]:
            del self._refused[key]
        for key, when in list(self._reported.items()):
            if now - when > MEMORY:
                del self._reported[key]

    async def take(
        self,
        planned: GroupReclaim,
        replan: Replan,
        *,
        purpose: Purpose,
        phrase: str,
        reason: Reason,
        start: Callable[[], Awaitable[bool]] | None = None,
    ) -> bool:
        """One round for the `planned` group; whether it evicted (or, dry, reported) any pod.
        `phrase`: what the evictions are for (`to return borrowed capacity`); `start`: what
        must be taken before the first eviction (reclaim's stamp), False: no round."""
        group = planned.group
        known = {key for candidate in planned.candidates for key in candidate.keys}
        now = self._clock()
        refused = {key for key, retry in self._refused.items() if not retry.due(now)}
        leaving: set[str] = set()
        started = start is None or self._settings.dry_run  # a dry run evicts nothing
        attempts = 0
        acted = False
        while attempts < self._settings.max_evictions:
            plan = replan(leaving.union(self.evicted))
            if plan is None:
                break
            tree = self._view.engine.status(group).tree  # for the metrics; it never changes
            new = {key for c in plan.candidates for key in c.keys if key not in known}
            victims = plan.victims(refused | new)
            if not attempts:
                self._report_kept(plan, refused | new, purpose)
            if not victims:
                break
            if not started:
                assert start is not None
                started = await start()
                if not started:
                    break
            candidate = victims[0]
            attempts += 1  # a gang counts as one
            why = reason(plan, candidate)
            if candidate.gang:
                why += f"the pod's gang {candidate.gang} goes whole ({len(candidate.pods)} pods); "
            for victim in candidate.pods:
                eviction = await self._attempt(victim)
                if eviction is not None and eviction.outcome in (Outcome.BLOCKED, Outcome.FAILED):
                    refused.add(victim.key)  # it stays, and is tried again after its backoff
                else:
                    leaving.add(victim.key)
                if eviction is None:
                    continue  # a dry run reported it a moment ago
                acted = acted or victim.key in leaving
                purpose.attempts.labels(group, tree, eviction.outcome.value).inc()
                asks = f"{why}the pod requests {shown(victim.request)}"
                self._record(group, victim, eviction, asks, purpose, phrase)
            if (
                purpose.gangs is not None
                and candidate.gang
                and any(key in leaving for key in candidate.keys)
            ):
                purpose.gangs.labels(group, tree).inc()
        return acted

    def _report_kept(self, plan: GroupReclaim, refused: set[str], purpose: Purpose) -> None:
        """An Event on each pod its PodDisruptionBudget keeps from a round that would take it."""
        wanted = plan.victims(refused, budgets=False)
        kept = plan.kept_by_budgets(wanted)
        for candidate in wanted:
            budget = kept.get(candidate.keys)
            if budget is None:
                continue
            for victim in candidate.pods:
                text = (
                    f"Pod {victim.key} is kept from {purpose.noun} by PodDisruptionBudget "
                    f"{budget}, which allows no disruption now; other {purpose.others} are taken "
                    "instead"
                )
                logger.info("%s", text, extra={"group": plan.group, "pod": victim.key})
                self.tell(plan.group, victim, "Normal", purpose.skipped, text)

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
                self.evicted[key] = self._clock()
        return eviction

    def _record(
        self,
        group: str,
        victim: Victim,
        eviction: Eviction,
        why: str,
        purpose: Purpose,
        phrase: str,
    ) -> None:
        key, outcome, job = victim.key, eviction.outcome, eviction.job
        text = {
            Outcome.EVICTED: f"Evicted pod {key} {phrase}: {why}",
            Outcome.GONE: f"Pod {key} was already gone when evicted: {why}",
            Outcome.BLOCKED: f"Eviction of pod {key} refused (PodDisruptionBudget); it is "
            f"tried again later, other {purpose.others} meanwhile: {why}",
            Outcome.FAILED: f"Eviction of pod {key} failed; it is tried again later, other "
            f"{purpose.others} meanwhile: {why}",
            Outcome.DRY_RUN: f"Dry run: would evict pod {key}: {why}",
        }[outcome]
        kind = "Warning" if outcome in (Outcome.BLOCKED, Outcome.FAILED) else "Normal"
        reason = purpose.reasons[outcome]
        if outcome is Outcome.EVICTED and job.job is not None:
            text += _job_note(job.job.name, job)
            if job.released or job.counted is not None:
                counted = job.counted is not None
                self._events.record(
                    job.job,
                    type="Warning" if counted else "Normal",
                    reason=purpose.counted if counted else reason,
                    message=text,
                    about=key,
                )
        logger.info("%s", text, extra={"group": group, "pod": key})
        self.tell(group, victim, kind, reason, text)

    def tell(self, group: str, victim: Victim, kind: str, reason: str, text: str) -> None:
        """An Event on the pod and on its group's ElasticQuota."""
        namespace, name = victim.key.split("/", 1)
        ref = Ref("v1", "Pod", namespace, name, victim.uid)
        self._events.record(ref, type=kind, reason=reason, message=text)
        quota = self._view.quota_refs.get(group)
        if quota is not None:
            self._events.record(quota, type=kind, reason=reason, message=text, about=victim.key)


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


def shown(resources: ResourceList | None) -> str:
    if resources is None:
        return "unlimited"
    return ", ".join(f"{k} {v}" for k, v in format_resource_list(resources).items()) or "none"
