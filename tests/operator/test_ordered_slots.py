"""The admitter's places for lifts in flight (`OrderedSlots`): the waiting are let in most
important first, and a lift cancelled while it waits (a leader stepping down) neither takes a
place nor loses one."""

from __future__ import annotations

import asyncio

from eq_operator.admitting import OrderedSlots


async def _holder(slots: OrderedSlots, order: int, seen: list[int], go: asyncio.Event) -> None:
    async with slots.slot((order, 0.0, "")):
        seen.append(order)
        await go.wait()


async def test_the_waiting_are_let_in_lowest_order_first() -> None:
    slots, seen, go = OrderedSlots(1), [], asyncio.Event()
    first = asyncio.create_task(_holder(slots, 5, seen, go))
    await asyncio.sleep(0)
    waiting = [asyncio.create_task(_holder(slots, order, seen, go)) for order in (3, 9, 1)]
    await asyncio.sleep(0)
    assert seen == [5]  # one place: the others wait
    go.set()
    await asyncio.gather(first, *waiting)
    assert seen == [5, 1, 3, 9]


async def test_a_cancelled_waiter_takes_no_place_and_loses_none() -> None:
    slots, seen, go = OrderedSlots(1), [], asyncio.Event()
    first = asyncio.create_task(_holder(slots, 5, seen, go))
    await asyncio.sleep(0)
    cancelled = asyncio.create_task(_holder(slots, 1, seen, go))
    later = asyncio.create_task(_holder(slots, 2, seen, go))
    await asyncio.sleep(0)
    cancelled.cancel()
    await asyncio.sleep(0)
    go.set()
    await asyncio.gather(first, later)
    assert seen == [5, 2] and cancelled.cancelled()
    async with slots.slot((0, 0.0, "")):  # the place came back
        pass


async def test_a_waiter_cancelled_as_it_is_let_in_passes_its_place_on() -> None:
    slots, seen, go = OrderedSlots(1), [], asyncio.Event()
    go.set()
    async with slots.slot((5, 0.0, "")):
        handed = asyncio.create_task(_holder(slots, 1, seen, go))
        after = asyncio.create_task(_holder(slots, 2, seen, go))
        await asyncio.sleep(0)  # both wait
    handed.cancel()  # handed the place on the way out above, before it could run
    await asyncio.wait_for(after, 5)  # without the hand-over, never
    assert seen == [2] and handed.cancelled()
