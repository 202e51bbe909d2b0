import os

import pytest
from hypothesis import settings

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
