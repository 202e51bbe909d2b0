"""Objects by resource, one global resourceVersion (as etcd's revision), a bounded window of
past events per resource (the watch cache), paginated snapshots (etcd reads at a revision), and
the open watches each event is fanned out to.

Stored objects are never mutated: every write stores a new dict, so a snapshot is a shallow copy
of a dict and every object is encoded to JSON once, when it is stored.
"""

from __future__ import annotations

import asyncio
import base64
import bisect
import collections
import itertools
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson

from .errors import ApiError, status
from .resources import Resource

Predicate = Callable[[dict[str, Any]], bool]
EXPIRED_CONTINUE = (
    "The provided continue parameter is too old to display a consistent list result. You can "
    "start a new list without the continue parameter, or use the continue token in this response "
    "to retrieve the remainder of the results. Continuing with the provided token results in an "
    "inconsistent list - objects that were created, modified, or deleted between the time the "
    "first chunk was returned and now may show up in the list."
)


def encode(obj: Any) -> bytes:
    return orjson.dumps(obj)


def key_of(namespace: str | None, name: str) -> str:
    """etcd's key order: namespace, then name (`/registry/pods/ns/name`)."""
    return f"{namespace}/{name}" if namespace else name


@dataclass(slots=True)
class Stored:
    obj: dict[str, Any]
    raw: bytes

    @property
    def rv(self) -> int:
        return int(self.obj["metadata"]["resourceVersion"])


@dataclass(slots=True)
class Event:
    rv: int
    type: str
    new: Stored  # for DELETED: the last stored state, stamped with the deleting RV
    old: Stored | None
    _lines: dict[str, bytes] = field(default_factory=dict)

    def line(self, kind: str) -> bytes:
        """The event as one watch line, encoded once for all watchers. A selector watcher for which
        the object stopped matching gets DELETED of the old state, with the new RV."""
        cached = self._lines.get(kind)
        if cached is None:
            raw = self.new.raw
            if kind == "DELETED" and self.type == "MODIFIED" and self.old is not None:
                metadata = {**self.old.obj["metadata"], "resourceVersion": str(self.rv)}
                raw = encode({**self.old.obj, "metadata": metadata})
            cached = self._lines[kind] = (
                b'{"type":"' + kind.encode() + b'","object":' + raw + b"}\n"
            )
        return cached


@dataclass(slots=True, eq=False)
class Watcher:
    """One open watch: the lines waiting to be written, and how the stream must end."""

    namespace: str | None
    matches: Predicate | None
    buffer: list[bytes] = field(default_factory=list)
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    finish: bool = False  # end the stream cleanly after the buffer (an injected ERROR event)
    abort: bool = False  # drop the connection without ending the chunked stream

    def _sees(self, obj: dict[str, Any]) -> bool:
        if self.namespace is not None and obj["metadata"].get("namespace") != self.namespace:
            return False
        return self.matches is None or self.matches(obj)

    def kind_for(self, event: Event) -> str | None:
        """The type this watcher gets the event as (cache_watcher's convertToWatchEvent)."""
        new = self._sees(event.new.obj)
        if event.type != "MODIFIED":
            return event.type if new else None
        old = event.old is not None and self._sees(event.old.obj)
        if new:
            return "MODIFIED" if old else "ADDED"
        return "DELETED" if old else None

    def offer(self, event: Event) -> None:
        kind = self.kind_for(event)
        if kind is not None:
            self.buffer.append(event.line(kind))
            self.wake.set()

    def send(self, line: bytes, *, finish: bool = False, abort: bool = False) -> None:
        self.buffer.append(line)
        self.finish |= finish
        self.abort |= abort
        self.wake.set()


@dataclass(slots=True)
class Snapshot:
    """A resource's keys and objects at one RV, for the later pages of a paginated list."""

    rv: int
    keys: list[str]
    items: dict[str, Stored]
    made: float


