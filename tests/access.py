"""What the product's processes asked of the API during this test session, as RBAC rules name
it: (component, API group, resource[/subresource], verb). The emulated API server adds to it
(tests/apiserver), and tests/chart/test_rbac.py, run last, compares it with the
chart's roles. The record is complete only when every suite that runs the processes ran whole
and passed in this session; `incomplete()` says why not otherwise."""

from __future__ import annotations

from pathlib import Path

import pytest

Access = tuple[str, str, str, str]

ACCESS: set[Access] = set()

TESTS = Path(__file__).resolve().parent
RECORDERS = tuple(
    TESTS / name
    for name in (
        "operator",
        "webhook",
        "apiserver",
        "test_readme_quickstart.py",
        "test_user_stories_kubectl.py",
    )
)
"""Where the tests that run the operator and the webhook against an emulator live."""

LAST = "after_the_record"
"""The marker of tests that read the record: they run after every other test."""


class _Session:
    def __init__(self) -> None:
        self.uncovered: list[Path] = []
        self.deselected = 0
        self.failed = 0


_session = _Session()


def _recorder(path: Path) -> bool:
    return any(path == r or r in path.parents for r in RECORDERS)


def collected(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Note the recorders the session's paths leave out, and move the readers to the end."""
    roots = [Path(str(arg).split("::", 1)[0]).resolve() for arg in config.args]
    _session.uncovered = [
        r for r in RECORDERS if not any(r == root or root in r.parents for root in roots)
    ]
    items.sort(key=lambda item: item.get_closest_marker(LAST) is not None)  # stable


def deselected(items: list[pytest.Item]) -> None:
    _session.deselected += sum(_recorder(item.path) for item in items)


def reported(report: pytest.TestReport) -> None:
    if report.failed and _recorder(Path(report.fspath).resolve()):
        _session.failed += 1


def incomplete() -> str | None:
    """Why this session's record cannot be trusted to be whole, or None."""
    if _session.uncovered:
        names = ", ".join(str(r.relative_to(TESTS.parent)) for r in _session.uncovered)
        return f"the record needs the tests in {names} in the same run"
    if _session.deselected:
        return f"{_session.deselected} tests that record were deselected"
    if _session.failed:
        return f"{_session.failed} tests that record failed"
    return None
