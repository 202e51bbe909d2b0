"""The token bucket: a burst at once, then `qps` a second, each token handed to the waiter of the
lowest rank (the first come among equals), a rank asked again as each token comes, waiters with
nothing left to send and cancelled ones taking nothing, and a token held for a task spent by its
next request or given back.

On a clock that moves only when the test moves it: 4 tokens a second, so each step of 0.25 s
brings exactly one. Each test waits on conditions, never for time to pass.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from eq_kit import loops
from eq_kit.throttling import LAST, Rank, TokenBucket

from tests.operator.inprocess import Manual
from tests.waiting import eventually

STEP = 0.25


class Waiters:
    """Tasks that each take one token of `bucket`, and the order in which they got it."""

    def __init__(self, burst: int = 1) -> None:
        self.clock = Manual()
        self.bucket = TokenBucket(4, burst, clock=self.clock)
        self.served: list[str] = []
        self.tasks: list[asyncio.Task[None]] = []

    async def add(self, name: str, rank: Rank = 0) -> asyncio.Task[None]:
        """A waiter, once it waits."""
        waiting = self.bucket.waiting

        async def take() -> None:
            await self.bucket.acquire(rank)
            self.served.append(name)

        task = asyncio.create_task(take())
        self.tasks.append(task)
        await eventually(lambda: self.bucket.waiting == waiting + 1, what=f"{name} to wait")
        return task

    async def step(self, served: int) -> None:
        """One token more; then until `served` waiters have had theirs."""
        self.clock.now += STEP
        await eventually(lambda: len(self.served) == served, what=f"{served} served")


@pytest_asyncio.fixture()
async def waiters() -> AsyncIterator[Waiters]:
    """A bucket of 4 tokens a second, its one saved token spent already."""
    made = Waiters()
    await asyncio.wait_for(made.bucket.acquire(), 1.0)
    yield made
    for task in made.tasks:
        task.cancel()
    await asyncio.gather(*made.tasks, return_exceptions=True)


async def test_a_burst_goes_at_once_then_a_token_each_interval() -> None:
    made = Waiters(burst=3)
    for _ in range(3):
        await asyncio.wait_for(made.bucket.acquire(), 1.0)
    await made.add("a")
    await made.add("b")
    made.clock.now += STEP / 2  # half a token
    await made.step(served=1)
    assert made.served == ["a"] and made.bucket.waiting == 1
    await made.step(served=2)


async def test_each_token_goes_to_the_lowest_rank_then_the_first_come(waiters: Waiters) -> None:
    for name, rank in [("label-1", 2), ("label-2", 2), ("group-1", 1), ("loop", 0)]:
        await waiters.add(name, rank)
    await waiters.add("group-2", 1)
    for served in range(1, 6):
        await waiters.step(served)
    assert waiters.served == ["loop", "group-1", "group-2", "label-1", "label-2"]


async def test_a_rank_that_is_a_function_is_asked_as_each_token_comes(waiters: Waiters) -> None:
    rank = {"worker": 2}
    await waiters.add("worker", lambda: rank["worker"])
    await waiters.add("group", 1)
    rank["worker"] = 0  # it has better work to take by the time the token comes
    await waiters.step(served=1)
    assert waiters.served == ["worker"]


async def test_a_waiter_left_with_nothing_to_send_leaves_without_a_token(waiters: Waiters) -> None:
    rank = {"worker": 2}
    outcome: list[bool] = []

    async def worker() -> None:
        outcome.append(await waiters.bucket.acquire(lambda: rank["worker"]))

    task = asyncio.create_task(worker())
    await eventually(lambda: waiters.bucket.waiting == 1, what="the worker to wait")
    await waiters.add("label", 2)
    rank["worker"] = LAST  # another worker took what it waited for
    waiters.bucket.review()
    await task
    assert outcome == [False] and waiters.bucket.waiting == 1
    await waiters.step(served=1)  # the next token goes to the label


async def test_a_cancelled_waiter_takes_no_token(waiters: Waiters) -> None:
    first = await waiters.add("first", 0)
    await waiters.add("second", 1)
    first.cancel()
    await eventually(lambda: waiters.bucket.waiting == 1, what="the cancelled one to leave")
    await waiters.step(served=1)
    assert waiters.served == ["second"] and first.cancelled()


async def test_a_token_handed_out_as_its_task_is_cancelled_goes_to_the_next(
    waiters: Waiters,
) -> None:
    first = await waiters.add("first")
    await waiters.add("second")
    waiters.bucket.refund()  # a token now: handed to the first, which has not run since
    first.cancel()
    await eventually(lambda: waiters.served == ["second"], what="the token passed on")
    assert first.cancelled()


async def test_a_token_held_is_spent_by_the_next_request_of_its_task(waiters: Waiters) -> None:
    waiters.clock.now += STEP
    await asyncio.wait_for(waiters.bucket.acquire(), 1.0)  # taken before knowing what to send
    with waiters.bucket.holding():
        await asyncio.wait_for(waiters.bucket.acquire(), 1.0)  # spends it: no wait
        await waiters.add("after")  # another (of a task started within) waits like any other
    await waiters.step(served=1)


async def test_a_token_held_and_not_spent_is_given_back(waiters: Waiters) -> None:
    waiters.clock.now += STEP
    await asyncio.wait_for(waiters.bucket.acquire(), 1.0)
    await waiters.add("waiting")
    with waiters.bucket.holding():
        pass  # nothing needed a request after all
    await eventually(lambda: waiters.served == ["waiting"], what="the token given back")


@pytest.mark.parametrize("qps", [0, -1])
async def test_without_a_limit_nothing_waits(qps: float) -> None:
    bucket = TokenBucket(qps, 1, clock=Manual())
    for _ in range(1000):
        await asyncio.wait_for(bucket.acquire(2), 1.0)
    assert bucket.waiting == 0


def test_waiting_for_tokens_on_uvloop_does_not_spin(monkeypatch: pytest.MonkeyPatch) -> None:
    # The operator's loop is uvloop's, whose timers count whole milliseconds and may fire up to
    # one early: a wait for the rest of a token must not become a run of immediate wake-ups.
    sleeps: list[float] = []
    real_sleep = asyncio.sleep

    async def counted(delay: float) -> None:
        sleeps.append(delay)
        await real_sleep(delay)

    async def take(tokens: int) -> None:
        bucket = TokenBucket(300, 1)  # a token every 3.33 ms: not a whole number of them
        monkeypatch.setattr(asyncio, "sleep", counted)
        for _ in range(tokens):
            await bucket.acquire()

    loops.run(take(40))  # on the operator's loop, uvloop's
    assert len(sleeps) <= 3 * 40, f"{len(sleeps)} waits for 40 tokens"
