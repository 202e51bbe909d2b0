"""Whether the emulator's ElasticQuotas hold what a benchmark wants, looked at often and cheaply.

The emulator serves the operator from one core, and the benchmark looks from inside it. Reading
all 11,110 quotas at each look cost that core 0.1 s, so looks were rare (every 0.5 s) and still
took a fifth of what the operator's writes could have had. A look now reads again only the
quotas whose resourceVersion moved since the one before: a few milliseconds.
"""

from __future__ import annotations

from typing import Any

from tests.kube import QUOTAS, stored
from tests.operator.test_accounting import group_fields

TICK = 0.1
"""Seconds between looks: the resolution of the "right after" figures."""


class Groups:
    """Every group as wanted, and no other: `tests.operator.test_accounting.actual_groups(api)
    == want`, re-reading only what was written since the last look."""

    def __init__(self, want: dict[str, dict[str, Any]]) -> None:
        self._want = want
        self._versions: dict[str, str] = {}
        self._wrong = set(want)  # a wanted group not stored yet is wrong

    def right(self, api: Any) -> bool:
        versions, want, wrong = self._versions, self._want, self._wrong
        for raw in stored(api, QUOTAS):
            metadata = raw["metadata"]
            name, version = metadata["name"], metadata["resourceVersion"]
            if versions.get(name) == version:
                continue
            versions[name] = version
            if group_fields(raw) == want.get(name):
                wrong.discard(name)
            else:
                wrong.add(name)
        return not wrong
