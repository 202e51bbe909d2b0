"""Waiting longer after each failure in a row: the one backoff of the product.

A `Backoff` belongs to one thing that fails and is tried again (a key in a work queue, a watch
that broke, a server that did not answer). Its n-th pause in a row is `first` doubled n - 1
times, never more than `cap`, times a random factor drawn from `jitter`, so that many things
failing together do not come back together. A success resets it.

It only computes: the caller either sleeps the pause (`sleep`), or notes when the thing is due
again on a clock of its own (`failed(now)`, `due(now)`), so tests pass a fake time.
"""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass

FIRST_RETRY, LAST_RETRY = 0.25, 5.0
"""Seconds before a failed request (a write, a gate's lift, a probe of a server that did not
answer) is tried again: the first pause, doubling up to the last. Short, because the operator's
writes are what users wait for; client-go's per-item limiter starts sooner (5 ms) but ends
later (1000 s)."""

_DOUBLINGS = 60
"""Doublings after which `first` is past any cap (2**60 times a nanosecond is 36 years): more
would overflow a float after about 1,000 failures in a row."""


@dataclass(slots=True)
class Backoff:
    """`first` seconds, doubling up to `cap`, each pause scaled by a factor in `jitter`.

    `Backoff(1.0, 4.0, jitter=(1.0, 1.0))` pauses 1, 2, 4, 4, ... s; client-go's reflector
    backoff is `Backoff(0.8, 30.0, jitter=(1.0, 2.0))`. No pause is longer than `cap`, whatever
    the jitter (only the server's `Retry-After` may ask for longer)."""

    first: float
    cap: float
    jitter: tuple[float, float] = (0.9, 1.1)
    """The range of the random factor each pause is multiplied by."""
    failures: int = 0
    """Failures in a row since the last reset."""
    not_before: float = 0.0
    """The caller's clock time before which it is not tried again (`failed`)."""

    def next(self) -> float:
        """Count a failure; the seconds to wait before the next try."""
        self.failures += 1
        pause = min(self.cap, self.first * 2.0 ** min(self.failures - 1, _DOUBLINGS))
        return min(self.cap, pause * random.uniform(*self.jitter))

    def failed(self, now: float, retry_after: float = 0.0) -> None:
        """Count a failure at `now`: due again after the pause, or after `retry_after` seconds
        if the server asked for longer."""
        self.not_before = now + max(retry_after, self.next())

    def due(self, now: float) -> bool:
        """Whether it may be tried at `now` (the clock `failed` was given)."""
        return now >= self.not_before

    def reset(self) -> None:
        """It succeeded: the next failure pauses `first` again, and it is due now."""
        self.failures, self.not_before = 0, 0.0

    async def sleep(self) -> None:
        """Count a failure and wait out the pause."""
        await asyncio.sleep(self.next())
