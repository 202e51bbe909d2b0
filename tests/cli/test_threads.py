"""Every `elastic-quota` process does its arithmetic on one thread: numpy's OpenBLAS would
otherwise start a worker per core, which the engine's small arrays never use and which spin at
start-up (0.1 s of CPU in each operator's and webhook's start)."""

from __future__ import annotations

from tests.cli.running import python

THREADS = (
    "import os, eq_cli.main; "
    "print(len(os.listdir('/proc/self/task')), os.environ.get('OPENBLAS_NUM_THREADS', 'unset'))"
)


def _run(env: dict[str, str]) -> list[str]:
    done = python("-c", THREADS, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_the_command_runs_numpy_on_one_thread() -> None:
    assert _run({}) == ["1", "1"]


def test_a_thread_count_the_user_set_is_kept() -> None:
    assert _run({"OPENBLAS_NUM_THREADS": "3"})[1] == "3"
