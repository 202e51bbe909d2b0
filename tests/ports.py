"""Ports for the processes the tests start.

Not from the kernel's ephemeral range: a port bound to 0 and released is handed to the next
process that binds to 0 or connects out, on a shared machine often before the process under
test binds it, and the test then talks to a stranger. Ports below the range are given out
only on request; each is checked free, and one test session (all of its worker processes) never
hands one out twice."""

from __future__ import annotations

import itertools
import os
import random
import socket
from pathlib import Path

_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")
_LOW = 10000


def _candidates() -> itertools.cycle[int]:
    ephemeral = int(_RANGE.read_text().split()[0]) if _RANGE.exists() else 32768
    # pytest-xdist's processes (gw0, gw1, ...) each take every n-th port: never the same one.
    worker = int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw"))
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    ports = list(range(_LOW + worker, ephemeral, workers))
    start = random.Random(os.getpid()).randrange(len(ports))  # sessions side by side differ
    return itertools.cycle(ports[start:] + ports[:start])


_ports = _candidates()


def free_port() -> int:
    while True:
        port = next(_ports)
        with socket.socket() as sock:
            try:
                sock.bind(("0.0.0.0", port))  # the servers listen on every address
            except OSError:
                continue
        return port
