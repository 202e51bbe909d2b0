"""The one backoff: doubling from `first` up to `cap`, jittered within its range and never past
the cap, the server's `Retry-After` honoured, reset by a success; on the caller's clock."""

from __future__ import annotations

import pytest
from eq_kit.backoff import Backoff


def pauses(backoff: Backoff, count: int) -> list[float]:
    return [backoff.next() for _ in range(count)]


def test_pauses_double_from_first_up_to_the_cap() -> None:
    backoff = Backoff(1.0, 5.0, jitter=(1.0, 1.0))
    assert pauses(backoff, 5) == [1.0, 2.0, 4.0, 5.0, 5.0]
    assert backoff.failures == 5


@pytest.mark.parametrize(
    ("jitter", "low", "high"),
    [
        ((0.9, 1.1), [0.9, 1.8, 3.6, 4.5], [1.1, 2.2, 4.4, 5.0]),
        ((1.0, 2.0), [1.0, 2.0, 4.0, 5.0], [2.0, 4.0, 5.0, 5.0]),  # client-go's reflector's
    ],
)
def test_jitter_scales_each_pause_within_its_range_and_never_past_the_cap(
    jitter: tuple[float, float], low: list[float], high: list[float]
) -> None:
    for _ in range(200):
        drawn = pauses(Backoff(1.0, 5.0, jitter=jitter), 4)
        assert all(lo <= pause <= hi for lo, pause, hi in zip(low, drawn, high, strict=True))


def test_a_success_starts_the_pauses_over() -> None:
    backoff = Backoff(0.5, 8.0, jitter=(1.0, 1.0))
    pauses(backoff, 3)
    backoff.reset()
    assert backoff.failures == 0 and backoff.due(0.0)
    assert pauses(backoff, 2) == [0.5, 1.0]


def test_failed_makes_it_due_after_the_pause_on_the_callers_clock() -> None:
    backoff = Backoff(0.25, 5.0, jitter=(1.0, 1.0))
    assert backoff.due(1000.0)
    backoff.failed(1000.0)
    assert not backoff.due(1000.2) and backoff.due(1000.25)
    backoff.failed(1001.0)
    assert backoff.not_before == 1001.5


def test_the_servers_retry_after_wins_when_longer_than_the_pause() -> None:
    backoff = Backoff(0.25, 5.0, jitter=(1.0, 1.0))
    backoff.failed(0.0, retry_after=30.0)
    assert backoff.not_before == 30.0
    backoff.failed(100.0, retry_after=0.1)
    assert backoff.not_before == 100.5


def test_thousands_of_failures_in_a_row_stay_at_the_cap() -> None:
    backoff = Backoff(0.25, 5.0, jitter=(1.0, 1.0))
    assert pauses(backoff, 5000)[-1] == 5.0


async def test_sleep_counts_a_failure_and_waits_the_pause() -> None:
    backoff = Backoff(0.0, 0.0)
    await backoff.sleep()
    await backoff.sleep()
    assert backoff.failures == 2
