"""The emulated API server as the benchmarks run it in a process of its own (`run`): with
Python's cyclic garbage collector off, on uvloop's event loop.

kube-apiserver is written in Go, whose collector works beside the program. Python's stops the
process and scans every object it tracks, and the emulator holds every pod as dicts and makes a
new version of one on every write. With `benchmarks.scale`'s 100,000 pods, eleven full
collections took it 7.4 s while seeding (0.2-1.4 s each), and two took 0.35 and 0.55 s during
its churn, while it answered nothing and the operator under test waited. Without the
collector, what the emulator drops is freed by its reference counts; the few reference cycles
(aiohttp's) stay until the process ends, which left its RSS as it was (1.97 GB after the churn,
either way).

kube-apiserver also answers from every core, and the emulator from one, beside the operator
under test: after a churn, the groups' writes wait for the emulator, not for the operator. It
runs on the event loop the operator runs on (`eq_kit.loops`, uvloop's), whose sockets and
timers cost less of that core than asyncio's.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Coroutine
from typing import Any

from eq_kit import loops


def run(main: Callable[[], Coroutine[Any, Any, None]]) -> None:
    """Run an emulator process's `main`, without cyclic collection from now on."""
    gc.disable()
    loops.run(main())
