"""One replica writes and evicts at a time: the holder of a coordination.k8s.io Lease, by
client-go's leader election rules (`tools/leaderelection`).

Every replica watches and computes, so a stand-by that takes over has warm caches. Expiry is
measured on the local clock from the moment this replica last saw the Lease's record change,
never by comparing the holder's `renewTime` with the local time: clocks of two nodes may differ
by minutes. The leader renews every `retry` seconds; a renewal that fails is tried again every
`retry` until `renew_deadline` has passed since the last success, and only then is leadership
given up, before any stand-by can count the Lease expired (`renew_deadline < duration`). Writes
carry the resourceVersion read (an optimistic lock), so two replicas can never both win. On a
clean shutdown the leader gives the Lease up (client-go's ReleaseOnCancel): the holder is
emptied, and a stand-by takes over at once.

Its requests go through a `Sender` of their own, without the write budget: a renewal that
waited for a token behind a burst of label writes could miss its deadline and cost the
leadership.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable
from typing import Any

from eq_kit.kube import MERGE, micro_time

from .logs import logger
from .sending import Conflict, Done, Gone, Sender, Sent


class Leadership:
    def __init__(
        self,
        sender: Sender,
        *,
        namespace: str,
        name: str,
        identity: str,
        duration: float,
        on_change: Callable[[bool], None],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._sender = sender
        self._path = f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/{name}"
        self._namespace, self._name, self._identity = namespace, name, identity
        # client-go's proportions: 15 s, 10 s, 2 s.
        self.duration, self.renew_deadline, self.retry = duration, duration * 2 / 3, duration / 7.5
        self._on_change, self._clock = on_change, clock
        self.leading = False
        self._observed: dict[str, Any] | None = None
        """The Lease's spec as last seen, and when (local clock) it last changed."""
        self._observed_at = 0.0
        self._version = ""

    async def run(self) -> None:
        """Try to lead, and keep leading, until cancelled; then give the Lease up."""
        try:
            while True:
                while not await self._try():
                    await asyncio.sleep(self.retry * random.uniform(1.0, 1.2))
                self._set(True)
                renewed = self._clock()
                while self._clock() - renewed < self.renew_deadline:
                    await asyncio.sleep(self.retry)
                    if await self._try():
                        renewed = self._clock()
                logger.warning("%s could not renew the Lease in time", self._identity)
                self._set(False)
        finally:
            if self.leading:
                await asyncio.shield(self._release())

    def _set(self, leading: bool) -> None:
        if leading != self.leading:
            self.leading = leading
            logger.info("%s leading: %s", self._identity, leading)
            self._on_change(leading)

    async def _try(self) -> bool:
        """client-go's tryAcquireOrRenew: whether this replica holds the Lease now."""
        match await self._acquire_or_renew():
            case Done():
                return True
            case None | Conflict():  # somebody else's, or another replica wrote it first
                return False
            case failure:
                logger.warning("the Lease %s/%s: %s", self._namespace, self._name, failure.why)
                return False

    async def _acquire_or_renew(self) -> Sent | None:
        """The Lease written as this replica's (`Done`), or what stopped it; None: it is
        another replica's, alive as far as this one can tell."""
        match await self._sender.read(self._path):
            case Done(lease):
                pass
            case Gone():
                return await self._create()
            case failure:
                return failure
        spec = lease.get("spec") or {}
        now = self._clock()
        if spec != self._observed:
            self._observed, self._observed_at = spec, now
        holder = spec.get("holderIdentity") or ""
        lasts = spec.get("leaseDurationSeconds") or self.duration
        if holder and holder != self._identity and now < self._observed_at + lasts:
            return None  # somebody else's, and alive as far as this replica can tell
        stamp = micro_time()
        mine = holder == self._identity
        new = {
            **spec,
            "holderIdentity": self._identity,
            "leaseDurationSeconds": int(self.duration),
            "renewTime": stamp,
            "acquireTime": spec.get("acquireTime") if mine else stamp,
            "leaseTransitions": (spec.get("leaseTransitions") or 0) + (0 if mine else 1),
        }
        version = lease["metadata"]["resourceVersion"]
        patch = {"metadata": {"resourceVersion": version}, "spec": new}
        sent = await self._sender.send("PATCH", self._path, patch, content_type=MERGE)
        if isinstance(sent, Done):
            self._observed, self._observed_at = new, self._clock()
        return sent

    async def _create(self) -> Sent:
        stamp = micro_time()
        spec = {
            "holderIdentity": self._identity,
            "leaseDurationSeconds": int(self.duration),
            "acquireTime": stamp,
            "renewTime": stamp,
            "leaseTransitions": 0,
        }
        body = {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": self._name, "namespace": self._namespace},
            "spec": spec,
        }
        sent = await self._sender.send("POST", self._path.rsplit("/", 1)[0], body)
        if isinstance(sent, Done):
            self._observed, self._observed_at = spec, self._clock()
        return sent

    async def _release(self) -> None:
        """Give the Lease up so that a stand-by takes over now, not after a duration."""
        sent = await self._sender.read(self._path)
        if isinstance(sent, Done):
            lease = sent.body
            spec = lease.get("spec") or {}
            if spec.get("holderIdentity") == self._identity:
                stamp = micro_time()
                released = {"holderIdentity": "", "leaseDurationSeconds": 1, "renewTime": stamp}
                patch = {
                    "metadata": {"resourceVersion": lease["metadata"]["resourceVersion"]},
                    "spec": {**released, "acquireTime": stamp},
                }
                sent = await self._sender.send("PATCH", self._path, patch, content_type=MERGE)
                if isinstance(sent, Done):
                    logger.info("%s gave the Lease up", self._identity)
        if not isinstance(sent, Done):
            logger.warning("could not give the Lease up: %r", sent.error)
        self._set(False)
