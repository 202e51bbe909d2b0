"""One control plane for every process of a test run (pytest-xdist's workers), then none.

The first process to ask starts `python -m scripts.control_plane run --shared`: a runner that
starts the control plane in a directory of its own and writes `ready.json` there. Every process
that uses it holds a shared lock on that directory's `users.lock` until it ends, and the runner
stops everything once it can take that lock exclusively: when the last user has gone, however
it went (a lock dies with its process). `start.lock` serializes the decisions, so a process
never joins a control plane that is stopping: it starts the next one.
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from scripts.control_plane.build import REPO, build
from scripts.control_plane.processes import ControlPlaneError

START_LOCK, CURRENT, USERS, READY, FAILED, STOPPED = (
    "start.lock",
    "current",
    "users.lock",
    "ready.json",
    "failed.txt",
    "stopped",
)


@dataclass
class Joined:
    directory: Path  # the control plane's own (logs/, admin.kubeconfig, ...)
    kubeconfig: Path
    server: str
    startup_seconds: float
    started_here: bool
    _hold: IO[str]
    _runner: subprocess.Popen[bytes] | None

    def leave(self, timeout: float = 60.0) -> None:
        """This process no longer uses it. The last to leave waits until the runner has
        stopped every process, so that nothing runs on once the test run has ended."""
        self._hold.close()
        deadline = time.monotonic() + timeout
        while not (self.directory / STOPPED).exists() and time.monotonic() < deadline:
            if _current(self.directory.parent) == self.directory:
                with (self.directory / USERS).open("a") as users:
                    if not _try_lock(users, fcntl.LOCK_EX):
                        # Others still hold it: one of them waits. The runner, if this process
                        # started it, is kept referenced: its Popen must not be collected (a
                        # ResourceWarning) while it runs; it exits after this process.
                        if self._runner is not None:
                            _outliving.append(self._runner)
                        return
                    fcntl.flock(users, fcntl.LOCK_UN)  # the runner's to take
            time.sleep(0.1)
        if self._runner is not None:
            try:
                self._runner.wait(max(deadline - time.monotonic(), 1.0))
            except subprocess.TimeoutExpired:
                _outliving.append(self._runner)


def _current(root: Path) -> Path | None:
    current = root / CURRENT
    try:
        return Path(current.read_text())
    except FileNotFoundError:
        return None


def _try_lock(handle: IO[str], mode: int) -> bool:
    try:
        fcntl.flock(handle, mode | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def join(root: Path, *, timeout: float = 180.0) -> Joined:
    """The run's control plane under `root`, started if none runs; held until `leave`."""
    root.mkdir(parents=True, exist_ok=True)
    with (root / START_LOCK).open("a") as start:
        fcntl.flock(start, fcntl.LOCK_EX)
        directory = _current(root)
        hold, runner = None, None
        if directory is not None:
            hold = (directory / USERS).open("a")
            if not _try_lock(hold, fcntl.LOCK_SH):  # it is stopping
                hold.close()
                hold, directory = None, None
        started_here = directory is None
        if directory is None:
            built = build()  # here, so that a build's failure is this process's error
            directory = root / f"plane-{os.getpid()}-{time.time_ns()}"
            directory.mkdir()
            hold = (directory / USERS).open("a")
            fcntl.flock(hold, fcntl.LOCK_SH)
            with (directory / "runner.log").open("ab") as log:
                runner = subprocess.Popen(
                    [
                        sys.executable,
                        "-m",
                        "scripts.control_plane",
                        "run",
                        "--shared",
                        "--dir",
                        str(directory),
                        "--bin",
                        str(built.bin),
                    ],
                    cwd=REPO,
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,  # outlives no one: it stops when its users are gone
                )
            (root / CURRENT).write_text(str(directory))
    assert hold is not None
    try:
        ready = _await(directory, timeout)
    except BaseException:
        hold.close()
        if runner is not None:  # it stops what it started, then exits
            runner.terminate()
            runner.wait(30)
        raise
    return Joined(
        directory=directory,
        kubeconfig=Path(ready["kubeconfig"]),
        server=ready["server"],
        startup_seconds=ready["startup_seconds"],
        started_here=started_here,
        _hold=hold,
        _runner=runner,
    )


def _await(directory: Path, timeout: float) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        if (directory / READY).exists():
            ready: dict[str, Any] = json.loads((directory / READY).read_text())
            return ready
        if (directory / FAILED).exists():
            raise ControlPlaneError((directory / FAILED).read_text())
        if time.monotonic() > deadline:
            log = directory / "runner.log"
            raise ControlPlaneError(
                f"the shared control plane in {directory} was not ready after {timeout:.0f} s; "
                f"its runner's log:\n{log.read_text(errors='replace') if log.exists() else ''}"
            )
        time.sleep(0.1)


def unheld(directory: Path) -> bool:
    """Whether every user has left; if so, no one can join any more (the runner's side)."""
    root = directory.parent
    with (root / START_LOCK).open("a") as start:
        fcntl.flock(start, fcntl.LOCK_EX)
        users = (directory / USERS).open("a")
        if not _try_lock(users, fcntl.LOCK_EX):
            users.close()
            return False
        current = root / CURRENT
        if current.exists() and current.read_text() == str(directory):
            current.unlink()
        # Kept open (and locked) until the runner exits: a late joiner cannot take it.
        _kept.append(users)
        return True


_kept: list[IO[str]] = []
_outliving: list[subprocess.Popen[bytes]] = []
