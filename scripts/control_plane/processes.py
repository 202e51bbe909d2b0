"""The control plane's processes: each started with its log, probed, stopped; free ports."""

from __future__ import annotations

import signal
import socket
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

_LOG_TAIL = 40  # lines of each log in a failure's message


class ControlPlaneError(RuntimeError):
    """The control plane did not come up, or a component of it died: says which, and why."""


def tail(path: Path, lines: int = _LOG_TAIL) -> str:
    if not path.exists():
        return "(no log)"
    text = path.read_text(errors="replace").splitlines()
    return "\n".join(text[-lines:]) or "(empty log)"


class Ports:
    """Ports on loopback, each checked free, none handed out twice by one control plane."""

    def __init__(self) -> None:
        self._given: set[int] = set()

    def take(self) -> int:
        while True:
            with socket.socket() as sock:
                sock.bind(("127.0.0.1", 0))
                port = int(sock.getsockname()[1])
            if port not in self._given:
                self._given.add(port)
                return port


@dataclass
class Component:
    name: str
    command: Callable[[], list[str]]  # its arguments, read again on a restart (new ports)
    probe: Callable[[], str | None]  # None when ready, else what is not
    log: Path
    ports: Callable[[], None] = lambda: None  # takes new ports (after "address in use")
    popen: subprocess.Popen[bytes] | None = None
    restarts: int = 0

    def start(self) -> None:
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with self.log.open("ab") as log:
            self.popen = subprocess.Popen(
                self.command(),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # Ctrl-C reaches the runner, which stops them in order
            )

    def exited(self) -> int | None:
        return None if self.popen is None else self.popen.poll()

    def stop(self, grace: float = 10.0) -> None:
        if self.popen is None or self.popen.poll() is not None:
            return
        self.popen.send_signal(signal.SIGTERM)
        try:
            self.popen.wait(grace)
        except subprocess.TimeoutExpired:
            self.popen.kill()
            self.popen.wait()
