"""Writing what the engine computed: only our keys, only when they differ, as merge patches.

An ElasticQuota gets the `runtime`, `request`, `used` and `waiting-pods` annotations and
`status.used` (through the status subresource where the CRD has one; on the object where it has
none, as with Koordinator's CRD). A pod gets its `capacity` label, and loses the admission gate
when quota admits it. Nothing else of anybody's object is touched. Conflicts, throttling and
server errors are retried with a growing pause.

Writes go `workers` at a time and through the client-side token bucket (`--api-qps`,
`--api-burst`). Each answered request counts as progress (`progress`), which the liveness probe
reads: a long burst of writes is work, not a hung loop.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any

import aiohttp
from eq_engine import Pod, QuotaEngine, keys
from eq_kit.caching import QUOTAS
from eq_kit.throttling import TokenBucket, each
from kubernetes_asyncio import client
from kubernetes_asyncio.client.exceptions import ApiException

from .logs import logger
from .metrics import Metrics
from .view import OWNED_ANNOTATIONS, ClusterView, QuotaFields

GROUP, VERSION, PLURAL = QUOTAS.group, QUOTAS.version, QUOTAS.plural
MERGE = "application/merge-patch+json"
ATTEMPTS = 4
_RETRIED = {409, 429, 500, 502, 503, 504}


class Writer:
    def __init__(
        self,
        api: client.ApiClient,
        view: ClusterView,
        metrics: Metrics,
        *,
        limiter: TokenBucket,
        workers: int,
    ) -> None:
        # Any: kubernetes-asyncio's stubs omit the `_content_type` keyword its methods take.
        self._custom: Any = client.CustomObjectsApi(api)
        self._core: Any = client.CoreV1Api(api)
        self._view = view
        self._metrics = metrics
        self._limiter, self._workers = limiter, workers
        self._in_flight = asyncio.Semaphore(workers)
        self._status_subresource = True  # until the API server says otherwise
        self.progress = time.monotonic()
        """When a write was last answered."""

    async def write(self, groups: Iterable[str], pods: Iterable[str]) -> None:
        """Bring the named groups' and pods' fields to what the engine wants."""
        engine = self._view.engine
        labels = self._view.pod_labels
        wrong = (
            (key, label)
            for key in pods
            if key in labels and labels[key] != (label := engine.capacity_label(key))
        )
        await each(groups, lambda name: self._write_group(engine, name), workers=self._workers)
        await each(wrong, lambda item: self._write_label(*item), workers=self._workers)

    async def _write_group(self, engine: QuotaEngine, name: str) -> None:
        ref = self._view.quota_refs.get(name)
        try:
            status = engine.status(name)
        except KeyError:
            return  # the group went away since
        if ref is None:
            return  # no object to write to (yet)
        waiting = self._view.waiting.get(name, 0)
        wanted, seen = QuotaFields.wanted(status, waiting), self._view.quota_fields.get(name)
        if seen is None:
            return
        if wanted.annotations != seen.annotations:
            patch = {
                "metadata": {
                    "annotations": dict(zip(OWNED_ANNOTATIONS, wanted.annotations, strict=True))
                }
            }
            if await self._send("ElasticQuota", self._patch_quota(ref.namespace, name, patch)):
                seen = QuotaFields(wanted.annotations, seen.status_used)
        if wanted.status_used != seen.status_used:
            body = {"status": {"used": _loads(wanted.status_used)}}
            if await self._send("ElasticQuota", self._patch_status(ref.namespace, name, body)):
                seen = QuotaFields(seen.annotations, wanted.status_used)
        self._view.quota_fields[name] = seen

    def _patch_quota(
        self, namespace: str, name: str, patch: Mapping[str, Any]
    ) -> Callable[[], Awaitable[Any]]:
        return lambda: self._custom.patch_namespaced_custom_object(
            GROUP, VERSION, namespace, PLURAL, name, patch, _content_type=MERGE
        )

    def _patch_pod(
        self, namespace: str, name: str, patch: Mapping[str, Any]
    ) -> Callable[[], Awaitable[Any]]:
        return lambda: self._core.patch_namespaced_pod(name, namespace, patch, _content_type=MERGE)

    def _patch_status(
        self, namespace: str, name: str, patch: Mapping[str, Any]
    ) -> Callable[[], Awaitable[Any]]:
        async def call() -> Any:
            if self._status_subresource:
                try:
                    return await self._custom.patch_namespaced_custom_object_status(
                        GROUP, VERSION, namespace, PLURAL, name, patch, _content_type=MERGE
                    )
                except ApiException as error:
                    if error.status != 404:
                        raise
                    # A CRD without the status subresource (Koordinator's): write the object.
                    self._status_subresource = False
                    logger.info("no status subresource: writing status.used on the object")
            return await self._patch_quota(namespace, name, patch)()

        return call

    async def lift_gate(self, pod: Pod) -> bool:
        """Remove the admission gate from `pod`, keeping any other gate. The API server only
        lets gates be removed, so a list that went stale meanwhile is refused, never restored."""
        others = [{"name": name} for name in pod.other_gates]
        patch = {"spec": {"schedulingGates": others or None}}
        return await self._send("Pod", self._patch_pod(pod.namespace, pod.name, patch))

    async def _write_label(self, key: str, label: str | None) -> None:
        namespace, name = key.split("/", 1)
        patch = {"metadata": {"labels": {keys.CAPACITY: label}}}
        if await self._send("Pod", self._patch_pod(namespace, name, patch)):
            self._view.pod_labels[key] = label

    async def _send(self, kind: str, call: Callable[[], Awaitable[Any]]) -> bool:
        """Send with retries; False if the object is gone or the API keeps refusing."""
        pause = 0.2
        for attempt in range(ATTEMPTS):
            try:
                async with self._in_flight:
                    await self._limiter.acquire()
                    try:
                        await call()
                    finally:
                        self.progress = time.monotonic()
                self._metrics.writes.labels(kind, "ok").inc()
                return True
            except ApiException as error:
                if error.status == 404:
                    self._metrics.writes.labels(kind, "gone").inc()
                    return False
                if error.status not in _RETRIED or attempt == ATTEMPTS - 1:
                    self._metrics.writes.labels(kind, "error").inc()
                    logger.warning("writing a %s failed: %s %s", kind, error.status, error.reason)
                    return False
            except (aiohttp.ClientError, TimeoutError) as error:
                if attempt == ATTEMPTS - 1:
                    self._metrics.writes.labels(kind, "error").inc()
                    logger.warning("writing a %s failed: %r", kind, error)
                    return False
            self._metrics.writes.labels(kind, "retried").inc()
            await asyncio.sleep(pause)
            pause *= 2
        return False


def _loads(text: str | None) -> Any:
    return None if text is None else json.loads(text)
