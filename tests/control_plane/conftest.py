"""The tests on the real control plane (tests/conftest.py's `shared_plane`) see it as a
`Cluster`; a failed one shows the last lines of every component's log."""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path

import pytest

from scripts.control_plane import shared
from scripts.control_plane.processes import tail
from tests.control_plane.cluster import Cluster


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
