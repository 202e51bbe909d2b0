"""The worker pool over work queues: every key's work done once by one worker, lanes served in
each worker's order, a bug handed over without stopping the others, nothing taken while held,
resting workers woken by new keys, and a key in hand put back when the workers are stopped;
with a budget, keys that wait for a token in their queues, the best one due taken when it comes,
and a token for a key that needed nothing given back. On an injected clock; each test waits on
conditions, never for time to pass."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Iterable, Sequence

import pytest
import pytest_asyncio
from eq_kit.backoff import Backoff
from eq_kit.throttling import TokenBucket, WorkQueue
from eq_kit.workers import Lane, Pool

from tests.operator.inprocess import Manual
from tests.waiting import eventually


class Owner:
    """What a pool's owner keeps: the keys each lane did, in order, and the crashes."""

    def __init__(self, clock: Manual, hold: Backoff | None = None) -> None:
        self.clock = clock
        self.done: list[tuple[str, str]] = []
        self.crashes: list[tuple[str, str, str]] = []
        self.pool = Pool("tests", clock=clock, crashed=self.crashed, hold=hold)

    def crashed(self, lane: str, queue: WorkQueue, key: str, error: Exception) -> None:
        self.crashes.append((lane, key, repr(error)))
        queue.failed(key)

    def lane(self, name: str, *keys: str) -> Lane:
        queue = WorkQueue(0.25, 5.0, self.clock)
        for key in keys:
            queue.add(key)

        def work(queue: WorkQueue, key: str) -> Awaitable[None] | None:
            self.done.append((name, key))
            if key.startswith("bug"):
                raise RuntimeError(f"a bug in {key}")
            return None  # nothing to await: the pool marks the key done

        return Lane(name, queue, work)

    def start(self, teams: Iterable[tuple[Sequence[Lane], int]]) -> None:
        self.pool.start(teams)


@pytest_asyncio.fixture()
async def owner() -> AsyncIterator[Owner]:
    made = Owner(Manual())
    yield made
    made.pool.stop()
    await made.pool.stopped()


async def test_every_key_is_worked_once_and_done(owner: Owner) -> None:
    lane = owner.lane("pods", *(f"p{i}" for i in range(20)))
    owner.start([((lane,), 4)])
    await owner.pool.settled()
    assert sorted(key for _, key in owner.done) == sorted(f"p{i}" for i in range(20))
    assert len(lane.queue) == 0


async def test_a_worker_takes_from_its_first_lane_while_it_has_keys_due(owner: Owner) -> None:
    groups, pods = owner.lane("groups", "g1", "g2"), owner.lane("pods", "p1", "p2")
    owner.start([((pods, groups), 1)])
    await owner.pool.settled()
    assert owner.done == [("pods", "p1"), ("pods", "p2"), ("groups", "g1"), ("groups", "g2")]


async def test_a_bug_is_handed_over_and_the_other_keys_go_on(owner: Owner) -> None:
    lane = owner.lane("pods", "p1", "bug", "p2")
    owner.start([((lane,), 1)])
    await owner.pool.settled()
    assert owner.crashes == [("pods", "bug", "RuntimeError('a bug in bug')")]
    assert [key for _, key in owner.done] == ["p1", "bug", "p2"]
    assert owner.pool.running and list(lane.queue.pending) == ["bug"]  # backing off


async def test_resting_workers_take_keys_added_when_woken(owner: Owner) -> None:
    lane = owner.lane("pods")
    owner.start([((lane,), 2)])
    await owner.pool.settled()
    lane.queue.add("p1")
    owner.pool.wake()
    await owner.pool.settled()
    assert owner.done == [("pods", "p1")]


async def test_nothing_is_taken_while_the_hold_runs() -> None:
    clock = Manual()
    hold = Backoff(1.0, 5.0, jitter=(1.0, 1.0))
    hold.failed(clock.now)
    owner = Owner(clock, hold)
    owner.start([((owner.lane("pods", "p1"),), 2)])
    try:
        await owner.pool.settled()
        assert owner.done == []
        clock.now += 1.0
        owner.pool.wake()
        await owner.pool.settled()
        assert owner.done == [("pods", "p1")]
    finally:
        owner.pool.stop()
        await owner.pool.stopped()


async def test_a_key_in_hand_goes_back_to_its_queue_when_the_workers_stop(owner: Owner) -> None:
    queue = WorkQueue(0.25, 5.0, owner.clock)
    queue.add("slow")
    started, never = asyncio.Event(), asyncio.Event()

    async def hang() -> None:
        started.set()
        await never.wait()

    owner.start([((Lane("pods", queue, lambda queue, key: hang()),), 1)])
    await started.wait()
    assert queue.take() is None  # in the worker's hands
    owner.pool.stop()
    await owner.pool.stopped()
    assert not owner.pool.running and queue.take() == "slow"


