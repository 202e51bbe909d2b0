"""Least privilege, measured: the chart grants each service account exactly the (API group,
resource, verb) triples its process used in this session's end-to-end tests (tests/operator,
tests/webhook, tests/apiserver, the quick start), no fewer and no more. Those run first."""

from __future__ import annotations

import collections
from typing import Any

import pytest

from tests import access
from tests.chart.rendering import NAMESPACE, RELEASE, render

Grant = tuple[str, str, str]


@pytest.fixture()
def used() -> dict[str, set[Grant]]:
    """What the operator and the webhook asked of the emulated API earlier in this session."""
    why = access.incomplete()
    if why is not None:
        pytest.skip(why)
    by_component: dict[str, set[Grant]] = collections.defaultdict(set)
    for component, group, resource, verb in access.ACCESS:
        by_component[component].add((group, resource, verb))
    return by_component


def granted(objects: tuple[dict[str, Any], ...], account: str) -> set[Grant]:
    """Every triple the roles bound to `account` allow."""
    roles = {(o["kind"], o["metadata"]["name"]): o for o in objects if o["kind"].endswith("Role")}
    grants: set[Grant] = set()
    for binding in [o for o in objects if o["kind"].endswith("RoleBinding")]:
        subject = {"kind": "ServiceAccount", "name": account, "namespace": NAMESPACE}
        if subject not in binding["subjects"]:
            continue
        role = roles[binding["roleRef"]["kind"], binding["roleRef"]["name"]]
        for rule in role["rules"]:
            assert "*" not in rule["verbs"] + rule["resources"] + rule["apiGroups"]
            grants |= {
                (group, resource, verb)
                for group in rule["apiGroups"]
                for resource in rule["resources"]
                for verb in rule["verbs"]
            }
    return grants


@pytest.mark.after_the_record
@pytest.mark.parametrize("component", ["operator", "webhook"])
def test_each_service_account_may_do_exactly_what_its_process_does(used, component):
    assert used[component], f"no requests of the {component} were recorded"
    objects = render()
    deployment = [o for o in objects if o["metadata"]["name"] == f"{RELEASE}-{component}"]
    account = [
        d["spec"]["template"]["spec"]["serviceAccountName"]
        for d in deployment
        if d["kind"] == "Deployment"
    ]
    assert account == [f"{RELEASE}-{component}"]
    assert granted(objects, account[0]) == used[component]


def test_the_operator_may_create_elasticquotas_and_leases_only_in_the_built_in_namespace():
    objects = render("quota.namespace=quotas")
    (role,) = [o for o in objects if o["kind"] == "Role"]
    assert role["metadata"]["namespace"] == "quotas"
    creates = {
        (g, r)
        for rule in role["rules"]
        for g in rule["apiGroups"]
        for r in rule["resources"]
        if "create" in rule["verbs"]
    }
    assert creates == {
        ("coordination.k8s.io", "leases"),
        ("scheduling.sigs.k8s.io", "elasticquotas"),
    }
    for cluster_role in [o for o in objects if o["kind"] == "ClusterRole"]:
        for rule in cluster_role["rules"]:
            assert "leases" not in rule["resources"]
            assert not ("elasticquotas" in rule["resources"] and "create" in rule["verbs"])
