"""Taking borrowed capacity back: evict what the engine's reclaim plans name, with Events.

Reclaim is paced by windows, as Koordinator's revoke is: a group whose used has stayed above
its runtime for a whole delay loses up to `max_evictions` pods, least important first, through
the policy/v1 Eviction API (PodDisruptionBudgets are honoured), and that round starts a new
window: the group is judged again only after another whole delay. So a group loses at most
`max_evictions` pods per delay, and a replacement that runs ungated (gating off, the webhook
down) is judged only after a delay of its own, instead of being evicted as soon as it runs.
A refused eviction (429) keeps that pod and asks the engine for the next candidate; a pod
already gone (404) counts as done. Pods already terminating count as returned, so nothing is
evicted twice. Every interval, the groups whose window has run out are looked at.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from enum import StrEnum
from typing import Any

from eq_engine import QuotaEngine, ResourceList, format_resource_list
from eq_kit.throttling import TokenBucket
from kubernetes_asyncio import client
from kubernetes_asyncio.client.exceptions import ApiException

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


Evict = Callable[[str, str], Awaitable[Outcome]]
MEMORY = 60.0
"""Seconds an eviction (or a dry-run report) is remembered while the watch catches up."""


def eviction_api(api: client.ApiClient, limiter: TokenBucket) -> Evict:
    core: Any = client.CoreV1Api(api)  # Any: the stubs want a V1Eviction, a dict is as good

    async def evict(namespace: str, name: str) -> Outcome:
        body = {
            "apiVersion": "policy/v1",
            "kind": "Eviction",
            "metadata": {"name": name, "namespace": namespace},
        }
        try:
            await limiter.acquire()
            await core.create_namespaced_pod_eviction(name, namespace, body)
        except ApiException as error:
            if error.status == 429:
                return Outcome.BLOCKED
            if error.status == 404:
                return Outcome.GONE
            logger.warning(
                "evicting %s/%s failed: %s %s", namespace, name, error.status, error.reason
            )
            return Outcome.FAILED
        return Outcome.EVICTED

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
        self._reported: dict[str, float] = {}
        """Dry-run decisions, by when: reported once a MEMORY, not every round."""

    def forget(self) -> None:
        """Start over (a new leader does not inherit the old one's timers)."""
        self._over_since.clear()
        self._evicted.clear()
        self._reported.clear()

    def _remember(self, now: float) -> None:
        """Forget evictions the watch has caught up with: the pod is gone or terminating."""
        engine = self._view.engine
        for key, when in list(self._evicted.items()):
            pod = engine.pod(key)
            if pod is None or pod.terminating or now - when > MEMORY:
                del self._evicted[key]
        for key, when in list(self._reported.items()):
            if now - when > MEMORY:
                del self._reported[key]

    async def round(self) -> None:
        engine = self._view.engine
        now = self._clock()
        self._remember(now)
        plans = engine.reclaim_plan(leaving=self._evicted)
        for group in list(self._over_since):
            if group not in plans:
                del self._over_since[group]
        for group, pods in plans.items():
            since = self._over_since.setdefault(group, now)
            due = now - since >= self._settings.delay and pods
            if due and await self._reclaim(engine, group, pods, now - since):
                self._over_since[group] = now  # a new window: a whole delay until the next

    async def _reclaim(
        self, engine: QuotaEngine, group: str, pods: list[str], over_for: float
    ) -> bool:
        """One round for `group`; whether it evicted (or, dry, reported) any pod."""
        status = engine.status(group)
        reason = (
            f"group {group} uses {_shown(status.used)}, above its runtime "
            f"{_shown(status.runtime)}, for {over_for:.0f}s"
        )
        refused: set[str] = set()
        done = 0
        acted = False
        while pods and done < self._settings.max_evictions:
            key, pods = pods[0], pods[1:]
            done += 1
            if self._settings.dry_run and key in self._reported:
                continue  # reported a moment ago; the plan has not changed
            namespace, name = key.split("/", 1)
            request = engine.pod_request(key)
            if self._settings.dry_run:
                outcome = Outcome.DRY_RUN
                self._reported[key] = self._clock()
            else:
                outcome = await self._evict(namespace, name)
            self._metrics.evictions.labels(outcome.value).inc()
            await self._record(group, key, outcome, f"{reason}; the pod requests {_shown(request)}")
            if outcome is Outcome.BLOCKED or outcome is Outcome.FAILED:
                done -= 1
                refused.add(key)  # it stays: ask again for what else would do
                plans = engine.reclaim_plan(keep=refused, leaving=self._evicted)
                pods = plans.get(group, [])
            else:
                acted = True
                if outcome is not Outcome.DRY_RUN:
                    # Until the watch shows it terminating or gone, it counts as returned.
                    self._evicted[key] = self._clock()
        return acted

    async def _record(self, group: str, key: str, outcome: Outcome, why: str) -> None:
        namespace, name = key.split("/", 1)
        text = {
            Outcome.EVICTED: f"Evicted pod {key} to return borrowed capacity: {why}",
            Outcome.GONE: f"Pod {key} was already gone when evicted: {why}",
            Outcome.BLOCKED: f"Eviction of pod {key} refused (PodDisruptionBudget); another "
            f"pod is chosen: {why}",
            Outcome.FAILED: f"Eviction of pod {key} failed; another pod is chosen: {why}",
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
        pod_now = self._view.engine.pod(key)
        uid = "" if pod_now is None else pod_now.uid
        await self._events.record(
            Ref("v1", "Pod", namespace, name, uid), type=kind, reason=reason, message=text
        )
        quota = self._view.quota_refs.get(group)
        if quota is not None:
            await self._events.record(quota, type=kind, reason=reason, message=text)