async def test_start_while_running_starts_no_second_set_of_workers(owner: Owner) -> None:
    lane = owner.lane("pods", "p1")
    owner.start([((lane,), 1)])
    owner.start([((lane,), 1)])
    await owner.pool.settled()
    assert owner.done == [("pods", "p1")]


async def test_settled_and_stopped_return_at_once_when_never_started() -> None:
    pool = Pool("tests", clock=Manual(), crashed=lambda *_: None)
    await asyncio.wait_for(pool.settled(), 1.0)
    await asyncio.wait_for(pool.stopped(), 1.0)
    assert not pool.running


@pytest.mark.parametrize("workers", [1, 3])
async def test_one_hung_key_holds_up_no_other_worker(owner: Owner, workers: int) -> None:
    queue = WorkQueue(0.25, 5.0, owner.clock)
    for key in ("slow", "p1", "p2"):
        queue.add(key)
    never, both = asyncio.Event(), asyncio.Event()
    done: list[str] = []

    async def hang() -> None:
        await never.wait()

    def work(queue: WorkQueue, key: str) -> Awaitable[None] | None:
        if key == "slow":
            return hang()
        done.append(key)
        if len(done) == 2:
            both.set()
        return None

    owner.start([((Lane("pods", queue, work),), workers + 1)])
    await asyncio.wait_for(both.wait(), 5.0)
    assert done == ["p1", "p2"]


class Budgeted:
    """A pool over a budget of 4 tokens a second (its one saved token spent) on the test's
    clock: a key's work sends one request, records the key's version then, and is done."""

    def __init__(self) -> None:
        self.clock = Manual()
        self.bucket = TokenBucket(4, 1, clock=self.clock)
        self.done: list[tuple[str, str, int]] = []
        self.versions: dict[str, int] = {}
        self.pool = Pool("tests", clock=self.clock, crashed=lambda *_: None, budget=self.bucket)

    def lane(self, name: str, rank: int, *keys: str) -> Lane:
        queue = WorkQueue(0.25, 5.0, self.clock)
        for key in keys:
            queue.add(key)

        def work(queue: WorkQueue, key: str) -> Awaitable[None] | None:
            if key.startswith("right"):
                return None  # nothing to send

            async def send() -> None:
                await self.bucket.acquire(rank)
                self.done.append((name, key, self.versions.get(key, 0)))
                queue.done(key)

            return send()

        return Lane(name, queue, work, rank)

    async def token(self, done: int) -> None:
        """One more token; then until `done` keys have been worked."""
        self.clock.now += 0.25
        await eventually(lambda: len(self.done) == done, what=f"{done} keys worked")


@pytest_asyncio.fixture()
async def budgeted() -> AsyncIterator[Budgeted]:
    made = Budgeted()
    await made.bucket.acquire()
    yield made
    made.pool.stop()
    await made.pool.stopped()


async def test_with_a_budget_the_keys_wait_in_their_queues_and_the_best_goes_first(
    budgeted: Budgeted,
) -> None:
    groups, pods = budgeted.lane("groups", 1), budgeted.lane("pods", 2, "p1", "p2", "p3")
    budgeted.pool.start([((groups, pods), 1), ((pods, groups), 1)])
    await eventually(lambda: budgeted.bucket.waiting == 2, what="both workers to wait")
    assert pods.queue.due()  # no key in a worker's hands while it waits
    groups.queue.add("g1")  # after every pod, while the workers wait
    await budgeted.token(done=1)
    await budgeted.token(done=2)
    assert budgeted.done == [("groups", "g1", 0), ("pods", "p1", 0)]


async def test_with_a_budget_a_key_added_again_while_it_waits_is_worked_once_as_it_is_then(
    budgeted: Budgeted,
) -> None:
    groups = budgeted.lane("groups", 1, "g1")
    budgeted.pool.start([((groups,), 2)])
    await eventually(lambda: budgeted.bucket.waiting == 2, what="the workers to wait")
    for version in (1, 2, 3):
        budgeted.versions["g1"] = version
        groups.queue.add("g1")
    await budgeted.token(done=1)
    await budgeted.pool.settled()
    assert budgeted.done == [("groups", "g1", 3)]


async def test_a_token_handed_out_for_a_key_that_needs_nothing_goes_back(
    budgeted: Budgeted,
) -> None:
    groups = budgeted.lane("groups", 1, "right-1")
    pods = budgeted.lane("pods", 2, "p1")
    budgeted.pool.start([((groups, pods), 1)])
    await eventually(lambda: budgeted.bucket.waiting == 1, what="the worker to wait")
    served: list[str] = []

    async def other() -> None:  # another writer of rank 1, come after the worker
        await budgeted.bucket.acquire(1)
        served.append("other")

    task = asyncio.create_task(other())
    await eventually(lambda: budgeted.bucket.waiting == 2, what="the other to wait")
    budgeted.clock.now += 0.25
    await eventually(lambda: served == ["other"], what="the token given back to the other")
    assert budgeted.done == [] and not groups.queue.pending  # right-1 needed nothing
    await task
