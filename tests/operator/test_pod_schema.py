"""The operator's cache decodes pods into `RawPod`'s fields only (`observing.py`): a pod read
that way is the pod read whole, for pods of every shape, and a pod as the API server serves it
is decoded into the schema, not whole."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from eq_engine import ObjectError, parse_pod
from eq_engine.raw import RawPod
from eq_kit.decoding import Decoding
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.engine.test_pod_fast_path import ANY, REALISTIC, WELL_FORMED

SCHEMA = Decoding(RawPod)


def listed(raw: Any) -> Any:
    """The pod as the cache's LIST decodes it, and as a watch event does."""
    (from_page,) = SCHEMA.page(orjson.dumps({"metadata": {}, "items": [raw]}))["items"]
    from_event = SCHEMA.event(orjson.dumps({"type": "ADDED", "object": raw}))["object"]
    assert from_page == from_event
    return from_page


def read(raw: Any) -> Any:
    try:
        return parse_pod(raw, key="k")
    except ObjectError as error:
        return ("error", str(error))


@settings(max_examples=1000)
@given(st.one_of(WELL_FORMED, ANY))
def test_a_pod_decoded_into_the_schema_reads_as_the_whole_pod(raw):
    assert read(listed(raw)) == read(raw)


@pytest.mark.parametrize("raw", REALISTIC, ids=lambda raw: raw["metadata"].get("name", "new"))
def test_a_pod_as_served_is_decoded_into_the_schema(raw):
    decoded = listed(raw)
    assert "apiVersion" not in decoded and "managedFields" not in decoded["metadata"]
    assert read(decoded) == read(raw)
