"""Taking borrowed capacity back: evict what the engine's reclaim plans name, with Events.

Reclaim is paced by windows, as Koordinator's revoke is: a group whose used has stayed above
its runtime for a whole delay loses up to `max_evictions` pods, least important first, through
the policy/v1 Eviction API (PodDisruptionBudgets are honoured), and that round starts a new
window: the group is judged again only after another whole delay. So a group loses at most
`max_evictions` pods per delay, and a replacement that runs ungated (gating off, the webhook
down) is judged only after a delay of its own, instead of being evicted as soon as it runs.

Each round decides on one snapshot of the engine (`QuotaEngine.reclaims`): the watch may change
the engine while an eviction is awaited, and the round goes on with what it decided. Every
attempt counts against `max_evictions`. A refused (429) or failed eviction keeps that pod, which
is tried again after a backoff (1 s doubling to 30 s, or the server's `Retry-After`); meanwhile
the snapshot's plan is asked again without it, which only ever names other over-quota pods. A
pod already gone (404) counts as done. Pods already terminating count as returned, so nothing is
evicted twice.

Every replica keeps the over-use clocks from what it watches; only the leader evicts. A replica
that becomes leader has been timing the groups all along, so losing the Lease for a moment does
not start the clocks over.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from enum import StrEnum

from eq_engine import ResourceList, format_resource_list
from eq_engine.reclaim import GroupReclaim, Victim
from eq_kit.backoff import Backoff as Retry
from eq_kit.kube import TRANSPORT_ERRORS, ApiError, Http
from eq_kit.throttling import TokenBucket

from .events import Recorder
from .logs import logger
from .metrics import Metrics
from .settings import ReclaimSettings
from .view import ClusterView, Ref


class Outcome(StrEnum):
    EVICTED = "evicted"
    BLOCKED = "blocked"
    GONE = "gone"
    FAILED = "failed"
    DRY_RUN = "dry_run"


Evict = Callable[[str, str], Awaitable[tuple[Outcome, float]]]
"""Evict pod (namespace, name): the outcome, and the seconds the server asked to wait."""
MEMORY = 60.0
"""Seconds an eviction (or a dry-run report) is remembered while the watch catches up."""
FIRST_RETRY, LAST_RETRY = 1.0, 30.0
"""Seconds before a refused pod is tried again: the first pause, doubling up to the last."""


def eviction_api(http: Http, limiter: TokenBucket) -> Evict:
    async def evict(namespace: str, name: str) -> tuple[Outcome, float]:
        body = {
            "apiVersion": "policy/v1",
            "kind": "Eviction",
            "metadata": {"name": name, "namespace": namespace},
        }
        try:
            await limiter.acquire()
            path = f"/api/v1/namespaces/{namespace}/pods/{name}/eviction"
            answer = await http.send("POST", path, body)
        except ApiError as error:
            if error.status == 429:
                return Outcome.BLOCKED, error.retry_after
            if error.status == 404:
                return Outcome.GONE, 0.0
            logger.warning("evicting %s/%s failed: %s", namespace, name, error)
            return Outcome.FAILED, error.retry_after
        except TRANSPORT_ERRORS as error:
            logger.warning("evicting %s/%s failed: %r", namespace, name, error)
            return Outcome.FAILED, 0.0
        if answer.get("status") == "Failure":  # e.g. two PDBs: a 500 Status sent with 201
            logger.warning("evicting %s/%s failed: %s", namespace, name, answer.get("message"))
            return Outcome.FAILED, 0.0
        return Outcome.EVICTED, 0.0

    return evict


def _shown(resources: ResourceList | None) -> str:
    if resources is None:
        return "unlimited"
    return ", ".join(f"{k} {v}" for k, v in format_resource_list(resources).items()) or "none"


class Reclaimer:
    def __init__(
        self,
        view: ClusterView,
        evict: Evict,
        events: Recorder,
        settings: ReclaimSettings,
        metrics: Metrics,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._view, self._evict, self._events, self._settings = view, evict, events, settings
        self._metrics, self._clock = metrics, clock
        self._over_since: dict[str, float] = {}
        self._evicted: dict[str, float] = {}
        """Pods evicted, by when: they count as returned until the watch catches up."""
        self._refused: dict[str, Retry] = {}
        """Pods whose eviction was refused or failed, with their backoff."""
        self._reported: dict[str, float] = {}
        """Dry-run decisions, by when: reported once a MEMORY, not every round."""

    def _remember(self, now: float) -> None:
        """Forget evictions the watch has caught up with (the pod is gone or terminating), and
        refusals of pods that are gone."""
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

    async def round(self, *, acting: bool = True) -> None:
        """Time every group over its runtime; when `acting` (leading), evict where due."""
        now = self._clock()
        self._remember(now)
        plans = self._view.engine.reclaims(leaving=self._evicted)
        for group in list(self._over_since):
            if group not in plans:
                del self._over_since[group]
        for group, plan in plans.items():
            since = self._over_since.setdefault(group, now)
            if not acting or now - since < self._settings.delay or not plan.candidates:
                continue
            if await self._reclaim(plan, now - since):
                self._over_since[group] = self._clock()  # a new window: a whole delay

    async def _reclaim(self, plan: GroupReclaim, over_for: float) -> bool:
        """One round for the plan's group; whether it evicted (or, dry, reported) any pod."""
        reason = (
            f"group {plan.group} uses {_shown(plan.used)}, above its runtime "
            f"{_shown(plan.runtime)}, for {over_for:.0f}s"
        )
        now = self._clock()
        refused = {key for key, retry in self._refused.items() if not retry.due(now)}
        leaving: set[str] = set()
        victims = plan.victims(refused)
        attempts = 0
        acted = False
        while victims and attempts < self._settings.max_evictions:
            victim = victims[0]
            attempts += 1
            outcome = await self._attempt(victim)
            if outcome in (Outcome.BLOCKED, Outcome.FAILED):
                refused.add(victim.key)  # it stays, and is tried again after its backoff
            else:
                leaving.add(victim.key)
            victims = plan.victims(refused, leaving)  # re-planned on the same snapshot
            if outcome is None:
                continue  # a dry run reported it a moment ago
            acted = acted or victim.key in leaving
            self._metrics.evictions.labels(plan.group, outcome.value).inc()
            why = f"{reason}; the pod requests {_shown(victim.request)}"
            await self._record(plan.group, victim, outcome, why)
        return acted

    async def _attempt(self, victim: Victim) -> Outcome | None:
        key = victim.key
        if self._settings.dry_run:
            if key in self._reported:
                return None
            self._reported[key] = self._clock()
            return Outcome.DRY_RUN
        namespace, name = key.split("/", 1)
        outcome, retry_after = await self._evict(namespace, name)
        if outcome in (Outcome.BLOCKED, Outcome.FAILED):
            retry = self._refused.setdefault(key, Retry(FIRST_RETRY, LAST_RETRY))
            retry.failed(self._clock(), retry_after)
        else:
            self._refused.pop(key, None)
            if outcome is Outcome.EVICTED:
                # Until the watch shows it terminating or gone, it counts as returned.
                self._evicted[key] = self._clock()
        return outcome

    async def _record(self, group: str, victim: Victim, outcome: Outcome, why: str) -> None:
        key = victim.key
        namespace, name = key.split("/", 1)
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
        logger.info("%s", text, extra={"group": group, "pod": key})
        ref = Ref("v1", "Pod", namespace, name, victim.uid)
        await self._events.record(ref, type=kind, reason=reason, message=text)
        quota = self._view.quota_refs.get(group)
        if quota is not None:
            await self._events.record(quota, type=kind, reason=reason, message=text, about=key)
