"""Pacing writes to the API server: client-go's token bucket, its waiters served by rank, and
client-go's rate-limited work queue.

client-go paces every client with `flowcontrol.NewTokenBucketRateLimiter(qps, burst)`: a burst
of `burst` requests goes at once, then `qps` per second. API Priority and Fairness protects the
server too, but a client that floods it only gets 429s and crowds out its neighbours. client-go
serves its waiters first come, first served; here each waiter has a rank, so that a client
whose writes outnumber its budget spends the budget on what matters first.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import contextvars
import heapq
import itertools
import math
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from .backoff import Backoff

Rank = int | Callable[[], int]
"""Where a waiter stands: the lower, the sooner served (0 first). A callable is asked again
each time a token is handed out (and at `review`): a worker's rank follows the work it would
take at that moment."""

LAST = sys.maxsize
"""The rank a callable gives when its waiter has nothing to send any more: it leaves without a
token."""


@dataclass(slots=True, eq=False)
class _Held:
    """A token taken before its task knew what it would send; spent once, by whichever request
    comes first (a task started meanwhile shares it: it is not spent twice)."""

    bucket: TokenBucket
    spent: bool = False


_HELD: contextvars.ContextVar[_Held | None] = contextvars.ContextVar(
    "eq_kit.throttling.held", default=None
)


@dataclass(slots=True, eq=False)
class _Waiter:
    rank: Rank
    granted: asyncio.Future[bool]

    def now(self) -> int:
        return self.rank() if callable(self.rank) else self.rank


class TokenBucket:
    """`qps` tokens a second, up to `burst` saved; `qps <= 0`: no limit.

    A request takes a token at once while none waits. Otherwise it waits, and each token, as it
    comes, goes to the waiter of the lowest rank, the first come among equals: a waiter of rank
    0 (the default) gets the next token however many of rank 1 wait, and those of rank 1 get
    what rank 0 leaves. Nothing is reserved ahead (Go's `rate.Limiter` lets waiters book the
    tokens to come, which would fix the order as they arrive). The waiters are few (one per
    worker of a `Pool`, one per other task that writes), so each token looks at all of them."""

    def __init__(
        self, qps: float, burst: int, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.qps, self.burst = qps, max(1, burst)
        self._clock = clock
        self._tokens = float(self.burst)
        self._stamp = clock()
        self._waiters: list[_Waiter] = []  # in the order they came
        self._dispenser: asyncio.Task[None] | None = None
        self.waited = 0.0
        """Seconds spent waiting for tokens in all, for the metrics."""

    @property
    def waiting(self) -> int:
        """How many wait for a token now."""
        return len(self._waiters)

    async def acquire(self, rank: Rank = 0) -> bool:
        """Take a token, waiting behind every waiter of a lower rank; a token this task holds
        already (`holding`) is spent instead. False if `rank` said LAST before a token came:
        none was taken."""
        held = _HELD.get()
        if held is not None and held.bucket is self and not held.spent:
            held.spent = True
            return True
        if self.qps <= 0:
            return True
        self._refill()
        if not self._waiters and self._tokens >= 1:
            self._tokens -= 1
            return True
        waiter = _Waiter(rank, asyncio.get_running_loop().create_future())
        self._waiters.append(waiter)
        started = self._clock()
        try:
            self._hand_out()
            return await waiter.granted
        except asyncio.CancelledError:
            if waiter in self._waiters:
                self._waiters.remove(waiter)
                if not self._waiters and self._dispenser is not None:
                    self._dispenser.cancel()  # nobody left to wait for
                    self._dispenser = None
            elif not waiter.granted.cancelled() and waiter.granted.result():
                self.refund()  # handed out as the task was cancelled: not spent
            raise
        finally:
            self.waited += self._clock() - started

    def review(self) -> None:
        """The ranks may have changed (a worker took a key others waited for): the waiters
        whose rank is now LAST leave, without a token."""
        for waiter in [w for w in self._waiters if w.now() == LAST]:
            self._waiters.remove(waiter)
            if not waiter.granted.done():
                waiter.granted.set_result(False)

    def refund(self) -> None:
        """Give back a token taken and not spent: the first waiter in rank has it at once."""
        if self.qps <= 0:
            return
        self._refill()
        self._tokens = min(self.burst, self._tokens + 1.0)
        self._hand_out()

    @contextlib.contextmanager
    def holding(self) -> Iterator[None]:
        """Within, the current task holds a token it took already (`acquire`): its next
        `acquire` of this bucket spends it instead of waiting. One not spent by the end is
        given back (`refund`).

        A worker takes its token before it takes a key, so the key is chosen, and compared,
        when the token comes: the work that matters most then, as it is then."""
        held = _Held(self)
        outer = _HELD.set(held)
        try:
            yield
        finally:
            _HELD.reset(outer)
            if not held.spent:
                self.refund()

    def _refill(self) -> None:
        now = self._clock()
        self._tokens = min(self.burst, self._tokens + max(0.0, now - self._stamp) * self.qps)
        self._stamp = now

    def _hand_out(self) -> None:
        """Each whole token to the waiter of the lowest rank now; while some still wait, the
        dispenser sleeps until the next token."""
        self._grant()
        if self._waiters and self._dispenser is None:
            self._dispenser = asyncio.get_running_loop().create_task(self._dispense())

    def _grant(self) -> None:
        self._refill()
        while self._waiters and self._tokens >= 1:
            waiter = min(self._waiters, key=_Waiter.now)  # the first of the lowest rank
            if waiter.now() == LAST:
                self.review()  # only those with nothing to send are left
                break
            self._waiters.remove(waiter)
            if not waiter.granted.done():  # not cancelled meanwhile
                self._tokens -= 1
                waiter.granted.set_result(True)

    async def _dispense(self) -> None:
        """Until nobody waits: sleep until the next token comes, and hand it out."""
        try:
            while self._waiters:
                # Whole milliseconds, rounded up: uvloop's timers count in them and may fire
                # up to one early, and it runs a wait under half of one at once, so a shorter
                # wait for the rest of a token would spin the loop until the token came.
                due = max(0.0, 1.0 - self._tokens) / self.qps
                await asyncio.sleep(math.ceil(due * 1000) / 1000)
                self._grant()
        finally:
            if self._dispenser is asyncio.current_task():
                self._dispenser = None


class WorkQueue:
    """client-go's rate-limited work queue, for one event loop: a key is pending at most once,
    either ready (due now, first come first served) or waiting out its `Backoff` (`first`
    seconds doubling to `cap`); `take` hands it to one worker, and it stays out until that
    worker puts it back (`again`, `failed`) or is `done` with it. Finding the next key costs
    the same with 10 keys pending or 100,000. A key gets its backoff when it first fails, and
    the tables are made anew when the queue empties (a dict never shrinks as keys leave it): a
    first labelling of 100,000 pods leaves nothing of its size behind. The line of keys due is
    a deque (8 B a key; an OrderedDict, 91 B), which each pending key is in at most once:
    `again` and `failed` are for the key a worker took, and `done` of a key still in line
    takes it out."""

    def __init__(self, first: float, cap: float, clock: Callable[[], float]) -> None:
        self._first, self._cap, self._clock = first, cap, clock
        self.pending: dict[str, Backoff | None] = {}
        """Each key pending, with its backoff once it has failed (None: none failed yet)."""
        self._taken: set[str] = set()
        self._ready: collections.deque[str] = collections.deque()
        self._waiting: list[tuple[float, int, str, Backoff]] = []  # a heap, by time
        self._order = itertools.count()

    def __len__(self) -> int:
        return len(self.pending)

    def add(self, key: str) -> bool:
        """Due now, unless pending already (one waiting keeps its backoff); whether it was
        added."""
        if key in self.pending:
            return False
        self.pending[key] = None
        self._ready.append(key)
        return True

    def again(self, key: str) -> int:
        """The key taken is due again now, its backoff reset; the failures it had (0 if it is
        no longer pending, or was not taken)."""
        if key not in self._taken:
            return 0
        self._taken.discard(key)
        if key not in self.pending:
            return 0
        backoff = self.pending[key]
        self.pending[key] = None
        self._ready.append(key)
        return 0 if backoff is None else backoff.failures

    def failed(self, key: str, retry_after: float = 0.0) -> int | None:
        """The key taken is due after its backoff (or `retry_after`); its failures so far,
        None if it is no longer pending (or was not taken)."""
        if key not in self._taken:
            return None
        self._taken.discard(key)
        if key not in self.pending:
            return None
        backoff = self.pending[key]
        if backoff is None:
            backoff = self.pending[key] = Backoff(self._first, self._cap)
        backoff.failed(self._clock(), retry_after)
        heapq.heappush(self._waiting, (backoff.not_before, next(self._order), key, backoff))
        return backoff.failures

    def done(self, key: str) -> None:
        """The key leaves the queue. One its worker took costs nothing; one still in line (not
        how workers end a key) is looked for along the line, a walk of every key due."""
        if key in self._taken:
            self._taken.discard(key)
        elif key in self.pending:
            with contextlib.suppress(ValueError):
                self._ready.remove(key)
        self.pending.pop(key, None)
        if not self.pending:
            self.pending, self._ready = {}, collections.deque()

    def release(self, key: str) -> None:
        """Put a key taken and not given back (its worker was cancelled, say) back in line,
        its backoff kept; nothing if it was given back."""
        if key in self._taken:
            self._taken.discard(key)
            if key in self.pending:
                self._ready.append(key)

    def next_due(self) -> float | None:
        """When the first key waiting out its backoff comes due (None: none waits)."""
        return self._waiting[0][0] if self._waiting else None

    def due(self) -> bool:
        """Whether a key is due now (`take` would hand one out)."""
        now, waiting = self._clock(), self._waiting
        while waiting and waiting[0][0] <= now:
            _, _, key, backoff = heapq.heappop(waiting)
            if self.pending.get(key) is backoff:  # not done, put back or failed again since
                self._ready.append(key)
        return bool(self._ready)

    def take(self) -> str | None:
        """The next key due now, handed out once; None if none is."""
        if not self.due():
            return None
        key = self._ready.popleft()
        self._taken.add(key)
        return key
