"""The fast path of reading a Node gives the fields the full validation gives, or steps aside;
either way `parse_node` reads as the models alone would."""

from __future__ import annotations

import functools
from typing import Any

import hypothesis
import pytest
from eq_engine import ObjectError, parse_node
from eq_engine.reading.nodes import fast_node_fields
from eq_engine.reading.parsing import node_fields
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.engine.node_edits import NODES, base
from tests.engine.readings import fast_reading, full_reading
from tests.realistic import node

full = functools.partial(full_reading, node_fields)
"""The fields through the pydantic models only, or the error they raise."""
fast = functools.partial(fast_reading, fast_node_fields)
"""The fields through the fast path; None when it steps aside."""


@settings(max_examples=600, deadline=None)
@given(NODES, st.sampled_from([None, "x", 3, [], {}, {"metadata": None}, {"metadata": {}}]))
def test_the_fast_path_agrees_with_the_full_validation(raw: Any, odd: Any) -> None:
    for body in (raw, odd):
        quick = fast(body)
        if quick is not None:
            hypothesis.event("fast path")
            assert quick == full(body)


@pytest.mark.parametrize(
    "raw",
    [
        base(),
        node("cp-1", control_plane=True),
        node("gpu-1", cpu="96", memory_gi=768, labels={"pool": "a100"}),
    ],
    ids=lambda raw: raw["metadata"]["name"],
)
def test_realistic_nodes_take_the_fast_path_and_read_alike(raw: dict[str, Any]) -> None:
    quick = fast(raw)
    assert quick is not None, "a node as the API server serves it should not need pydantic"
    assert quick == full(raw)
    assert parse_node(raw).allocatable == quick.allocatable


@pytest.mark.parametrize(
    ("edit", "schedulable"),
    [
        ({}, True),
        ({"spec": {"unschedulable": True}}, False),  # cordoned
        ({"status": {"conditions": [{"type": "Ready", "status": "Unknown"}]}}, False),
        ({"status": {"conditions": None}}, False),
    ],
)
def test_a_node_is_schedulable_when_ready_and_not_cordoned(
    edit: dict[str, Any], schedulable: bool
) -> None:
    raw = base()
    for part, fields in edit.items():
        raw[part] = {**raw.get(part, {}), **fields}
    assert fast(raw) is not None
    assert parse_node(raw).schedulable is schedulable


@pytest.mark.parametrize(
    ("part", "field", "value", "says"),
    [
        ("spec", "unschedulable", "maybe", "Node n1: spec.unschedulable: "),
        ("status", "allocatable", {"cpu": "lots"}, "Node n1: status.allocatable: 'lots'"),
        ("status", "conditions", [None], "Node n1: status.conditions[0]: "),
    ],
)
def test_a_bad_field_is_named_as_the_full_validation_names_it(
    part: str, field: str, value: Any, says: str
) -> None:
    raw = base()
    raw[part][field] = value
    with pytest.raises(ObjectError) as error:
        parse_node(raw)
    assert str(error.value) == full(raw)[1]
    assert str(error.value).startswith(says)
