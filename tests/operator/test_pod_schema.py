"""The caches decode pods into `RawPod`'s fields only, and nodes into `RawNode`'s (`observing.py`,
`eq_engine.reading.raw.SCHEMAS`): an object read that way is the object read whole, for objects of
every shape, and one as the API server serves it is decoded into the schema, not whole."""

from __future__ import annotations

from typing import Any

import msgspec
import orjson
import pytest
from eq_engine import parse_node, parse_pod
from eq_engine.reading import SCHEMAS
from eq_kit.decoding import Decoding
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tests.engine.node_edits import NODES
from tests.engine.readings import full_reading
from tests.engine.test_pod_fast_path import ANY, REALISTIC, WELL_FORMED
from tests.realistic import node

POD_DECODING, NODE_DECODING = Decoding(SCHEMAS["Pod"]), Decoding(SCHEMAS["Node"])


def listed(raw: Any, schema: Decoding = POD_DECODING) -> Any:
    """The object as the cache's LIST decodes it, and as a watch event does."""
    (from_page,) = schema.page(orjson.dumps({"metadata": {}, "items": [raw]}))["items"]
    from_event = schema.event(orjson.dumps({"type": "ADDED", "object": raw}))["object"]
    assert from_page == from_event
    return from_page


def read(raw: Any, parse: Any = lambda raw: parse_pod(raw, key="k")) -> Any:
    return full_reading(parse, raw)


@settings(max_examples=1000)
@given(st.one_of(WELL_FORMED, ANY))
@example({"metadata": {"name": None, "creationTimestamp": "2025-13-02T08:15:00Z"}})  # a null name
def test_a_pod_decoded_into_the_schema_reads_as_the_whole_pod(raw):
    assert read(listed(raw)) == read(raw)


@pytest.mark.parametrize("raw", REALISTIC, ids=lambda raw: raw["metadata"].get("name", "new"))
def test_a_pod_as_served_is_decoded_into_the_schema(raw):
    decoded = listed(raw)
    assert "apiVersion" not in decoded
    assert "managedFields" not in msgspec.to_builtins(decoded)["metadata"]
    assert read(decoded) == read(raw)


@settings(max_examples=300)
@given(NODES)
def test_a_node_decoded_into_the_schema_reads_as_the_whole_node(raw):
    assert read(listed(raw, NODE_DECODING), parse_node) == read(raw, parse_node)


def test_a_node_as_served_is_decoded_into_the_schema():
    raw = node("n1", cpu="16", extra={"nvidia.com/gpu": "4"})
    decoded = listed(raw, NODE_DECODING)
    assert "nodeInfo" not in msgspec.to_builtins(decoded)["status"]
    assert "managedFields" not in decoded["metadata"]
    assert read(decoded, parse_node) == read(raw, parse_node)
    assert read(raw, parse_node).schedulable
