"""The real control plane under these tests: built on first use, one for the whole run.

pytest-xdist runs the suite in several processes, and any of them may get a test of this
folder. They share one control plane (scripts/control_plane/shared.py): the first to ask
starts it, the others join it, and it stops when the last of them ends. One per process would
cost a start-up each (about 30 s of two cores at once) and a gigabyte of memory each, for tests
that each work in a namespace of their own and change nothing else. The tests that need a
control plane with a part missing start a small one of their own (`private_plane`).

Without Go this fails with one line saying what to install: in CI (CI=true) and on a
developer's machine alike, never a skip.
"""

from __future__ import annotations

import os
from collections.abc import Generator, Iterator
from pathlib import Path

import pytest

from scripts.control_plane import shared
from scripts.control_plane.build import Built, GoMissing, build
from scripts.control_plane.processes import tail
from tests.control_plane.cluster import Cluster


@pytest.fixture(scope="session")
def built() -> Built:
    try:
        return build()
    except GoMissing as missing:
        pytest.fail(str(missing), pytrace=False)


def _run_root(factory: pytest.TempPathFactory) -> Path:
    base = factory.getbasetemp()
    # Under xdist each worker's base is pytest-N/popen-gwK: the run's own folder is its parent.
    return (base.parent if "PYTEST_XDIST_WORKER" in os.environ else base) / "control-plane"


@pytest.fixture(scope="session")
def shared_plane(built: Built, tmp_path_factory: pytest.TempPathFactory) -> Iterator[shared.Joined]:
    joined = shared.join(_run_root(tmp_path_factory))
    yield joined
    joined.leave()


@pytest.fixture
def cluster(shared_plane: shared.Joined, tmp_path: Path) -> Cluster:
    return Cluster(shared_plane.directory, shared_plane.server, tmp_path / "home")


def logs(directory: Path) -> str:
    return "\n".join(
        f"--- {log}:\n{tail(log)}" for log in sorted((directory / "logs").glob("*.log"))
    )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """A failed test here shows the last lines of every control-plane process's log."""
    report = yield
    if report.failed:
        funcargs = getattr(item, "funcargs", {})
        for value in funcargs.values():
            if isinstance(value, Cluster):
                report.sections.append(("control plane logs", logs(value.directory)))
    return report
