"""`QuotaReader` reads a watch of groups as `parse_quota` reads each object, and reads the echo
of the operator's own writes from memory."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from eq_engine import QuotaReader, parse_quota
from eq_engine.model import keys
from eq_engine.reading import quota_reader as reader_module
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.engine.quota_edits import EDITS, annotations_of, base, outcome


@settings(max_examples=300, deadline=None)
@given(st.lists(EDITS, min_size=1, max_size=12))
def test_a_watch_of_one_group_reads_as_each_object_alone(edits: list[Any]) -> None:
    """Each object the watch brings (a new dict, as decoded) reads as `parse_quota` reads it:
    the same group with the same `status.used`, or the same error."""
    reader, body = QuotaReader(), base()
    assert outcome(reader.read, body) == outcome(parse_quota, body)
    for apply, key, value in edits:
        body = copy.deepcopy(body)
        apply(body, key, value)
        assert outcome(reader.read, body) == outcome(parse_quota, body)


def test_the_echo_of_a_write_is_read_from_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    reader, body = QuotaReader(), base()
    first = reader.read(body)

    def refused(raw: Any) -> Any:
        raise AssertionError("validated again")

    monkeypatch.setattr(reader_module, "parse_quota", refused)
    echo = copy.deepcopy(body)
    annotations_of(echo)[keys.RUNTIME] = '{"cpu":"4"}'
    echo["metadata"]["resourceVersion"] = "900"
    assert reader.read(echo) is first
    status_echo = copy.deepcopy(echo)
    status_echo["status"] = {"used": {"cpu": "3"}}
    read = reader.read(status_echo)
    assert read == first and read.used == {"cpu": 3000}
    # A group forgotten (deleted) is validated anew when it comes back.
    reader.forget("quotas", "team-a")
    with pytest.raises(AssertionError, match="validated again"):
        reader.read(status_echo)
