"""The emulated API server as the benchmarks run it in a process of its own: with Python's
cyclic garbage collector off (`collector_off`, the first thing such a process does).

kube-apiserver is written in Go, whose collector works beside the program. Python's stops the
process and scans every object it tracks, and the emulator holds every pod as dicts and makes a
new version of one on every write. With `benchmarks.scale`'s 100,000 pods, eleven full
collections took it 7.4 s while seeding (0.2-1.4 s each), and two took 0.35 and 0.55 s during
its churn, while it answered nothing and the operator under test waited. Without the
collector, what the emulator drops is freed by its reference counts; the few reference cycles
(aiohttp's) stay until the process ends, which left its RSS as it was (1.97 GB after the churn,
either way).
"""

from __future__ import annotations

import gc


def collector_off() -> None:
    """No cyclic collection in this process from now on (see the module's docstring)."""
    gc.disable()
