"""Koordinator's ElasticQuotaProfile, whose CRD the chart installs with the ElasticQuota's, served
from the start as a real API server serves it: discovery and the short name `eqp`, the default
columns (NAME, AGE) for a CRD that declares none, `kubectl apply`, and its schema's validation,
which refuses a profile without `spec.quotaName` or `spec.nodeSelector` with the API server's
message (on the emulator and on the real kube-apiserver)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from tests.apiserver import ApiServer, Config
from tests.apiserver.client import Client
from tests.apiserver.servers import Server
from tests.kubectl import Kubectl, rows

KEY = "elasticquotaprofiles.quota.koordinator.sh"
PROFILES = "/apis/quota.koordinator.sh/v1alpha1/namespaces/koordinator-system/elasticquotaprofiles"
GPU_POOL = """apiVersion: quota.koordinator.sh/v1alpha1
kind: ElasticQuotaProfile
metadata: {name: gpu-pool, namespace: koordinator-system}
spec:
  quotaName: gpu-root
  quotaLabels: {quota.scheduling.koordinator.sh/is-parent: "true"}
  resourceRatio: "0.9"
  nodeSelector:
    matchLabels: {pool: gpu}
    matchExpressions: [{key: node-role, operator: NotIn, values: [infra]}]
"""
NO_POOL = """apiVersion: quota.koordinator.sh/v1alpha1
kind: ElasticQuotaProfile
metadata: {name: no-pool, namespace: koordinator-system}
spec:
  quotaLabels: {team: a}
"""


async def test_a_profile_is_applied_and_read_back_with_kubectl(tmp_path: Path) -> None:
    async with ApiServer() as api:
        kubectl = Kubectl(api, tmp_path)
        served = rows(
            (await kubectl.run("kubectl api-resources --api-group quota.koordinator.sh")).out
        )
        assert served == [
            {
                "NAME": "elasticquotaprofiles",
                "SHORTNAMES": "eqp",
                "APIVERSION": "quota.koordinator.sh/v1alpha1",
                "NAMESPACED": "true",
                "KIND": "ElasticQuotaProfile",
            }
        ]
        (tmp_path / "profile.yaml").write_text(GPU_POOL)
        applied = await kubectl.run(f"kubectl apply -f {tmp_path / 'profile.yaml'}")
        assert applied.out == "elasticquotaprofile.quota.koordinator.sh/gpu-pool created\n"

        listed = await kubectl.run("kubectl get eqp -n koordinator-system")
        assert listed.out.splitlines()[0].split() == ["NAME", "AGE"]
        assert [r["NAME"] for r in rows(listed.out)] == ["gpu-pool"]
        everywhere = rows((await kubectl.run("kubectl get eqp -A")).out)
        assert [(r["NAMESPACE"], r["NAME"]) for r in everywhere] == [
            ("koordinator-system", "gpu-pool")
        ]
        as_json = await kubectl.run("kubectl get elasticquotaprofiles -A -o json")
        (item,) = orjson.loads(as_json.out)["items"]
        assert (item["apiVersion"], item["kind"]) == (
            "quota.koordinator.sh/v1alpha1",
            "ElasticQuotaProfile",
        )
        assert item["spec"] == {
            "quotaName": "gpu-root",
            "quotaLabels": {"quota.scheduling.koordinator.sh/is-parent": "true"},
            "resourceRatio": "0.9",
            "nodeSelector": {
                "matchLabels": {"pool": "gpu"},
                "matchExpressions": [
                    {"key": "node-role", "operator": "NotIn", "values": ["infra"]}
                ],
            },
        }

        # Applied again with another ratio: a change of the stored object.
        (tmp_path / "profile.yaml").write_text(GPU_POOL.replace('"0.9"', '"0.8"'))
        again = await kubectl.run(f"kubectl apply -f {tmp_path / 'profile.yaml'}")
        assert again.out == "elasticquotaprofile.quota.koordinator.sh/gpu-pool configured\n"
        stored = api.get(KEY, "gpu-pool", "koordinator-system")
        assert stored is not None and stored["spec"]["resourceRatio"] == "0.8"
        assert stored["metadata"]["generation"] == 2


async def test_a_profile_without_quota_name_or_node_selector_is_refused_by_the_schema(
    tmp_path: Path,
) -> None:
    async with ApiServer() as api:
        kubectl = Kubectl(api, tmp_path)
        (tmp_path / "no-pool.yaml").write_text(NO_POOL)
        refused = await kubectl.run(f"kubectl apply -f {tmp_path / 'no-pool.yaml'}", ok=False)
        assert refused.code == 1
        assert refused.err == (
            'The ElasticQuotaProfile "no-pool" is invalid: \n'
            "* spec.nodeSelector: Required value\n"
            "* spec.quotaName: Required value\n"
        )
        (tmp_path / "no-selector.yaml").write_text(
            NO_POOL.replace("quotaLabels: {team: a}", "quotaName: a")
        )
        refused = await kubectl.run(f"kubectl create -f {tmp_path / 'no-selector.yaml'}", ok=False)
        assert (refused.code, refused.err) == (
            1,
            'The ElasticQuotaProfile "no-pool" is invalid: spec.nodeSelector: Required value\n',
        )
        assert api.objects(KEY) == []


def profile(body: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "quota.koordinator.sh/v1alpha1", "kind": "ElasticQuotaProfile", **body}


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
        content_type="application/merge-patch+json",
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
        await client.call(
            "PATCH", f"{PROFILES}/old", labelled, content_type="application/merge-patch+json"
        )
        stored = api.get(KEY, "old", "koordinator-system")
        assert stored is not None and stored["metadata"]["labels"] == {"team": "a"}
    finally:
        await client.close()


async def test_a_cluster_without_the_profile_crd_serves_no_profiles(tmp_path: Path) -> None:
    async with ApiServer(Config(profiles=False)) as api:
        kubectl = Kubectl(api, tmp_path)
        missing = await kubectl.run("kubectl get eqp -A", ok=False)
        assert missing.code == 1
        assert 'the server doesn\'t have a resource type "eqp"' in missing.err
