"""Workers over rate-limited work queues, as a client-go controller runs its workers: each takes
a key that is due, does what the key needs, and gives it back; with nothing due, it rests until
keys are added (`wake`) or the next backoff ends.

Work comes in lanes (`Lane`: a name, a `WorkQueue`, what a key of it needs, and a rank), and
each worker serves the lanes it was given in its order of preference, taking from the first
with a key due: so one kind of work is never starved by a burst of another. A key is in one
worker's hands at a time, and one slow key holds up no other. An exception from the work (a
bug) is handed to `crashed` and the worker goes on; a bug in the pool itself stops all of its
workers, and is logged. A `hold` (a `Backoff`, say of a server that did not answer) stops all
taking until it is due.

With a `budget` (a `TokenBucket`), a worker takes its token before it takes a key: it waits at
the rank of the lane it would take from (asked again as each token is handed out), and once it
has the token takes the first key due *then*, whose first request spends that token (a token
for keys that turn out to need nothing goes back). So the keys wait in their queues, not in the
workers' hands: a key of a better lane (a lower rank) that comes while every worker waits goes
out at the next token, and a key added again while it waits is looked at once, as it is then.

It knows nothing of what the work is, and makes no request of its own.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass

from .backoff import Backoff
from .throttling import LAST, TokenBucket, WorkQueue

logger = logging.getLogger("eq_kit.workers")

Work = Callable[[WorkQueue, str], Awaitable[None] | None]
"""What a key taken off its queue needs: None if nothing (the key is then `done`), else the
work to await, which gives the key back (`again`, `failed` or `done`)."""

Crashed = Callable[[str, WorkQueue, str, Exception], None]
"""Told, inside the `except`, that a key's work raised: the lane's name, its queue, the key and
the error. It gives the key back (`failed`, say) and says what happened."""

REST = (0.01, 1.0)
"""Seconds a worker with nothing due rests, at least and at most, while a backoff runs: it looks
again when the first ends, or after a second if that is later (a clock that jumps), unless
woken before. With no backoff running it rests until woken."""


@dataclass(frozen=True, slots=True)
class Lane:
    """One kind of work: its name (for the logs), its queue, what a key of it needs, its rank
    for the budget (`TokenBucket`: the lower, the sooner), and, where given, the condition under
    which it is served at all (a worker skips it otherwise)."""

    name: str
    queue: WorkQueue
    work: Work
    rank: int = 0
    only_while: Callable[[], bool] | None = None

    def served(self) -> bool:
        """Whether a worker takes from it now (`only_while`)."""
        return self.only_while is None or self.only_while()

    def due(self) -> bool:
        """Whether it is served and has a key due now."""
        return self.served() and self.queue.due()


class Pool:
    """The workers of one owner (`name` names them in the logs), started together and stopped
    together, on the owner's clock (the queues' clock)."""

    def __init__(
        self,
        name: str,
        *,
        clock: Callable[[], float],
        crashed: Crashed,
        hold: Backoff | None = None,
        budget: TokenBucket | None = None,
    ) -> None:
        self.name = name
        self._clock, self._crashed, self._hold = clock, crashed, hold
        self._budget = budget if budget is not None and budget.qps > 0 else None
        self._run: asyncio.Task[None] | None = None
        self._workers = 0
        self._resting = 0
        self._wake = asyncio.Event()  # keys were added
        self._quiet = asyncio.Event()  # every worker rests, with nothing due

    @property
    def running(self) -> bool:
        return self._run is not None and not self._run.done()

    def start(self, teams: Iterable[tuple[Sequence[Lane], int]]) -> None:
        """Start the workers, unless they run: for each team, its count of workers, each
        serving the team's lanes in that order. They stay, resting when nothing is due, until
        `stop`. E.g. `[((groups, pods), 1), ((pods, groups), 3)]`: one worker prefers groups,
        three prefer pods."""
        if self.running:
            return
        workers = [tuple(lanes) for lanes, count in teams for _ in range(count)]
        self._workers = len(workers)
        self._quiet.clear()
        self._run = asyncio.create_task(self._together(workers))
        self._run.add_done_callback(self._report_failure)

    def wake(self) -> None:
        """Keys were added: the resting workers look again."""
        self._quiet.clear()
        self._wake.set()

    def stop(self) -> None:
        """Cancel the workers; a key in hand goes back to its queue (`WorkQueue.release`)."""
        if self._run is not None:
            self._run.cancel()

    async def settled(self) -> None:
        """Until every worker rests with nothing due (no work in hand); at once if none
        runs."""
        if self.running:
            await self._quiet.wait()

    async def stopped(self) -> None:
        """Until the workers (if any) have ended, after `stop`."""
        if self._run is not None:
            await asyncio.wait([self._run])  # its end, cancelled or not, without its outcome

    async def _together(self, workers: Iterable[tuple[Lane, ...]]) -> None:
        """Every worker; one failing stops (cancels) the others."""
        async with asyncio.TaskGroup() as group:
            for lanes in workers:
                group.create_task(self._work(lanes))

    async def _work(self, lanes: tuple[Lane, ...]) -> None:
        """Do what a key of the first lane with one due needs, one key at a time, each after
        a token of the budget; with none due, rest."""
        budget = self._budget
        while True:
            if budget is None:
                if not await self._one(lanes, LAST):
                    await self._rest(lanes)
            elif self._rank(lanes) == LAST:
                await self._rest(lanes)
            elif await budget.acquire(lambda: self._rank(lanes)):
                with budget.holding():  # spent by the first request, else given back
                    await self._one(lanes, self._rank(lanes))

    def _rank(self, lanes: Iterable[Lane]) -> int:
        """The rank of the first lane with a key due now; LAST if none is, or while held."""
        if self._hold is not None and not self._hold.due(self._clock()):
            return LAST
        for lane in lanes:
            if lane.due():
                return lane.rank
        return LAST

    async def _one(self, lanes: tuple[Lane, ...], rank: int) -> bool:
        """Do what the first key due needs; keys that need nothing are done on the way, until
        what is left ranks after `rank` (the token was handed out for better: it goes back).
        Whether a key was taken."""
        took = False
        while (rank == LAST or self._rank(lanes) <= rank) and (
            taken := self._take(lanes)
        ) is not None:
            took = True
            lane, key = taken
            queue = lane.queue
            try:
                work = lane.work(queue, key)
                if work is None:
                    queue.done(key)
                    continue
                await work
            except Exception as error:  # a bug must not stop the other keys
                self._crashed(lane.name, queue, key, error)
            finally:
                queue.release(key)  # not given back (cancelled, say): ready again
            break
        return took

    def _take(self, lanes: Iterable[Lane]) -> tuple[Lane, str] | None:
        """The first lane with a key due now, and that key; None while held."""
        if self._hold is not None and not self._hold.due(self._clock()):
            return None
        for lane in lanes:
            key = lane.queue.take() if lane.served() else None
            if key is not None:
                if self._budget is not None:
                    self._budget.review()  # the workers that waited only for it leave
                return lane, key
        return None

    async def _rest(self, lanes: Iterable[Lane]) -> None:
        """Until woken, or the first of the lanes' backoffs (or the hold) ends."""
        self._resting += 1
        if self._resting == self._workers:
            self._quiet.set()
        times = [lane.queue.next_due() for lane in lanes]
        if self._hold is not None and not self._hold.due(self._clock()):
            times.append(self._hold.not_before)
        due = [t for t in times if t is not None]
        shortest, longest = REST
        pause = None if not due else min(longest, max(shortest, min(due) - self._clock()))
        try:
            await asyncio.wait_for(self._wake.wait(), pause)
        except TimeoutError:
            pass
        finally:
            self._resting -= 1
        self._wake.clear()

    def _report_failure(self, run: asyncio.Task[None]) -> None:
        """A bug must not pass unseen; what was pending stays so, for the next start."""
        if not run.cancelled() and run.exception() is not None:
            logger.error("the %s failed", self.name, exc_info=run.exception())
