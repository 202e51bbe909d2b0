"""Pacing writes to the API server: client-go's token bucket, and its rate-limited work queue.

client-go paces every client with `flowcontrol.NewTokenBucketRateLimiter(qps, burst)`: a burst
of `burst` requests goes at once, then `qps` per second. API Priority and Fairness protects the
server too, but a client that floods it only gets 429s and crowds out its neighbours.
"""

from __future__ import annotations

import asyncio
import collections
import heapq
import itertools
import time
from collections.abc import Callable

from .backoff import Backoff


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


class WorkQueue:
    """client-go's rate-limited work queue, for one event loop: a key is pending at most once,
    either ready (due now, first come first served) or waiting out its `Backoff` (`first`
    seconds doubling to `cap`); `take` hands it to one worker, and it stays out until that
    worker puts it back (`again`, `failed`) or is `done` with it. Finding the next key costs
    the same with 10 keys pending or 100,000."""

    def __init__(self, first: float, cap: float, clock: Callable[[], float]) -> None:
        self._first, self._cap, self._clock = first, cap, clock
        self.pending: dict[str, Backoff] = {}
        self._taken: set[str] = set()
        # An ordered set; OrderedDict takes from the front in O(1), where a dict would step
        # over every slot deleted before it.
        self._ready: collections.OrderedDict[str, None] = collections.OrderedDict()
        self._waiting: list[tuple[float, int, str, Backoff]] = []  # a heap, by time
        self._order = itertools.count()

    def __len__(self) -> int:
        return len(self.pending)

    def add(self, key: str) -> bool:
        """Due now, unless pending already (one waiting keeps its backoff); whether it was
        added."""
        if key in self.pending:
            return False
        self.pending[key] = Backoff(self._first, self._cap)
        self._ready[key] = None
        return True

    def again(self, key: str) -> int:
        """Due again now, its backoff reset; the failures it had (0 if no longer pending)."""
        self._taken.discard(key)
        backoff = self.pending.get(key)
        if backoff is None:
            return 0
        self.pending[key] = Backoff(self._first, self._cap)
        self._ready[key] = None
        return backoff.failures

    def failed(self, key: str, retry_after: float = 0.0) -> int | None:
        """Due after its backoff (or `retry_after`); its failures so far, None if it is no
        longer pending."""
        self._taken.discard(key)
        backoff = self.pending.get(key)
        if backoff is None:
            return None
        backoff.failed(self._clock(), retry_after)
        heapq.heappush(self._waiting, (backoff.not_before, next(self._order), key, backoff))
        return backoff.failures

    def done(self, key: str) -> None:
        self._taken.discard(key)
        self.pending.pop(key, None)
        self._ready.pop(key, None)

    def release(self, key: str) -> None:
        """Put a key taken and not given back (its worker was cancelled, say) back in line,
        its backoff kept; nothing if it was given back."""
        if key in self._taken:
            self._taken.discard(key)
            if key in self.pending:
                self._ready[key] = None

    def next_due(self) -> float | None:
        """When the first key waiting out its backoff comes due (None: none waits)."""
        return self._waiting[0][0] if self._waiting else None

    def take(self) -> str | None:
        """The next key due now, handed out once; None if none is."""
        now, waiting = self._clock(), self._waiting
        while waiting and waiting[0][0] <= now:
            _, _, key, backoff = heapq.heappop(waiting)
            if self.pending.get(key) is backoff:  # not done or put back since
                self._ready[key] = None
        if not self._ready:
            return None
        key = self._ready.popitem(last=False)[0]
        self._taken.add(key)
        return key
