"""What a benchmark runner does before it measures: the project compiled to bytecode, as in the
image, and the interpreter named, since its build moves every timing.

The product's image compiles every module at build time (`Dockerfile`), so a pod starts by
loading bytecode. A benchmark that started the processes from sources that were never compiled,
on a machine where Python writes no bytecode (`PYTHONDONTWRITEBYTECODE`, set on this one),
would time the compiling of each module at every start: about 0.4 s of the operator's start-up
on 2 cores, which no production start pays.

The image's interpreter is an optimized build of CPython (profile-guided and link-time
optimized, as the official images and Debian's `python3.11` are); one built from source without
`--enable-optimizations` (pyenv's here) is not, and ran the same benchmark about a fifth slower
(docs/benchmarks.md, "The interpreter"). The first line a runner prints says which ran it (all
but the emulator's own, `benchmarks.apiserver`, which `benchmarks.scale` runs after its line).
"""

from __future__ import annotations

import compileall
import os
import platform
import sys
from pathlib import Path

from tests.paths import REPO, SOURCE_ROOTS


def prepare() -> None:
    """Compile the project, then print which interpreter runs the benchmark."""
    compile_project()
    print(interpreter_line(), flush=True)  # before anything a child process prints


def compile_project(checkout: Path = REPO) -> None:
    """Write the bytecode of every module under the checkout's source roots that lacks it or
    is stale."""
    for root in SOURCE_ROOTS:
        if not compileall.compile_dir(checkout / root, quiet=1):
            raise RuntimeError(f"a module under {root}/ could not be compiled or written")


def interpreter_line() -> str:
    """The interpreter as a line: its version, the binary `sys.executable` resolves to (the one
    a virtual environment was made from), and the compiler that built it."""
    binary = os.path.realpath(sys.executable)
    version = f"{platform.python_implementation()} {platform.python_version()}"
    return f"interpreter: {version} at {binary} ({platform.python_compiler()})"
