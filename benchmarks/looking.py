"""Whether the emulator's ElasticQuotas hold what a benchmark wants, looked at often and cheaply.

The emulator serves the operator from one core, and the benchmark looks from inside it. Reading
all 11,110 quotas at each look cost that core 0.1 s, so looks were rare (every 0.5 s) and still
took a fifth of what the operator's writes could have had. Comparing every quota's
resourceVersion with the last look's still cost 8 ms a look, a twelfth of the core at a look
every TICK. A look now reads the quotas' events since the one before from the emulator's
history (what a watch from that version would get), and reads everything only when they have
left its window: a look's cost follows what was written, not how many groups there are.
"""

from __future__ import annotations

from typing import Any

from tests.apiserver import ApiServer
from tests.kube import QUOTAS, plural, stored
from tests.operator.test_accounting import group_fields

TICK = 0.1
"""Seconds between looks: the resolution of the "right after" figures."""


class Groups:
    """Every group as wanted, and no other: `tests.operator.test_accounting.actual_groups(api)
    == want`, reading only what was written since the last look."""

    def __init__(self, want: dict[str, dict[str, Any]]) -> None:
        self._want = want
        self._seen = 0
        """The emulator's resourceVersion at the last look: 0, none yet."""
        self._wrong = set(want)  # a wanted group not stored yet is wrong

    def right(self, api: ApiServer) -> bool:
        table = api.storage.tables[plural(QUOTAS)]
        seen, self._seen = self._seen, api.storage.rv
        events = table.since(seen) if seen else None
        if events is not None:
            for event in events:
                obj = event.new.obj
                self._judge(obj["metadata"]["name"], None if event.type == "DELETED" else obj)
        else:  # the first look, or more was written since the last than the history holds
            self._wrong = set(self._want)
            for obj in stored(api, QUOTAS):
                self._judge(obj["metadata"]["name"], obj)
        return not self._wrong

    def _judge(self, name: str, obj: dict[str, Any] | None) -> None:
        want = self._want.get(name)
        if (None if obj is None else group_fields(obj)) == want:
            self._wrong.discard(name)
        else:
            self._wrong.add(name)
