"""The merge patches the writer sends: only our keys, a key no longer wanted set to null, other
gates kept; and the label read back from an answer."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from eq_engine import parse_pod
from eq_engine.model import keys
from eq_operator import patches
from eq_operator.view import QuotaFields, label_in

from tests.manifests import pod


def fields(*annotations: str | None, used: str | None = None) -> QuotaFields:
    return QuotaFields(annotations=annotations, status_used=used)  # type: ignore[arg-type]


def test_our_annotations_as_wanted_and_the_unwanted_removed() -> None:
    wanted = fields('{"cpu":"4"}', None, '{"cpu":"2"}', None)
    assert patches.owned_annotations(wanted) == {
        "metadata": {
            "annotations": {
                keys.RUNTIME: '{"cpu":"4"}',
                keys.REQUEST: None,
                keys.USED: '{"cpu":"2"}',
                keys.WAITING: None,
            }
        }
    }


@pytest.mark.parametrize(
    ("seen", "wanted", "patch"),
    [
        ('{"cpu":"4","memory":"1Gi"}', '{"cpu":"2"}', {"cpu": "2", "memory": None}),
        (None, '{"cpu":"2"}', {"cpu": "2"}),
        ('{"cpu":"4"}', "{}", {"cpu": None}),
        ('{"cpu":"4"}', None, None),
    ],
    ids=["a-resource-dropped", "none-seen", "all-dropped", "nothing-wanted"],
)
def test_status_used_as_wanted_and_resources_no_longer_used_removed(
    seen: str | None, wanted: str | None, patch: dict[str, Any] | None
) -> None:
    built = patches.status_used(fields(None, None, None, None, used=wanted), fields(used=seen))
    assert built == {"status": {"used": patch}}


@pytest.mark.parametrize("label", ["within-min", None])
def test_the_capacity_label_set_or_removed_and_read_back(label: str | None) -> None:
    patch = patches.capacity_label(label)
    assert patch == {"metadata": {"labels": {keys.CAPACITY: label}}}
    assert label_in(patch) == label


def test_an_answer_without_labels_holds_no_label() -> None:
    assert label_in({"metadata": {"name": "p0"}}) is None
    assert label_in({}) is None


def test_a_label_read_is_the_one_string_of_its_value() -> None:
    """Every pod's label is kept for as long as the pod lives: one string, not one per pod."""
    first = orjson.loads(orjson.dumps(patches.capacity_label("in-quota")))
    second = orjson.loads(orjson.dumps(patches.capacity_label("in-quota")))
    assert label_in(first) is label_in(second)


@pytest.mark.parametrize(
    ("others", "gates"),
    [(["other"], [{"name": "other"}]), ([], None)],
    ids=["other-gates-kept", "the-only-gate"],
)
def test_lifting_the_gate_keeps_only_the_other_gates(
    others: list[str], gates: list[dict[str, str]] | None
) -> None:
    raw = pod("p0", gated=True)
    raw["spec"]["schedulingGates"] += [{"name": name} for name in others]
    assert patches.gate_lifted(parse_pod(raw)) == {"spec": {"schedulingGates": gates}}
