"""Least privilege, measured: the chart grants each service account exactly the (API group,
resource, verb) triples its process asks of the API.

The measure is taken here, whatever else runs: the chart is installed on the emulated API server
(tests/installation.py), with every PodGroup API served, and its processes are walked through
every kind of request they make (a borrowed min taken back past a PodDisruptionBudget, a group
deleted); the server records each request by the User-Agent that made it
(tests/apiserver/access.py), even one answered 404 (authorization comes first). Every other
test that runs the processes adds to the session's record (tests/access.py): the last test
checks that the chart grants whatever those asked too."""

from __future__ import annotations

import collections
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from tests import access
from tests.apiserver import ApiError, ApiServer, disruption_budget, pod_group_crds
from tests.apiserver.client import Client
from tests.chart.rendering import NAMESPACE, RELEASE, render
from tests.installation import installed
from tests.manifests import pod, quota
from tests.operator.test_reclaim import borrowing
from tests.waiting import eventually

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


class Refusals:
    """A PodDisruptionBudget refuses the first two evictions of `b4`, the first pod the
    operator evicts: its Event is created, then its count raised (a PATCH) when it is refused
    again after its backoff (a second after the first)."""

    def __init__(self, api: ApiServer) -> None:
        self.refused = 0
        api.evictions = self.react

    def react(self, pod: dict[str, Any]) -> ApiError | None:
        if pod["metadata"]["name"] != "b4" or self.refused == 2:
            return None
        self.refused += 1
        return disruption_budget()


async def test_each_service_account_may_do_exactly_what_its_process_does(tmp_path: Path):
    wanted = grants()
    # The three PodGroup APIs served, so that the operator watches each, not only lists it.
    async with ApiServer(serving=pod_group_crds()) as api:
        # test_reclaim's borrower runs on the lender's min; `spare` is a group to delete.
        api.seed(*borrowing(), quota("spare", namespace="spare", max={"cpu": 10}))
        Refusals(api)
        client = Client(api.url)
        try:
            async with installed(api, tmp_path, *FAST):
                # The lender comes back: three of the borrower's pods are evicted.
                lender = pod("l0", namespace="lender", cpu="6", node=None)
                await client.call("POST", "/api/v1/namespaces/lender/pods", lender)
                # A group deleted: the webhook looks for pods still bound to it.
                await client.call(
                    "DELETE",
                    "/apis/scheduling.sigs.k8s.io/v1alpha1/namespaces/spare/elasticquotas/spare",
                )

                def missing() -> dict[str, set[Grant]]:
                    used = by_component(api.access)
                    return {c: wanted[c] - used[c] for c in COMPONENTS if wanted[c] - used[c]}

                await eventually(
                    lambda: not missing(), timeout=60, what="every grant used", explain=missing
                )
        finally:
            await client.close()
    used = by_component(api.access)
    for component in COMPONENTS:
        assert used[component] == wanted[component], component


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
