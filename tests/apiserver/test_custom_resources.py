"""CRDs besides the ElasticQuota's: the three PodGroup APIs served side by side (two share their
plural and their group's version with others), a CRD created through the API served at once, and
a request for what is not served refused with 404 but recorded for RBAC, as kube-apiserver
authorizes before it looks for the resource."""

from __future__ import annotations

from typing import Any

from tests.access import ACCESS
from tests.apiserver import ApiServer, pod_group_crds
from tests.apiserver.client import Client
from tests.apiserver.conftest import MERGE

NEW = "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/team-b/podgroups"
OLD = "/apis/scheduling.sigs.k8s.io/v1alpha1/namespaces/team-b/podgroups"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


def train(group: str, members: int) -> dict[str, Any]:
    return {
        "apiVersion": f"{group}/v1alpha1",
        "kind": "PodGroup",
        "metadata": {"name": "train", "namespace": "team-b"},
        "spec": {"minMember": members, "minResources": {"cpu": "2"}},
    }


async def test_the_three_pod_group_apis_are_served_side_by_side():
    async with ApiServer(serving=pod_group_crds()) as api:
        client = Client(api.url)
        try:
            await client.call("POST", NEW, train("scheduling.x-k8s.io", 4))
            # The same name in Koordinator's group is another object.
            await client.call("POST", OLD, train("scheduling.sigs.k8s.io", 2))
            new = api.get("podgroups.scheduling.x-k8s.io", "train", "team-b")
            koordinators = api.get("podgroups.scheduling.sigs.k8s.io", "train", "team-b")
            assert new is not None and koordinators is not None
            assert (new["spec"]["minMember"], koordinators["spec"]["minMember"]) == (4, 2)
            assert api.get("podgroups.scheduling.k8s.io", "train", "team-b") is None
            # scheduler-plugins' has a status subresource; a PATCH of the object leaves it alone.
            status = {"status": {"phase": "Scheduling", "occupiedBy": "team-b/train"}}
            patched = await client.call("PATCH", f"{NEW}/train", status, content_type=MERGE)
            assert "status" not in patched
            patched = await client.call("PATCH", f"{NEW}/train/status", status, content_type=MERGE)
            assert patched["status"]["phase"] == "Scheduling"
            served = await client.call("GET", "/apis/scheduling.k8s.io/v1alpha2")
            assert [r["name"] for r in served["resources"]] == ["podgroups", "podgroups/status"]
        finally:
            await client.close()


async def test_a_crd_created_through_the_api_is_served_at_once(api: ApiServer, client: Client):
    assert (await client.request("GET", NEW))[0] == 404
    await client.call("POST", CRDS, pod_group_crds("scheduling.x-k8s.io")[0])
    await client.call("POST", NEW, train("scheduling.x-k8s.io", 4))
    listed = await client.call("GET", "/apis/scheduling.x-k8s.io/v1alpha1/podgroups")
    assert [(o["metadata"]["namespace"], o["spec"]["minMember"]) for o in listed["items"]] == [
        ("team-b", 4)
    ]
    crds = {crd["metadata"]["name"] for crd in (await client.call("GET", CRDS))["items"]}
    assert crds == {
        "elasticquotas.scheduling.sigs.k8s.io",
        "elasticquotaprofiles.quota.koordinator.sh",  # the chart's, served from the start
        "podgroups.scheduling.x-k8s.io",
    }


async def test_a_request_for_what_is_not_served_is_refused_but_recorded_for_rbac():
    async with ApiServer() as api:
        client = Client(api.url, agent="elastic-quota/0.1 (operator)")
        try:
            path = "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/team-b/podgroups"
            status, body, _ = await client.request("GET", path)
            assert status == 404 and body["reason"] == "NotFound"
            status, _, _ = await client.request("GET", "/apis/scheduling.k8s.io/v1alpha2/podgroups")
            assert status == 404
        finally:
            await client.close()
    wanted = {
        ("operator", "scheduling.x-k8s.io", "podgroups", "list"),
        ("operator", "scheduling.k8s.io", "podgroups", "list"),
    }
    assert api.access == wanted
    assert wanted <= ACCESS
