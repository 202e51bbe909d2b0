"""Kubernetes Events about the objects the operator acts on (`kubectl describe` shows them),
aggregated as the events.k8s.io series are: one Event per object, type and reason, whose count
is raised, not one per occurrence (a reclaim Event on a group: one per pod and reason).

The key leaves the message out (as events.k8s.io leaves `note` out): a blocked eviction retried
every few seconds says "for 130s", then "for 134s". The first occurrence is a CREATE; the second
a PATCH of `count`, `lastTimestamp` and the latest message at once; later ones only raise the
count in memory, written by `flush` once `REFRESH` has passed since the last write. A PATCH
that finds the Event gone (expired) creates it again. The series are an LRU of `SERIES` keys.

Posted directly rather than through `kopf.event`, which works only inside Kopf's handlers:
reclaim runs on the operator's own clock. Recording never waits for the API server: occurrences
queue (`PENDING` at most, as client-go's broadcaster queues 1,000 and drops beyond) and one
task sends them in order, after the groups' writes when both wait for the budget. A burst of
pods starting to wait (a Job of 1,000 pods behind the gate) would otherwise hold the operator's
loop for 1,000 round trips, 20 s at the default budget, while no group was recomputed or
written. An Event is best effort: a failed one is logged, not retried (client-go does not retry
what the server refused either).
"""

from __future__ import annotations

import asyncio
import collections
import datetime
import time
from collections.abc import Callable
from dataclasses import dataclass

from eq_kit.kube import MERGE

from .logs import logger
from .sending import Done, Gone, Rank, Sender
from .view import Ref

COMPONENT = "elastic-quota-operator"
REFRESH = 30.0
"""Seconds between two writes of one series' count (events.k8s.io: 30 minutes, with a last
write 6 minutes after the series ends; here sooner, so `kubectl describe` keeps up)."""
SERIES = 4096
"""Series remembered, least recently used forgotten first (client-go's LRU: 4096)."""
PENDING = 1000
"""Occurrences waiting to be sent at most; beyond, they are dropped (and counted in the log)."""

Key = tuple[str, str, str, str, str, str, str]


@dataclass
class Series:
    ref: Ref
    type: str
    reason: str
    namespace: str
    name: str
    count: int
    written: int
    """The count the Event holds."""
    written_at: float
    message: str


def _now() -> str:
    return datetime.datetime.now(tz=datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class _Occurrence:
    key: Key
    ref: Ref
    type: str
    reason: str
    message: str


class Recorder:
    def __init__(self, sender: Sender, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._api, self._clock = sender, clock
        self._series: collections.OrderedDict[Key, Series] = collections.OrderedDict()
        self._outbox: collections.deque[_Occurrence | Key] = collections.deque()
        """Occurrences to send, and series whose count is due to be written, in order."""
        self._sender: asyncio.Task[None] | None = None
        self._dropped = 0

    def record(self, ref: Ref, *, type: str, reason: str, message: str, about: str = "") -> None:
        """Queue an occurrence, to be sent soon; `about`: what else keys the series (the pod,
        for a reclaim Event on a group)."""
        key = (ref.kind, ref.namespace, ref.name, ref.uid, type, reason, about)
        self._queue(_Occurrence(key, ref, type, reason, message[:1024]))

    def flush(self) -> None:
        """Queue the writes of the counts that moved since the series' last write, `REFRESH`
        ago."""
        now = self._clock()
        for key, series in list(self._series.items()):
            if series.count > series.written and now - series.written_at >= REFRESH:
                series.written_at = now  # queued: not queued again before it is written
                self._queue(key)

    async def sent(self) -> None:
        """Until everything queued is sent (or given up)."""
        while self._sender is not None and not self._sender.done():
            await asyncio.wait([self._sender])

    def stop(self) -> None:
        """Send nothing more (what is queued is dropped): the process is leaving."""
        self._outbox.clear()
        if self._sender is not None:
            self._sender.cancel()

    def _queue(self, item: _Occurrence | Key) -> None:
        if len(self._outbox) >= PENDING:
            if not self._dropped:
                logger.warning("%d Events wait to be sent: dropping new ones", PENDING)
            self._dropped += 1
            return
        self._outbox.append(item)
        if self._sender is None or self._sender.done():
            self._sender = asyncio.get_running_loop().create_task(self._send_all())

    async def _send_all(self) -> None:
        while self._outbox:
            item = self._outbox.popleft()
            try:
                if isinstance(item, _Occurrence):
                    await self._occur(item)
                elif (series := self._series.get(item)) is not None:
                    await self._update(item, series)
            except Exception:  # a bug must not stop the Events behind it
                logger.exception("recording an Event failed")
        if self._dropped:
            logger.warning("dropped %d Events while too many waited", self._dropped)
            self._dropped = 0

    async def _occur(self, occurrence: _Occurrence) -> None:
        key, message = occurrence.key, occurrence.message
        series = self._series.get(key)
        if series is None:
            await self._create(key, occurrence.ref, occurrence.type, occurrence.reason, message)
            return
        self._series.move_to_end(key)
        series.count += 1
        series.message = message
        if series.written == 1 or self._clock() - series.written_at >= REFRESH:
            await self._update(key, series)

    async def _create(self, key: Key, ref: Ref, type: str, reason: str, message: str) -> None:
        namespace = ref.namespace or "default"
        now = _now()
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
            "message": message,
            "source": {"component": COMPONENT},
            "reportingComponent": COMPONENT,
            "firstTimestamp": now,
            "lastTimestamp": now,
            "count": 1,
        }
        path = f"/api/v1/namespaces/{namespace}/events"
        match await self._api.send("POST", path, body, rank=Rank.EVENTS):
            case Done(created):
                name = created["metadata"]["name"]
                self._series[key] = Series(
                    ref, type, reason, namespace, name, 1, 1, self._clock(), message
                )
                while len(self._series) > SERIES:
                    self._series.popitem(last=False)
            case failure:
                logger.warning("cannot record an Event on %s: %r", _shown(ref), failure.error)

    async def _update(self, key: Key, series: Series) -> None:
        ref = series.ref
        patch = {"count": series.count, "lastTimestamp": _now(), "message": series.message}
        path = f"/api/v1/namespaces/{series.namespace}/events/{series.name}"
        series.written, series.written_at = series.count, self._clock()
        match await self._api.send("PATCH", path, patch, rank=Rank.EVENTS, content_type=MERGE):
            case Done():
                pass
            case Gone():  # expired (Events live an hour): a new series
                del self._series[key]
                await self._create(key, ref, series.type, series.reason, series.message)
            case failure:
                logger.warning("cannot update an Event on %s: %s", _shown(ref), failure.why)


def _shown(ref: Ref) -> str:
    return f"{ref.kind} {ref.namespace}/{ref.name}"
