"""`elastic-quota` as a subprocess, as a user runs it (and Python code as its process would run
it): a clean environment, the sources on the path, standard output and error captured."""

from __future__ import annotations

import subprocess
import sys

from tests.paths import PYTHONPATH


def cli(
    *args: str, stdin: str | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return python("-m", "eq_cli.main", *args, stdin=stdin, env=env)


def python(
    *args: str, stdin: str | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        env={"PYTHONPATH": PYTHONPATH, "PATH": "/usr/bin:/bin", **(env or {})},
    )
