"""Pacing writes to the API server: client-go's token bucket, and a bounded pool of workers.

client-go paces every client with `flowcontrol.NewTokenBucketRateLimiter(qps, burst)`: a burst
of `burst` requests goes at once, then `qps` per second. API Priority and Fairness protects the
server too, but a client that floods it only gets 429s and crowds out its neighbours.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import TypeVar

Item = TypeVar("Item")


class TokenBucket:
    """`qps` tokens a second, up to `burst` saved; `qps <= 0`: no limit.

    Waiters reserve their token as they arrive (the balance may go negative), so they are
    served in order, as Go's `rate.Limiter` serves them."""

    def __init__(
        self, qps: float, burst: int, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.qps, self.burst = qps, max(1, burst)
        self._clock = clock
        self._tokens = float(self.burst)
        self._stamp = clock()
        self.waited = 0.0
        """Seconds spent waiting for tokens in all, for the metrics."""

    def reserve(self) -> float:
        """Take a token; the seconds to wait before using it."""
        if self.qps <= 0:
            return 0.0
        now = self._clock()
        self._tokens = min(self.burst, self._tokens + (now - self._stamp) * self.qps)
        self._stamp = now
        self._tokens -= 1.0
        return 0.0 if self._tokens >= 0 else -self._tokens / self.qps

    async def acquire(self) -> None:
        delay = self.reserve()
        if delay > 0:
            self.waited += delay
            await asyncio.sleep(delay)


@dataclass(slots=True)
class Retry:
    """The backoff of one thing that failed (client-go's per-item rate limiter): `first`
    seconds, doubling up to `last`, with 10% jitter, or longer when the server said so."""

    first: float
    last: float
    failures: int = 0
    not_before: float = 0.0
    """The clock's time before which it is not tried again."""

    def failed(self, now: float, retry_after: float = 0.0) -> None:
        self.failures += 1
        pause = min(self.last, self.first * 2 ** (self.failures - 1))
        self.not_before = now + max(retry_after, pause * random.uniform(0.9, 1.1))

    def due(self, now: float) -> bool:
        return now >= self.not_before


async def each(
    items: Iterable[Item], work: Callable[[Item], Awaitable[None]], *, workers: int
) -> None:
    """`work` on every item, at most `workers` at a time (a pool, not a task per item: a first
    install may have 100,000 pods to label)."""
    iterator = iter(items)

    async def worker() -> None:
        for item in iterator:
            await work(item)

    async with asyncio.TaskGroup() as group:  # one failing stops (cancels) the others
        for _ in range(max(1, workers)):
            group.create_task(worker())
