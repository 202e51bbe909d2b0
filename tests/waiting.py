"""Waiting in tests on conditions, never on the clock alone.

`eventually` waits until a condition holds. `consistently` checks that one keeps holding for a
while: the only honest form of "nothing more happens", and only after the condition that shows
the product has seen the state it must leave alone (its window is then the product's own
pacing, such as a reclaim delay, not a guess at how long it takes to act)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

Check = Callable[[], Awaitable[bool] | bool]
POLL = 0.05  # seconds between looks


async def _holds(check: Check) -> bool:
    result = check()
    return result if isinstance(result, bool) else await result


async def eventually(
    check: Check,
    *,
    timeout: float = 15.0,
    what: str = "the condition",
    explain: Callable[[], object] | None = None,
) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not await _holds(check):
        if asyncio.get_running_loop().time() > deadline:
            detail = "" if explain is None else f": {explain()}"
            raise AssertionError(f"timed out waiting for {what}{detail}")
        await asyncio.sleep(POLL)


async def consistently(check: Check, *, seconds: float, what: str = "the condition") -> None:
    """`check` holds at every look for `seconds`; fails at the first look where it does not."""
    deadline = asyncio.get_running_loop().time() + seconds
    while asyncio.get_running_loop().time() < deadline:
        assert await _holds(check), f"{what} stopped holding"
        await asyncio.sleep(POLL)
