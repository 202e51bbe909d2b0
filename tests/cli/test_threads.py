"""Every `elastic-quota` process does its arithmetic on one thread: numpy's OpenBLAS would
otherwise start a worker per core, which the engine's small arrays never use and which spin at
start-up (0.1 s of CPU in each operator's and webhook's start)."""

from __future__ import annotations

import subprocess
import sys

from tests.paths import PYTHONPATH

THREADS = (
    "import os, eq_cli.main; "
    "print(len(os.listdir('/proc/self/task')), os.environ.get('OPENBLAS_NUM_THREADS', 'unset'))"
)


def _run(env: dict[str, str]) -> list[str]:
    result = subprocess.run(
        [sys.executable, "-c", THREADS],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PYTHONPATH": PYTHONPATH, "PATH": "/usr/bin:/bin", **env},
        check=True,
    )
    return result.stdout.split()


def test_the_command_runs_numpy_on_one_thread() -> None:
    assert _run({}) == ["1", "1"]


def test_a_thread_count_the_user_set_is_kept() -> None:
    assert _run({"OPENBLAS_NUM_THREADS": "3"})[1] == "3"
