"""One replica writes and evicts at a time: the holder of a coordination.k8s.io Lease.

Every replica watches and computes, so a stand-by that takes over has warm caches. The holder
renews the Lease every third of its duration; a stand-by takes it when it has not been renewed
for a whole duration, or at once when the holder gives it up on a clean shutdown. Taking the
Lease is a compare-and-swap (a JSON patch that first tests the holder and renewal time), so
two replicas can never both win.
"""

from __future__ import annotations

import asyncio
import datetime
from collections.abc import Callable
from typing import Any

import aiohttp
from eq_kit.kube import read_json
from kubernetes_asyncio import client
from kubernetes_asyncio.client.exceptions import ApiException

from .logs import logger

JSON_PATCH = "application/json-patch+json"


def _now() -> datetime.datetime:
    return datetime.datetime.now(tz=datetime.UTC)


def _stamp(moment: datetime.datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _parse(text: str | None) -> datetime.datetime | None:
    if not text:
        return None
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))


class Leadership:
    def __init__(
        self,
        api: client.ApiClient,
        *,
        namespace: str,
        name: str,
        identity: str,
        duration: float,
        on_change: Callable[[bool], None],
    ) -> None:
        # Any: kubernetes-asyncio's stubs omit the `_content_type` and `_preload_content`
        # keywords its methods take, and dict bodies.
        self._api: Any = client.CoordinationV1Api(api)
        self._namespace, self._name, self._identity = namespace, name, identity
        self._duration = duration
        self._on_change = on_change
        self.leading = False
        self._renewed: datetime.datetime | None = None

    async def run(self) -> None:
        """Try to lead, and keep leading, until cancelled; then give the Lease up."""
        try:
            while True:
                try:
                    self._set(await self._attempt())
                except (ApiException, aiohttp.ClientError, TimeoutError) as error:
                    logger.warning("the Lease %s/%s: %r", self._namespace, self._name, error)
                    expired = (
                        self._renewed is None
                        or (_now() - self._renewed).total_seconds() > self._duration
                    )
                    if expired:
                        self._set(False)
                await asyncio.sleep(self._duration / 3)
        finally:
            if self.leading:
                await asyncio.shield(self._release())

    def _set(self, leading: bool) -> None:
        if leading != self.leading:
            self.leading = leading
            logger.info("%s leading: %s", self._identity, leading)
            self._on_change(leading)

    async def _attempt(self) -> bool:
        try:
            lease = await self._read()
        except ApiException as error:
            if error.status != 404:
                raise
            return await self._create()
        spec = lease.get("spec") or {}
        holder, renewed = spec.get("holderIdentity"), _parse(spec.get("renewTime"))
        duration = spec.get("leaseDurationSeconds") or self._duration
        free = not holder or renewed is None or (_now() - renewed).total_seconds() > duration
        if holder != self._identity and not free:
            return False
        now = _now()
        changes: list[dict[str, Any]] = [
            {"op": "test", "path": "/spec/holderIdentity", "value": holder},
            {"op": "test", "path": "/spec/renewTime", "value": spec.get("renewTime")},
            {"op": "replace", "path": "/spec/holderIdentity", "value": self._identity},
            {"op": "replace", "path": "/spec/renewTime", "value": _stamp(now)},
            {"op": "replace", "path": "/spec/leaseDurationSeconds", "value": int(self._duration)},
        ]
        if holder != self._identity:
            transitions = spec.get("leaseTransitions") or 0
            changes += [
                {"op": "replace", "path": "/spec/acquireTime", "value": _stamp(now)},
                {"op": "replace", "path": "/spec/leaseTransitions", "value": transitions + 1},
            ]
        try:
            await self._api.patch_namespaced_lease(
                self._name, self._namespace, changes, _content_type=JSON_PATCH
            )
        except ApiException as error:
            if error.status in (409, 422, 500):  # somebody else changed it first
                return False
            raise
        self._renewed = now
        return True

    async def _read(self) -> dict[str, Any]:
        return await read_json(
            await self._api.read_namespaced_lease(
                self._name, self._namespace, _preload_content=False
            )
        )

    async def _create(self) -> bool:
        now = _stamp(_now())
        body = {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": self._name, "namespace": self._namespace},
            "spec": {
                "holderIdentity": self._identity,
                "leaseDurationSeconds": int(self._duration),
                "acquireTime": now,
                "renewTime": now,
                "leaseTransitions": 0,
            },
        }
        try:
            await self._api.create_namespaced_lease(self._namespace, body)
        except ApiException as error:
            if error.status == 409:  # another replica created it first
                return False
            raise
        self._renewed = _now()
        return True

    async def _release(self) -> None:
        """Give the Lease up so that a stand-by takes over now, not after a duration."""
        try:
            changes = [
                {"op": "test", "path": "/spec/holderIdentity", "value": self._identity},
                {"op": "replace", "path": "/spec/holderIdentity", "value": ""},
            ]
            await self._api.patch_namespaced_lease(
                self._name, self._namespace, changes, _content_type=JSON_PATCH
            )
            logger.info("%s gave the Lease up", self._identity)
        except (ApiException, aiohttp.ClientError, TimeoutError) as error:
            logger.warning("could not give the Lease up: %r", error)
        self._set(False)
