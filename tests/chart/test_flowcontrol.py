"""The chart's API Priority and Fairness objects (operator.api.flowControl): off by default; on,
a priority level of the operator's own and a FlowSchema that sends the operator's service
account, and nobody else, to it, ahead of the built-in `service-accounts` schema."""

from __future__ import annotations

import math
from typing import Any

import kubernetes_validate  # type: ignore[import-untyped]

from tests.chart.rendering import NAMESPACE, RELEASE, find, render

ON = "operator.api.flowControl.enabled=true"
KINDS = {"FlowSchema", "PriorityLevelConfiguration"}
KUBERNETES = "1.32.0"

# Kubernetes' built-in configuration (k8s.io/apiserver pkg/apis/flowcontrol/bootstrap/default.go,
# 1.32): the matching precedence of the two built-in FlowSchemas the operator's must fall between,
# and the nominal concurrency shares of each Limited priority level (exempt has 0).
SERVICE_ACCOUNTS = 9000  # service-accounts -> workload-low: every service account
KUBE_SYSTEM_SERVICE_ACCOUNTS = 900  # -> workload-high: the last built-in one for system users
SHARES = {
    "system": 30,
    "node-high": 40,
    "leader-election": 10,
    "workload-high": 40,
    "workload-low": 100,
    "global-default": 20,
    "catch-all": 5,
}
SERVER_SEATS = 400 + 200  # --max-requests-inflight + --max-mutating-requests-inflight


def flow_control(*settings: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The rendered FlowSchema and PriorityLevelConfiguration, with flow control on."""
    objects = render(ON, *settings)
    name = f"{RELEASE}-operator"
    return find(objects, "FlowSchema", name), find(objects, "PriorityLevelConfiguration", name)


def nominal_seats(shares: dict[str, int]) -> dict[str, int]:
    """Each level's NominalCL: ceil(ServerCL * NCS / sum of NCS), as
    pkg/util/flowcontrol/apf_controller.go computes it."""
    total = sum(shares.values())
    return {level: math.ceil(SERVER_SEATS * share / total) for level, share in shares.items()}


def test_off_by_default_nothing_is_rendered() -> None:
    assert not [o for o in render() if o["kind"] in KINDS]


def test_both_objects_are_valid_for_kubernetes_1_32_and_pass_the_servers_own_checks() -> None:
    schema, level = flow_control()
    for obj in (schema, level):
        assert obj["apiVersion"] == "flowcontrol.apiserver.k8s.io/v1"
        kubernetes_validate.validate(obj, KUBERNETES, strict=True)
        assert "namespace" not in obj["metadata"]  # cluster-scoped
    # What the API server's validation checks beyond the schema (kubernetes/kubernetes
    # pkg/apis/flowcontrol/validation).
    limited = level["spec"]["limited"]
    assert level["spec"]["type"] == "Limited" and limited["limitResponse"]["type"] == "Queue"
    queuing = limited["limitResponse"]["queuing"]
    assert 1 <= queuing["handSize"] <= queuing["queues"] <= 512
    assert queuing["queueLengthLimit"] > 0
    assert 0 <= limited["lendablePercent"] <= 100
    assert limited["nominalConcurrencyShares"] >= 0
    assert "borrowingLimitPercent" not in limited  # no limit: the API's default


def test_the_flow_schema_sends_the_operators_service_account_and_only_it_to_its_level() -> None:
    schema, level = flow_control()
    objects = render(ON)
    account = find(objects, "ServiceAccount", f"{RELEASE}-operator")
    operator = find(objects, "Deployment", f"{RELEASE}-operator")
    assert operator["spec"]["template"]["spec"]["serviceAccountName"] == account["metadata"]["name"]
    spec = schema["spec"]
    assert spec["priorityLevelConfiguration"] == {"name": level["metadata"]["name"]}
    assert spec["distinguisherMethod"] == {"type": "ByUser"}
    (rule,) = spec["rules"]
    assert rule["subjects"] == [
        {
            "kind": "ServiceAccount",
            "serviceAccount": {"namespace": NAMESPACE, "name": account["metadata"]["name"]},
        }
    ]
    # Every request of that account: resources anywhere, and discovery.
    assert rule["resourceRules"] == [
        {
            "verbs": ["*"],
            "apiGroups": ["*"],
            "resources": ["*"],
            "namespaces": ["*"],
            "clusterScope": True,
        }
    ]
    assert rule["nonResourceRules"] == [{"verbs": ["*"], "nonResourceURLs": ["*"]}]
    # Ahead of service-accounts, after every built-in schema for system users and nodes.
    assert KUBE_SYSTEM_SERVICE_ACCOUNTS < spec["matchingPrecedence"] < SERVICE_ACCOUNTS


def test_the_default_level_costs_what_values_yaml_says() -> None:
    _, level = flow_control()
    limited = level["spec"]["limited"]
    shares = limited["nominalConcurrencyShares"]
    before, seats = nominal_seats(SHARES), nominal_seats({**SHARES, "operator": shares})
    assert before["workload-low"] == 245  # where the operator's requests go without it
    assert seats["operator"] == 66
    assert seats["operator"] - round(seats["operator"] * limited["lendablePercent"] / 100) == 33
    # Every other level's share of the server falls from 245/245 to 245/275: 11% less.
    total = sum(SHARES.values())
    assert round(1 - total / (total + shares), 2) == 0.11
    assert (before["system"], seats["system"]) == (74, 66)
    assert (before["workload-low"], seats["workload-low"]) == (245, 219)


def test_values_change_the_level_and_the_schema() -> None:
    schema, level = flow_control(
        "operator.api.flowControl.nominalConcurrencyShares=100",
        "operator.api.flowControl.lendablePercent=0",
        "operator.api.flowControl.borrowingLimitPercent=0",
        "operator.api.flowControl.matchingPrecedence=950",
        "operator.api.flowControl.queuing.queues=8",
        "operator.api.flowControl.queuing.handSize=4",
        "operator.api.flowControl.queuing.queueLengthLimit=50",
    )
    limited = level["spec"]["limited"]
    assert limited["nominalConcurrencyShares"] == 100
    assert limited["lendablePercent"] == 0
    assert limited["borrowingLimitPercent"] == 0  # a zero is kept: no borrowing at all
    queuing = limited["limitResponse"]["queuing"]
    assert queuing == {"queues": 8, "handSize": 4, "queueLengthLimit": 50}
    assert schema["spec"]["matchingPrecedence"] == 950
    for obj in (schema, level):
        kubernetes_validate.validate(obj, KUBERNETES, strict=True)
    assert nominal_seats({**SHARES, "operator": 100})["operator"] == 174
