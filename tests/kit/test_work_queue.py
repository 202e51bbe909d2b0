"""The writer's work queue, as client-go's rate-limited queue behaves: each key pending once,
handed to one worker at a time, backing off after failures, on an injected clock."""

from __future__ import annotations

import sys
import tracemalloc

from eq_kit.throttling import WorkQueue

from tests.operator.inprocess import Manual


def drain(queue: WorkQueue) -> list[str]:
    taken = []
    while (key := queue.take()) is not None:
        taken.append(key)
    return taken


def test_keys_come_in_order_once_each_and_are_handed_out_once() -> None:
    queue = WorkQueue(0.25, 5.0, Manual())
    added = [queue.add(key) for key in ("a", "b", "a", "c", "b")]
    assert added == [True, True, False, True, False] and len(queue) == 3
    assert drain(queue) == ["a", "b", "c"]
    queue.add("a")  # taken, not put back: still pending, not handed out twice
    assert queue.take() is None and len(queue) == 3


def test_a_success_puts_the_key_back_for_one_more_look_and_done_drops_it() -> None:
    queue = WorkQueue(0.25, 5.0, Manual())
    queue.add("a")
    assert queue.take() == "a"
    assert queue.again("a") == 0
    assert queue.take() == "a"
    queue.done("a")
    assert len(queue) == 0 and queue.again("a") == 0 and queue.take() is None


def test_failures_back_off_doubling_and_the_server_may_ask_for_longer() -> None:
    clock = Manual()
    queue = WorkQueue(0.25, 5.0, clock)
    queue.add("a")
    assert queue.take() == "a"
    pauses = []
    for failures in range(1, 8):  # each time taken, tried, failed again
        assert queue.failed("a") == failures
        started = clock.now
        while queue.take() is None:
            clock.now += 0.01
        pauses.append(clock.now - started)
    # 0.25 s doubling to 5 s, each within the 10% jitter.
    for pause, nominal in zip(pauses, (0.25, 0.5, 1, 2, 4, 5, 5), strict=True):
        assert nominal * 0.9 - 0.01 <= pause <= nominal * 1.1 + 0.01
    queue.add("b")
    queue.take()
    queue.failed("b", retry_after=30)
    clock.now += 29
    assert queue.take() is None
    clock.now += 1.1
    assert queue.take() == "b"


def failed_once(clock: Manual) -> WorkQueue:
    """A queue whose key "a" was taken and failed once: it waits out its backoff."""
    queue = WorkQueue(0.25, 5.0, clock)
    queue.add("a")
    queue.take()
    queue.failed("a")
    return queue


def test_a_key_added_anew_while_it_waited_is_due_at_once_and_comes_once() -> None:
    clock = Manual()
    queue = failed_once(clock)
    queue.add("a")  # pending and waiting: keeps its backoff
    assert queue.take() is None
    queue.done("a")
    queue.add("a")  # gone and back (a namesake): due now
    assert queue.take() == "a"
    clock.now += 10  # the old backoff entry has come due: it is stale and hands out nothing
    assert queue.take() is None


def test_a_key_its_worker_never_gave_back_is_released_with_its_backoff_kept() -> None:
    clock = Manual()
    queue = failed_once(clock)
    assert queue.next_due() is not None
    clock.now += 1
    assert queue.take() == "a"  # taken again, then its worker is cancelled mid-write
    queue.release("a")
    assert queue.take() == "a"  # back in line, handed out once
    assert queue.pending["a"].failures == 1  # not reset: nothing succeeded
    queue.again("a")
    queue.release("a")  # given back already: nothing more
    assert drain(queue) == ["a"]
    queue.done("a")
    queue.release("a")
    assert queue.take() is None and len(queue) == 0


def test_a_queue_emptied_after_a_burst_keeps_nothing_of_its_size() -> None:
    queue = WorkQueue(0.25, 5.0, Manual())
    empty = sys.getsizeof(queue.pending)
    burst = [f"apps/pod-{i}" for i in range(100_000)]  # a first labelling
    for key in burst:
        queue.add(key)
    assert queue.take() == burst[0]
    queue.failed(burst[0])  # it backs off, with a backoff of its own; the others have none
    assert sys.getsizeof(queue.pending) > 100 * empty
    for key in drain(queue):
        queue.done(key)
    assert len(queue) == 1 and queue.pending[burst[0]] is not None
    queue.done(burst[0])
    assert len(queue) == 0 and sys.getsizeof(queue.pending) == empty


def test_a_burst_costs_the_queue_about_a_dict_entry_a_key() -> None:
    """A first labelling puts every pod in the queue at once: the line of keys due must cost
    little beside the pending map (an ordered dict would cost 91 B a key more)."""
    burst = [f"apps/pod-{i}" for i in range(100_000)]
    tracemalloc.start()
    try:
        queue = WorkQueue(0.25, 5.0, Manual())
        for key in burst:
            queue.add(key)
        per_key = tracemalloc.get_traced_memory()[0] / len(burst)
    finally:
        tracemalloc.stop()
    assert per_key < 60, f"{per_key:.0f} B a key"
    assert drain(queue) == burst


def test_done_takes_a_key_out_of_line_and_only_a_taken_key_is_put_back() -> None:
    queue = WorkQueue(0.25, 5.0, Manual())
    for key in ("a", "b", "c"):
        queue.add(key)
    queue.done("b")  # never handed out: out of line, not only out of the pending map
    assert queue.again("a") == 0 and queue.failed("c") is None  # not taken: nothing changes
    queue.add("b")
    assert drain(queue) == ["a", "c", "b"] and len(queue) == 3
