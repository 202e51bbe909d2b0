"""Label selectors (selectors.py): what a metav1.LabelSelector selects, how it reads, and what
the API server would refuse; PodDisruptionBudgets and ElasticQuotaProfiles share it."""

from __future__ import annotations

from typing import Any

import pytest
from eq_engine import ObjectError
from eq_engine.model.budgets import parse_disruption_budget
from eq_engine.model.selectors import LabelSelector, Requirement, parse_selector

# The labels of a worker node as `kubectl get node -o json` shows them.
NODE_LABELS = {
    "beta.kubernetes.io/arch": "amd64",
    "kubernetes.io/arch": "amd64",
    "kubernetes.io/hostname": "gpu-a-1",
    "kubernetes.io/os": "linux",
    "node.kubernetes.io/instance-type": "g5.2xlarge",
    "topology.kubernetes.io/zone": "cn-hangzhou-a",
    "node-pool": "gpu-a",
}


def selector(raw: Any) -> LabelSelector | None:
    return parse_selector(
        raw, kind="ElasticQuotaProfile", ref="kube-system/gpu-a", field="spec.nodeSelector"
    )


def expression(key: str, operator: str, *values: str) -> dict[str, Any]:
    return {"key": key, "operator": operator, **({"values": list(values)} if values else {})}


@pytest.mark.parametrize(
    ("raw", "selected"),
    [
        ({}, True),  # no condition: every node
        ({"matchLabels": {"node-pool": "gpu-a"}}, True),
        ({"matchLabels": {"node-pool": "gpu-b"}}, False),
        ({"matchLabels": {"node-pool": "gpu-a", "kubernetes.io/os": "windows"}}, False),
        ({"matchExpressions": [expression("node-pool", "In", "gpu-b", "gpu-a")]}, True),
        ({"matchExpressions": [expression("node-pool", "In", "gpu-b")]}, False),
        ({"matchExpressions": [expression("missing", "In", "x")]}, False),
        ({"matchExpressions": [expression("node-pool", "NotIn", "gpu-a")]}, False),
        ({"matchExpressions": [expression("node-pool", "NotIn", "cpu")]}, True),
        ({"matchExpressions": [expression("missing", "NotIn", "x")]}, True),  # absent: not in
        ({"matchExpressions": [expression("node-pool", "Exists")]}, True),
        ({"matchExpressions": [expression("missing", "Exists")]}, False),
        ({"matchExpressions": [expression("node-pool", "DoesNotExist")]}, False),
        ({"matchExpressions": [expression("missing", "DoesNotExist")]}, True),
        (  # every condition must hold: labels and expressions alike
            {
                "matchLabels": {"topology.kubernetes.io/zone": "cn-hangzhou-a"},
                "matchExpressions": [expression("node-pool", "Exists")],
            },
            True,
        ),
        (
            {
                "matchLabels": {"topology.kubernetes.io/zone": "cn-hangzhou-a"},
                "matchExpressions": [expression("gpu", "Exists")],
            },
            False,
        ),
        ({"matchLabels": None, "matchExpressions": None}, True),  # nulls: absent
    ],
)
def test_a_selector_selects_the_labels_every_condition_admits(raw: Any, selected: bool) -> None:
    parsed = selector(raw)
    assert parsed is not None
    assert parsed.matches(NODE_LABELS) is selected


def test_a_missing_selector_is_none_for_the_caller_to_read() -> None:
    assert selector(None) is None


def test_match_labels_read_as_in_requirements_sorted_by_key_then_the_expressions() -> None:
    parsed = selector(
        {
            "matchLabels": {"zone": "a", "pool": "gpu"},
            "matchExpressions": [expression("tier", "NotIn", "z", "y"), expression("x", "Exists")],
        }
    )
    assert parsed is not None
    assert parsed.requirements == (
        Requirement("pool", "In", ("gpu",)),
        Requirement("zone", "In", ("a",)),
        Requirement("tier", "NotIn", ("z", "y")),  # values as written
        Requirement("x", "Exists"),
    )
    assert [str(r) for r in parsed.requirements] == [
        "pool In [gpu]",
        "zone In [a]",
        "tier NotIn [z, y]",
        "x Exists",
    ]


