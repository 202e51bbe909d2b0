"""The fast path of reading an ElasticQuota gives the fields the full validation gives, or steps
aside; either way `parse_quota` reads as the models alone would."""

from __future__ import annotations

import copy
import functools
from typing import Any

import hypothesis
import pytest
from eq_engine import parse_quota
from eq_engine.model import keys
from eq_engine.reading.parsing import quota_fields
from eq_engine.reading.quotas import fast_quota_fields
from hypothesis import given, settings
from hypothesis import strategies as st

from tests import realistic
from tests.engine.quota_edits import EDITS, base, outcome
from tests.engine.readings import fast_reading, full_reading

full = functools.partial(full_reading, quota_fields)
"""The fields through the pydantic models only, or the error they raise."""
fast = functools.partial(fast_reading, fast_quota_fields)
"""The fields through the fast path; None when it steps aside."""


@settings(max_examples=600, deadline=None)
@given(
    st.lists(EDITS, max_size=8),
    st.sampled_from([None, "x", 3, [], {}, {"metadata": None}, {"metadata": {"name": "a"}}]),
)
def test_the_fast_path_agrees_with_the_full_validation(edits: list[Any], odd: Any) -> None:
    body = base()
    for apply, key, value in edits:
        apply(body, key, value)
    for raw in (body, odd):
        quick = fast(raw)
        if quick is not None:
            hypothesis.event("fast path")
            assert quick == full(raw)
            assert quick.min == dict(quick.min)  # a plain dict, as the models give


def test_a_bad_field_is_named_as_the_full_validation_names_it() -> None:
    body = copy.deepcopy(base())
    body["spec"]["min"]["cpu"] = "lots"
    assert outcome(parse_quota, body) == full(body)
    assert outcome(parse_quota, body) == (
        "unreadable",
        "ElasticQuota quotas/team-a: spec.min: 'lots': not a Kubernetes quantity (resource cpu)",
    )


REALISTIC = [
    base(),
    realistic.elastic_quota("root", "quotas", is_parent=True, min={"cpu": "100"}),
    realistic.elastic_quota(
        "ml",
        "ml",
        parent="root",
        min={"cpu": "8", "nvidia.com/gpu": "2"},
        max={"cpu": "16", "nvidia.com/gpu": "4", "pods": "100"},
        labels={keys.TREE_ID: "a100", keys.ALLOW_LENT: "false"},
        annotations={
            keys.NAMESPACES: '["ml","ml-batch"]',
            keys.SHARED_WEIGHT: '{"cpu":"2"}',
            keys.STRICT_MAX_KEYS: '["nvidia.com/gpu"]',
        },
        manager="helm",
        status={"used": {"cpu": "1500m", "nvidia.com/gpu": "1"}},
    ),
    *realistic.koordinator_builtins(),
]


@pytest.mark.parametrize("raw", REALISTIC, ids=lambda raw: raw["metadata"]["name"])
def test_realistic_quotas_take_the_fast_path_and_read_alike(raw: dict[str, Any]) -> None:
    quick = fast(raw)
    assert quick is not None, "a group as the API server serves it should not need pydantic"
    assert quick == full(raw)
    _, quota, _ = outcome(parse_quota, raw)
    assert quota.name == raw["metadata"]["name"] and quota.min == quick.min


def test_a_bool_quantity_is_refused_even_after_the_number_it_equals() -> None:
    """`True == 1` to a cache keyed by quantities: the one read first must not decide."""
    for amount in (1, True):
        body = copy.deepcopy(base())
        body["spec"]["min"]["cpu"] = amount
        read = outcome(parse_quota, body)
    assert read == (
        "unreadable",
        "ElasticQuota quotas/team-a: spec.min: True: expected a quantity string or a number "
        "(resource cpu)",
    )
