"""Faults a test injects into the running emulator: canned answers and dropped connections for
matching requests, N times or for a while."""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass


@dataclass
class Fault:
    """Requests with this method and resource (and, when given, subresource, name, namespace,
    and verb: `list` and `watch` are both GETs) get `status` (or a dropped connection with
    `drop=True`; or, with `latency`, their usual answer after that many seconds: a slow
    server) `times` times, or until `seconds` have passed when given."""

    method: str
    resource: str
    subresource: str | None = None
    name: str | None = None
    namespace: str | None = None
    verb: str | None = None
    status: int = 500
    times: int = 1
    seconds: float | None = None
    retry_after: int | None = None
    drop: bool = False
    latency: float = 0.0
    message: str = "injected fault"
    hits: int = 0
    _until: float | None = None

    def __post_init__(self) -> None:
        self.method = self.method.upper()
        if self.seconds is not None:
            self._until = time.monotonic() + self.seconds

    @property
    def spent(self) -> bool:
        if self._until is not None:
            return time.monotonic() >= self._until
        return self.hits >= self.times

    def matches(self, call: Call) -> bool:
        return (
            self.method in (call.method, "*")
            and self.verb in (None, call.verb)
            and self.resource == call.resource
            and (self.subresource is None or self.subresource == call.subresource)
            and (self.name is None or self.name == call.name)
            and (self.namespace is None or self.namespace == call.namespace)
        )


@dataclass(frozen=True, slots=True)
class Call:
    """A request as faults match it."""

    method: str
    verb: str
    resource: str
    subresource: str
    name: str
    namespace: str | None


class Faults:
    def __init__(self) -> None:
        self.active: list[Fault] = []
        self._stopping = asyncio.Event()

    async def slow(self, fault: Fault) -> None:
        """Wait out a slow answer's `latency`; at once when the server stops (a stalled watch
        must not hold the server's shutdown)."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stopping.wait(), fault.latency)

    def release(self) -> None:
        """The server stops: every slow answer goes now."""
        self._stopping.set()

    def add(self, fault: Fault) -> Fault:
        self.active.append(fault)
        return fault

    def clear(self) -> None:
        self.active.clear()

    def take(self, call: Call) -> Fault | None:
        """The first live fault for this request, counted as used once."""
        self.active = [f for f in self.active if not f.spent]
        for fault in self.active:
            if fault.matches(call):
                fault.hits += 1
                return fault
        return None
