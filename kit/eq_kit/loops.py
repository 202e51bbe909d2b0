"""The event loop the servers run on (the operator, the webhook, and the benchmarks' emulated
API server beside them): uvloop's, as Kopf's own command line uses when uvloop is installed. A
request to the API server costs about a tenth less CPU on it than on asyncio's
(docs/benchmarks.md). uvloop has no build for Windows, where asyncio's own loop runs instead."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

_Result = TypeVar("_Result")


def run(main: Coroutine[Any, Any, _Result]) -> _Result:
    """`main` to its end on a new loop of that kind, closed after it (as `asyncio.run`)."""
    factory: Callable[[], asyncio.AbstractEventLoop] | None
    try:
        import uvloop
    except ImportError:
        factory = None
    else:
        factory = uvloop.new_event_loop
    with asyncio.Runner(loop_factory=factory) as runner:
        return runner.run(main)
