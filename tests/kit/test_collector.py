"""The cyclic collector paused while the first listings come in: resumed with what they hold
frozen once they are in, or resumed with nothing frozen when they do not come in time."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from eq_kit.caching import PODS, Reflector
from eq_kit.collector import paused_while_listing

from tests.kit.conftest import Recorder
from tests.kit.test_caching import fast, following, pods


class Holding(Recorder):
    """A sink that keeps the objects themselves, as the operator's view keeps what it parsed."""

    def __init__(self) -> None:
        super().__init__()
        self.bodies: dict[str, Mapping[str, Any]] = {}

    def upsert(self, key: str, obj: Mapping[str, Any]) -> None:
        super().upsert(key, obj)
        self.bodies[key] = obj


@pytest.fixture(autouse=True)
def collector() -> Iterator[None]:
    """The test process's collector as it was: running, nothing frozen."""
    gc.unfreeze()
    yield
    gc.unfreeze()
    gc.enable()


async def test_the_collector_waits_for_the_first_listings_then_skips_what_they_hold(api, http):
    api.seed(*pods(50))
    api.fault("get", "pods", status=500)  # the first LIST takes two tries
    sink = Holding()
    async with following(Reflector(http, PODS, sink, backoff=fast())) as caches:
        pause = asyncio.create_task(paused_while_listing(caches, limit=30))
        await asyncio.sleep(0)
        assert not gc.isenabled() and not caches.ready
        await pause
        assert caches.ready and len(sink.objects) == 50
        assert gc.isenabled()
        listed = sink.bodies["apps/p0000"]
        assert gc.is_tracked(listed)
        assert not any(seen is listed for seen in gc.get_objects())  # frozen: out of its sight


async def test_listings_that_do_not_come_in_time_leave_the_collector_running(api, http):
    api.fault("get", "pods", status=500, seconds=60)  # the LIST keeps failing
    async with following(Reflector(http, PODS, Recorder(), backoff=fast())) as caches:
        await paused_while_listing(caches, limit=0.3)
        assert not caches.ready
        assert gc.isenabled()
        assert gc.get_freeze_count() == 0
