"""Koordinator's ElasticQuotaProfile, whose CRD the chart installs with the ElasticQuota's, served
from the start as a real API server serves it: a profile stored whole, and its schema's
validation, which refuses a profile without `spec.quotaName` or `spec.nodeSelector` with the API
server's message (on the emulator and on the real kube-apiserver)."""

from __future__ import annotations

from typing import Any

from tests.apiserver import ApiServer, Config
from tests.apiserver.client import Client
from tests.apiserver.conftest import MERGE
from tests.apiserver.servers import Server

KEY = "elasticquotaprofiles.quota.koordinator.sh"
PROFILES = "/apis/quota.koordinator.sh/v1alpha1/namespaces/koordinator-system/elasticquotaprofiles"
GPU_POOL = {
    "quotaName": "gpu-root",
    "quotaLabels": {"quota.scheduling.koordinator.sh/is-parent": "true"},
    "resourceRatio": "0.9",
    "nodeSelector": {
        "matchLabels": {"pool": "gpu"},
        "matchExpressions": [{"key": "node-role", "operator": "NotIn", "values": ["infra"]}],
    },
}


def profile(body: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "quota.koordinator.sh/v1alpha1", "kind": "ElasticQuotaProfile", **body}


async def test_a_profile_is_stored_whole_and_changed_by_a_patch(server: Server) -> None:
    profiles = server.path(KEY, server.quotas)
    body = profile({"metadata": {"name": "gpu-pool"}, "spec": GPU_POOL})
    created = await server.client.call("POST", profiles, body)
    assert created["spec"] == GPU_POOL  # nothing pruned: the schema knows every field
    ratio = {"spec": {"resourceRatio": "0.8"}}
    patched = await server.client.call("PATCH", f"{profiles}/gpu-pool", ratio, content_type=MERGE)
    assert patched["spec"] == {**GPU_POOL, "resourceRatio": "0.8"}
    assert patched["metadata"]["generation"] == 2


async def test_the_schema_s_refusals_are_the_api_server_s_statuses(server: Server) -> None:
    client = server.client
    profiles = server.path(KEY, server.quotas)
    status, body, _ = await client.request(
        "POST", profiles, {"metadata": {"name": "empty"}, "spec": {}}
    )
    assert (status, body["reason"]) == (400, "BadRequest")
    assert "Object 'Kind' is missing" in body["message"]  # a custom resource must say its kind
    status, body, _ = await client.request(
        "POST", profiles, profile({"metadata": {"name": "empty"}, "spec": {}})
    )
    assert status == 422
    assert body["reason"] == "Invalid"
    assert body["message"] == (
        'ElasticQuotaProfile.quota.koordinator.sh "empty" is invalid: '
        "[spec.nodeSelector: Required value, spec.quotaName: Required value]"
    )
    assert body["details"] == {
        "name": "empty",
        "group": "quota.koordinator.sh",
        "kind": "ElasticQuotaProfile",
        "causes": [
            {
                "reason": "FieldValueRequired",
                "message": "Required value",
                "field": "spec.nodeSelector",
            },
            {
                "reason": "FieldValueRequired",
                "message": "Required value",
                "field": "spec.quotaName",
            },
        ],
    }
    # A number where the schema wants a string (kube-openapi's words, in the field error).
    typed = profile({"metadata": {"name": "typed"}, "spec": {"quotaName": 5, "nodeSelector": {}}})
    status, body, _ = await client.request("POST", profiles, typed)
    assert status == 422
    assert body["details"]["causes"] == [
        {
            "reason": "FieldValueTypeInvalid",
            "message": 'Invalid value: "integer": spec.quotaName in body must be of type '
            'string: "integer"',
            "field": "spec.quotaName",
        }
    ]
    # A merge patch that removes a required field is refused the same way.
    good = profile({"metadata": {"name": "good"}, "spec": {"quotaName": "r", "nodeSelector": {}}})
    await client.call("POST", profiles, good)
    status, body, _ = await client.request(
        "PATCH",
        f"{profiles}/good",
        {"spec": {"quotaName": None}},
        content_type=MERGE,
    )
    assert (status, body["message"]) == (
        422,
        'ElasticQuotaProfile.quota.koordinator.sh "good" is invalid: '
        "spec.quotaName: Required value",
    )


async def test_an_object_stored_before_its_schema_said_so_is_let_be(api: ApiServer) -> None:
    """Ratcheting: a profile without quotaName, stored as if before the schema required it
    (only the emulator can store it so), has its labels changed all the same."""
    client = Client(api.url)
    try:
        api.seed(
            {
                "apiVersion": "quota.koordinator.sh/v1alpha1",
                "kind": "ElasticQuotaProfile",
                "metadata": {"name": "old", "namespace": "koordinator-system"},
                "spec": {"nodeSelector": {}},
            }
        )
        labelled = {"metadata": {"labels": {"team": "a"}}}
        await client.call("PATCH", f"{PROFILES}/old", labelled, content_type=MERGE)
        stored = api.get(KEY, "old", "koordinator-system")
        assert stored is not None and stored["metadata"]["labels"] == {"team": "a"}
    finally:
        await client.close()


async def test_a_cluster_without_the_profile_crd_serves_no_profiles() -> None:
    async with ApiServer(Config(profiles=False)) as api:
        client = Client(api.url)
        try:
            status, body, _ = await client.request("GET", PROFILES)
            assert (status, body["reason"]) == (404, "NotFound")
        finally:
            await client.close()
        assert api.get("customresourcedefinitions", KEY) is None