class Table:
    """One resource's objects, history window and watchers."""

    def __init__(self, resource: Resource, window: int) -> None:
        self.resource = resource
        self.items: dict[str, Stored] = {}
        self.history: collections.deque[Event] = collections.deque()
        self.window = window
        self.window_start = 0  # every event of this resource after this RV is in `history`
        self.watchers: set[Watcher] = set()
        self._keys: list[str] | None = []
        self._snapshot: Snapshot | None = None

    def keys(self) -> list[str]:
        if self._keys is None:
            self._keys = sorted(self.items)
        return self._keys

    def record(self, event: Event, key: str, stored: Stored | None) -> None:
        if stored is None:
            del self.items[key]
            self._keys = None
        else:
            if key not in self.items:
                self._keys = None
            self.items[key] = stored
        self._snapshot = None
        self.history.append(event)
        while len(self.history) > self.window:
            self.window_start = self.history.popleft().rv
        for watcher in self.watchers:
            watcher.offer(event)

    def snapshot(self, rv: int) -> Snapshot:
        if self._snapshot is None:
            self._snapshot = Snapshot(rv, self.keys(), dict(self.items), time.monotonic())
        return self._snapshot

    def compact(self, rv: int) -> None:
        self.history.clear()
        self.window_start = rv

    def since(self, rv: int) -> list[Event] | None:
        """The events after `rv`, oldest first, read back from the newest (a watch from a
        recent version costs what came since); None when some have left the window."""
        if rv < self.window_start:
            return None
        events = list(itertools.takewhile(lambda event: event.rv > rv, reversed(self.history)))
        events.reverse()
        return events


