"""Least privilege: what the chart grants each service account, as (API group, resource, verb)
triples, for the tests that measure it.

The measure that the chart grants each process exactly what it asks is taken on the real
control plane, under the real authorizer (tests/control_plane/test_reclaim.py: the audit log's
requests against these grants, both ways, and `kubectl auth can-i --list`). Here: every request
the emulator saw the processes make in this session (tests/access.py) is granted, and the
Lease is the only thing the operator may create in its own namespace."""

from __future__ import annotations

import collections
from collections.abc import Iterable
from typing import Any

import pytest

from tests import access
from tests.chart.rendering import NAMESPACE, RELEASE, render

Grant = tuple[str, str, str]
COMPONENTS = ("operator", "webhook")
FAST = (
    "operator.batchInterval=0.05",
    "operator.leaseDuration=2",
    "operator.reclaim.interval=0.1",
    "operator.reclaim.delay=0.5",
)
"""The chart's settings but for time: a Lease renewed, and a reclaim round, within seconds."""


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


def grants() -> dict[str, set[Grant]]:
    """What the chart, rendered with its defaults, lets each component's service account do."""
    objects = render()
    by_component = {}
    for component in COMPONENTS:
        deployment = [o for o in objects if o["metadata"]["name"] == f"{RELEASE}-{component}"]
        account = [
            d["spec"]["template"]["spec"]["serviceAccountName"]
            for d in deployment
            if d["kind"] == "Deployment"
        ]
        assert account == [f"{RELEASE}-{component}"]
        by_component[component] = granted(objects, account[0])
    return by_component


def by_component(record: Iterable[access.Access]) -> dict[str, set[Grant]]:
    used: dict[str, set[Grant]] = collections.defaultdict(set)
    for component, group, resource, verb in record:
        used[component].add((group, resource, verb))
    return used


@pytest.mark.after_the_record
def test_the_chart_grants_whatever_the_processes_asked_in_this_session():
    """Whatever tests ran before (all of them, in a whole run): nothing they made the processes
    ask of the API is left out of the chart's roles."""
    wanted, used = grants(), by_component(access.ACCESS)
    for component in COMPONENTS:
        assert used[component] <= wanted[component], component


def test_the_operator_may_create_leases_only_in_the_built_in_namespace():
    """ElasticQuotas it creates anywhere: a profile's root lives in the profile's namespace."""
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
    assert creates == {("coordination.k8s.io", "leases")}
    for cluster_role in [o for o in objects if o["kind"] == "ClusterRole"]:
        for rule in cluster_role["rules"]:
            assert "leases" not in rule["resources"]
