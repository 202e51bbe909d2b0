"""The whole suite's fixtures: hypothesis' profiles, the xdist workers, and the real control
plane.

The real control plane is built on first use and there is one for the whole run. pytest-xdist
runs the suite in several processes, and any of them may get a test that needs it. They share
one (scripts/control_plane/shared.py): the first to ask starts it, the others join it, and it
stops when the last of them ends. One per process would cost a start-up each and half a
gigabyte each, for tests that each work in namespaces of their own and change nothing else.
The tests that need a control plane with a part missing, or the product installed (whose
webhooks would gate every other test's pods), start one of their own (`ControlPlane`).

Without Go this fails with one line saying what to install: in CI (CI=true) and on a
developer's machine alike, never a skip.
"""

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from scripts.control_plane import shared
from scripts.control_plane.build import Built, GoMissing, build
from tests import access

# CI runs more examples than a developer's quick run, and the same ones every time, so that a
# red build is reproducible; developers' runs explore new examples.
settings.register_profile("ci", max_examples=300, deadline=None, derandomize=True)
settings.register_profile("dev", max_examples=100, deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """Two workers per core for `--numprocesses=auto` (the default): about a third of the
    suite's time is waiting (the operators' delays and backoffs, kubectl and helm running),
    which a second worker per core fills. 2 min 22 s instead of 3 min 2 s on 2 cores."""
    return 2 * len(os.sched_getaffinity(0))


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", f"{access.LAST}: reads what the product asked of the API; runs last"
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    access.collected(items)


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