class Storage:
    """Every table, the global RV, and list snapshots kept for continue tokens."""

    def __init__(self, resources: tuple[Resource, ...], *, window: int, snapshot_ttl: float):
        self.rv = 0
        self.window = window
        self.tables = {r.key: Table(r, window) for r in resources}
        self.compacted = 0  # etcd's compaction: continue tokens at an older RV are expired
        self.snapshot_ttl = snapshot_ttl
        self._snapshots: collections.OrderedDict[tuple[str, int], Snapshot] = (
            collections.OrderedDict()
        )

    def add(self, resource: Resource) -> None:
        """The table of a CRD installed while the server runs."""
        self.tables[resource.key] = Table(resource, self.window)

    # Writes: the caller has built the new object; storage stamps the RV and tells watchers.

    def put(self, resource: Resource, obj: dict[str, Any], *, type: str) -> Stored:
        self.rv += 1
        metadata = {**obj["metadata"], "resourceVersion": str(self.rv)}
        obj = {**obj, "metadata": metadata}
        stored = Stored(obj, encode(obj))
        table = self.tables[resource.key]
        key = key_of(metadata.get("namespace"), metadata["name"])
        old = table.items.get(key)
        table.record(Event(self.rv, type, stored, old), key, stored)
        return stored

    def remove(self, resource: Resource, key: str) -> Stored:
        table = self.tables[resource.key]
        last = table.items[key]
        self.rv += 1
        metadata = {**last.obj["metadata"], "resourceVersion": str(self.rv)}
        obj = {**last.obj, "metadata": metadata}
        gone = Stored(obj, encode(obj))
        table.record(Event(self.rv, "DELETED", gone, last), key, None)
        return gone

    def get(self, resource: Resource, namespace: str | None, name: str) -> Stored | None:
        return self.tables[resource.key].items.get(key_of(namespace, name))

    def compact(self) -> None:
        """Forget all history: watches and continue tokens from before now get 410."""
        self.compacted = self.rv
        self._snapshots.clear()
        for table in self.tables.values():
            table.compact(self.rv)

    # Reads.

    def list(
        self,
        resource: Resource,
        namespace: str | None,
        *,
        matches: Predicate | None,
        limit: int,
        token: str | None,
    ) -> tuple[list[bytes], int, str | None, int | None]:
        """(encoded items, the list's RV, continue token, remainingItemCount)."""
        table = self.tables[resource.key]
        start = ""
        if token:
            rv, start = _decode_token(token)
            snapshot = self._reopen(resource, rv, start)
        else:
            snapshot = table.snapshot(self.rv)
        keys = snapshot.keys
        lo, hi = 0, len(keys)
        if namespace is not None and resource.namespaced:
            lo, hi = (
                bisect.bisect_left(keys, namespace + "/"),
                bisect.bisect_left(keys, namespace + "0"),
            )
        position = max(lo, bisect.bisect_left(keys, start))
        found: list[bytes] = []
        while position < hi and (limit <= 0 or len(found) < limit):
            stored = snapshot.items[keys[position]]
            position += 1
            if matches is None or matches(stored.obj):
                found.append(stored.raw)
        if position >= hi or limit <= 0:
            return found, snapshot.rv, None, None
        self._keep(resource, snapshot)
        remaining = None if matches is not None else hi - position
        return (
            found,
            snapshot.rv,
            _encode_token(snapshot.rv, keys[position - 1] + "\x00"),
            remaining,
        )

    def _keep(self, resource: Resource, snapshot: Snapshot) -> None:
        self._snapshots[resource.key, snapshot.rv] = snapshot
        self._snapshots.move_to_end((resource.key, snapshot.rv))
        while len(self._snapshots) > 64:  # the oldest are "compacted": their tokens get 410
            self._snapshots.popitem(last=False)

    def _reopen(self, resource: Resource, rv: int, start: str) -> Snapshot:
        if rv == -1:  # the token of a 410: the rest at the latest revision
            return self.tables[resource.key].snapshot(self.rv)
        snapshot = self._snapshots.get((resource.key, rv))
        fresh = snapshot is not None and time.monotonic() - snapshot.made < self.snapshot_ttl
        if rv < self.compacted or snapshot is None or not fresh:
            self._snapshots.pop((resource.key, rv), None)
            raise ApiError(
                410,
                EXPIRED_CONTINUE,
                reason="Expired",
                details=None,
            ).with_metadata({"continue": _encode_token(-1, start)})
        return snapshot

    # Watches.

    def watch(
        self,
        resource: Resource,
        namespace: str | None,
        matches: Predicate | None,
        since: int | None,
    ) -> tuple[Watcher, Iterator[bytes]]:
        """Register a watcher and return the lines it must get first: synthetic ADDED for the
        current objects (`since` None), the window's events after `since`, or one ERROR event
        when `since` is older than the window."""
        table = self.tables[resource.key]
        watcher = Watcher(namespace, matches)
        if since is None:
            current = [s for s in table.items.values() if watcher._sees(s.obj)]
            first: Iterator[bytes] = (
                b'{"type":"ADDED","object":' + s.raw + b"}\n" for s in current
            )
        else:
            events = table.since(since)
            if events is None:
                message = f"too old resource version: {since} ({table.window_start + 1})"
                line = error_line(410, message, reason="Expired")
                return watcher, iter([line])
            first = (line for e in events if (k := watcher.kind_for(e)) for line in [e.line(k)])
            first = iter(list(first))
        table.watchers.add(watcher)
        return watcher, first

    def unwatch(self, resource: Resource, watcher: Watcher) -> None:
        self.tables[resource.key].watchers.discard(watcher)

    def watchers(self) -> Iterator[Watcher]:
        for table in self.tables.values():
            yield from table.watchers


def error_line(code: int, message: str, *, reason: str | None = None) -> bytes:
    return b'{"type":"ERROR","object":' + encode(status(code, message, reason=reason)) + b"}\n"


def _encode_token(rv: int, start: str) -> str:
    body = encode({"v": "meta.k8s.io/v1", "rv": rv, "start": start})
    return base64.urlsafe_b64encode(body).decode().rstrip("=")


def _decode_token(token: str) -> tuple[int, str]:
    try:
        body = orjson.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
        return int(body["rv"]), str(body["start"])
    except (ValueError, KeyError, TypeError) as error:
        raise ApiError(
            400, f"invalid continue token: continue key is not valid: {error}"
        ) from error
