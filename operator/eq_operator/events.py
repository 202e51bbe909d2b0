"""Kubernetes Events about the objects the operator acts on (`kubectl describe` shows them).

Posted directly rather than through `kopf.event`, which works only inside Kopf's handlers:
reclaim runs on the operator's own clock.
"""

from __future__ import annotations

import datetime
from typing import Any

import aiohttp
from eq_kit.throttling import TokenBucket
from kubernetes_asyncio import client
from kubernetes_asyncio.client.exceptions import ApiException

from .logs import logger
from .view import Ref

COMPONENT = "elastic-quota-operator"


class Recorder:
    def __init__(self, api: client.ApiClient, limiter: TokenBucket) -> None:
        self._core: Any = client.CoreV1Api(api)  # Any: the stubs want a V1Event, not a dict
        self._limiter = limiter

    async def record(self, ref: Ref, *, type: str, reason: str, message: str) -> None:
        now = datetime.datetime.now(tz=datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        namespace = ref.namespace or "default"
        body = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"generateName": f"{ref.name}.", "namespace": namespace},
            "involvedObject": {
                "apiVersion": ref.api_version,
                "kind": ref.kind,
                "namespace": ref.namespace,
                "name": ref.name,
                "uid": ref.uid,
            },
            "type": type,
            "reason": reason,
            "message": message[:1024],
            "source": {"component": COMPONENT},
            "reportingComponent": COMPONENT,
            "firstTimestamp": now,
            "lastTimestamp": now,
            "count": 1,
        }
        try:
            await self._limiter.acquire()
            await self._core.create_namespaced_event(namespace, body)
        except (ApiException, aiohttp.ClientError, TimeoutError) as error:
            logger.warning(
                "cannot record an Event on %s %s/%s: %r", ref.kind, ref.namespace, ref.name, error
            )
