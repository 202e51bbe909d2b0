"""What the product's processes asked of the API during this test session, as RBAC rules name
it: (component, API group, resource[/subresource], verb). The emulated API server adds to it
(tests/apiserver/access.py); the last test of tests/chart/test_rbac.py checks that the chart
grants all of it (that test measures the chart's exact needs itself, whatever else ran)."""

from __future__ import annotations

import pytest

Access = tuple[str, str, str, str]

ACCESS: set[Access] = set()

LAST = "after_the_record"
"""The marker of tests that read the record: they run after every other test."""


def collected(items: list[pytest.Item]) -> None:
    """Move the readers of the record to the end."""
    items.sort(key=lambda item: item.get_closest_marker(LAST) is not None)  # stable
