"""Real kubectl (`/usr/bin/kubectl`) against the real control plane, as a user runs it.

Commands are given as a user types them (`kubectl get eq -A`), in the environment a subclass
gives (tests/control_plane/test_quickstart.py's RealKubectl): `KUBECONFIG`, and `KUBECACHEDIR`
at a directory of the test's own (kubectl caches discovery per host:port for 6 h, and ports are
reused). Runs as asyncio subprocesses, so the test's event loop goes on meanwhile.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import shlex
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

from tests.paths import REPO
from tests.waiting import eventually

KUBECTL = "/usr/bin/kubectl"


@dataclass(frozen=True)
class Result:
    command: str
    code: int
    out: str
    err: str

    def __str__(self) -> str:
        return f"$ {self.command}\n(exit {self.code})\n{self.out}{self.err}"


def argv(command: str) -> list[str]:
    """`kubectl get eq -A  # comment` -> the kubectl binary and its arguments."""
    words = shlex.split(command, comments=True)
    assert words and words[0] == "kubectl", command
    return [KUBECTL, *words[1:]]


def rows(table: str) -> list[dict[str, str]]:
    """kubectl's table output as dicts by header; cells are cut at the header's column starts,
    so empty cells stay empty."""
    lines = [line for line in table.splitlines() if line.strip()]
    if not lines:
        return []
    header = lines[0]
    starts = [m.start() for m in re.finditer(r"(?:^|(?<=  ))\S", header)]
    names = [header[a:b].strip() for a, b in zip(starts, [*starts[1:], None], strict=True)]
    found = []
    for line in lines[1:]:
        cells = [line[a:b].strip() for a, b in zip(starts, [*starts[1:], None], strict=True)]
        found.append(dict(zip(names, cells, strict=True)))
    return found


class Kubectl:
    env: dict[str, str]
    """kubectl's environment (`KUBECONFIG`, `HOME`, `KUBECACHEDIR`), set by the subclass."""

    async def run(self, command: str, *, ok: bool = True) -> Result:
        """Run `command` from the repository's root; `ok`: assert it succeeded."""
        process = await asyncio.create_subprocess_exec(
            *argv(command),
            cwd=REPO,
            env=self.env,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await process.communicate()
        result = Result(command, process.returncode or 0, out.decode(), err.decode())
        if ok:
            assert result.code == 0, str(result)
        return result

    async def until(
        self,
        command: str,
        check: Callable[[Result], bool],
        *,
        what: str,
        timeout: float = 20,
    ) -> Result:
        """Run `command` again until `check` holds on its result; the last result."""
        last: list[Result] = []

        async def holds() -> bool:
            last[:] = [await self.run(command, ok=False)]
            return check(last[0])

        await eventually(holds, timeout=timeout, what=what, explain=lambda: str(last[0]))
        return last[0]

    @contextlib.asynccontextmanager
    async def streaming(self, command: str) -> AsyncIterator[Stream]:
        """A long-running command (`kubectl get ... -w`), stopped when the block ends."""
        process = await asyncio.create_subprocess_exec(
            *argv(command),
            cwd=REPO,
            env=self.env,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        try:
            yield Stream(command, process)
        finally:
            if process.returncode is None:
                process.terminate()
            await process.wait()


class Stream:
    def __init__(self, command: str, process: asyncio.subprocess.Process) -> None:
        self.command, self.process = command, process
        self.lines: list[str] = []

    async def line_where(self, check: Callable[[str], bool], *, timeout: float = 20) -> str:
        """The first output line (read so far or to come) for which `check` holds."""
        for line in self.lines:
            if check(line):
                return line
        assert self.process.stdout is not None
        async with asyncio.timeout(timeout):
            while True:
                raw = await self.process.stdout.readline()
                assert raw, f"{self.command} ended; its output:\n" + "\n".join(self.lines)
                line = raw.decode().rstrip("\n")
                self.lines.append(line)
                if check(line):
                    return line