def test_selectors_alike_are_equal_whatever_the_order_of_their_labels() -> None:
    assert selector({"matchLabels": {"a": "1", "b": "2"}}) == selector(
        {"matchLabels": {"b": "2", "a": "1"}}
    )


@pytest.mark.parametrize(
    ("raw", "field", "message"),
    [
        ("pool=gpu", "", "expected a label selector"),
        ({"matchLabels": ["pool"]}, ".matchLabels", "expected a map of labels"),
        (
            {"matchLabels": {"pool": 1}},
            ".matchLabels[pool]",
            "1: expected a label value (a string)",
        ),
        (
            {"matchExpressions": {"key": "pool"}},
            ".matchExpressions",
            "expected a list of requirements",
        ),
    ],
)
def test_a_malformed_selector_names_the_object_and_the_field(
    raw: Any, field: str, message: str
) -> None:
    assert_refused(raw, "spec.nodeSelector" + field, message)


ONE = "expected one of In, NotIn, Exists, DoesNotExist"


@pytest.mark.parametrize(
    ("entry", "field", "message"),
    [
        ("pool in (gpu)", "", "expected a requirement (key, operator, values)"),
        ({"operator": "Exists"}, ".key", "required: the label's name"),
        (expression("pool", "Equals", "x"), ".operator", f"'Equals'; {ONE}"),
        (expression("pool", "in", "x"), ".operator", f"'in'; {ONE}"),  # case matters
        (expression("pool", "In"), ".values", "required when the operator is In"),
        (expression("pool", "NotIn"), ".values", "required when the operator is NotIn"),
        (expression("pool", "Exists", "x"), ".values", "must be empty when the operator is Exists"),
        (
            expression("pool", "DoesNotExist", "x"),
            ".values",
            "must be empty when the operator is DoesNotExist",
        ),
        (
            {"key": "pool", "operator": "In", "values": "x"},
            ".values",
            "'x': expected a list of label values (strings)",
        ),
    ],
)
def test_a_malformed_expression_is_named_by_its_index_and_field(
    entry: Any, field: str, message: str
) -> None:
    raw = {"matchExpressions": [expression("ok", "Exists"), entry]}
    assert_refused(raw, "spec.nodeSelector.matchExpressions[1]" + field, message)


def assert_refused(raw: Any, field: str, message: str) -> None:
    with pytest.raises(ObjectError) as caught:
        selector(raw)
    error = caught.value
    assert (error.kind, error.ref, error.field, error.message) == (
        "ElasticQuotaProfile",
        "kube-system/gpu-a",
        field,
        message,
    )
    assert str(error) == f"ElasticQuotaProfile kube-system/gpu-a: {field}: {message}"


def pdb(selector: Any) -> dict[str, Any]:
    """A PodDisruptionBudget as `kubectl get pdb -o json` shows it."""
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {
            "name": "trainer",
            "namespace": "team-a",
            "uid": "0f6d1c9e-3b0a-4d8e-9a57-2f1f7f0f6a11",
            "resourceVersion": "81234",
            "generation": 1,
            "creationTimestamp": "2025-12-01T00:00:00Z",
        },
        "spec": {"maxUnavailable": 1, **({"selector": selector} if selector is not None else {})},
        "status": {"disruptionsAllowed": 1, "currentHealthy": 3, "desiredHealthy": 2},
    }


def test_a_budget_reads_its_selector_here_and_keeps_kubernetes_reading_of_missing_and_empty() -> (
    None
):
    labels = {"app": "trainer", "tier": "batch"}
    covering = parse_disruption_budget(pdb({"matchLabels": {"app": "trainer"}}))
    assert covering.selector == LabelSelector((("app", "trainer"),))
    assert covering.covers("team-a", labels)
    assert not covering.covers("team-b", labels)  # its own namespace only
    assert parse_disruption_budget(pdb({})).covers("team-a", labels)  # {}: every pod
    assert not parse_disruption_budget(pdb(None)).covers("team-a", labels)  # none: no pod


def test_a_budget_names_its_own_kind_and_field_when_its_selector_is_malformed() -> None:
    raw = pdb({"matchExpressions": [expression("tier", "In")]})
    with pytest.raises(ObjectError) as caught:
        parse_disruption_budget(raw)
    assert str(caught.value) == (
        "PodDisruptionBudget team-a/trainer: spec.selector.matchExpressions[0].values: "
        "required when the operator is In"
    )
