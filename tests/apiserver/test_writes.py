"""Writes as kube-apiserver applies them: status subresource separation, the three patch
types, optimistic concurrency, no-op writes, finalizers, graceful pod deletion. The tests taking
`server` run on the emulator and on the real kube-apiserver."""

from __future__ import annotations

import pytest

from tests.apiserver import ApiServer, Config
from tests.apiserver.client import Client
from tests.apiserver.conftest import MERGE, PODS, QUOTAS
from tests.apiserver.servers import Server
from tests.manifests import pod, quota

JSON_PATCH = "application/json-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"


async def test_create_fills_system_fields_and_generates_names(server: Server):
    client, quotas = server.client, server.quota_path
    before = await server.version()
    created = await client.call(
        "POST", quotas, {**quota("x"), "metadata": {"generateName": "team-"}}
    )
    metadata = created["metadata"]
    assert metadata["name"].startswith("team-") and len(metadata["name"]) == len("team-") + 5
    assert metadata["namespace"] == server.quotas and metadata["generation"] == 1
    assert metadata["uid"] and metadata["creationTimestamp"]
    assert int(metadata["resourceVersion"]) > before
    status, body, _ = await client.request(
        "POST", quotas, {**quota("y", namespace=server.quotas), "status": {"used": {"cpu": "1"}}}
    )
    assert status == 201 and "status" not in body  # the status subresource drops it on create
    status, body, _ = await client.request("POST", quotas, quota("y", namespace=server.quotas))
    assert (status, body["reason"]) == (409, "AlreadyExists")
    assert body["message"] == 'elasticquotas.scheduling.sigs.k8s.io "y" already exists'


async def test_main_resource_ignores_status_and_status_ignores_the_rest(server: Server):
    client = server.client
    await server.seed({**quota("q", namespace=server.quotas), "status": {"used": {"cpu": "1"}}})
    path = server.quota_path + "/q"
    changed = await client.call(
        "PATCH",
        path,
        {"spec": {"max": {"cpu": "9"}}, "status": {"used": {"cpu": "5"}}},
        content_type=MERGE,
    )
    assert changed["status"] == {"used": {"cpu": "1"}} and changed["spec"]["max"] == {"cpu": "9"}
    assert changed["metadata"]["generation"] == 2
    changed = await client.call(
        "PATCH",
        path + "/status",
        {"metadata": {"labels": {"x": "y"}}, "spec": {"max": {}}, "status": {"used": {"cpu": "7"}}},
        content_type=MERGE,
    )
    assert changed["status"] == {"used": {"cpu": "7"}} and changed["spec"]["max"] == {"cpu": "9"}
    assert "x" not in changed["metadata"].get("labels", {})
    assert changed["metadata"]["generation"] == 2


async def test_without_a_status_subresource_status_is_an_ordinary_field():
    async with ApiServer(Config(quota_status_subresource=False)) as api:
        client = Client(api.url)
        try:
            api.seed(quota("q"))
            status, _, _ = await client.request(
                "PATCH", QUOTAS + "/q/status", {}, content_type=MERGE
            )
            assert status == 404
            changed = await client.call(
                "PATCH", QUOTAS + "/q", {"status": {"used": {"cpu": "2"}}}, content_type=MERGE
            )
            assert changed["status"] == {"used": {"cpu": "2"}}
            served = await client.call("GET", "/apis/scheduling.sigs.k8s.io/v1alpha1")
            assert [r["name"] for r in served["resources"]] == ["elasticquotas"]
        finally:
            await client.close()


@pytest.mark.parametrize(
    ("content_type", "patch", "expected"),
    [
        (MERGE, {"metadata": {"labels": {"a": None, "b": "2"}}}, {"b": "2"}),
        (JSON_PATCH, [{"op": "replace", "path": "/metadata/labels/a", "value": "3"}], {"a": "3"}),
        (STRATEGIC, {"metadata": {"labels": {"b": "2"}}}, {"a": "1", "b": "2"}),
    ],
)
async def test_patch_types(server: Server, content_type, patch, expected):
    await server.seed(pod("p", namespace=server.apps, labels={"a": "1"}))
    changed = await server.client.call(
        "PATCH", server.pods + "/p", patch, content_type=content_type
    )
    assert changed["metadata"]["labels"] == expected


async def test_strategic_merge_merges_lists_by_key_and_is_refused_for_custom_resources(
    server: Server,
):
    client, pods, quotas = server.client, server.pods, server.quota_path
    await server.seed(pod("p", namespace=server.apps, cpu="1"))
    conditions = {"status": {"conditions": [{"type": "Ready", "status": "True"}]}}
    await client.call("PATCH", pods + "/p/status", conditions, content_type=STRATEGIC)
    more = {
        "status": {
            "conditions": [{"type": "Ready", "status": "False"}, {"type": "X", "status": "True"}]
        }
    }
    changed = await client.call("PATCH", pods + "/p/status", more, content_type=STRATEGIC)
    assert [(c["type"], c["status"]) for c in changed["status"]["conditions"]] == [
        ("Ready", "False"),
        ("X", "True"),
    ]
    await server.seed(quota("q", namespace=server.quotas))
    status, body, _ = await client.request("PATCH", quotas + "/q", {}, content_type=STRATEGIC)
    assert (status, body["reason"]) == (415, "UnsupportedMediaType")


async def test_json_patch_test_failure_is_422(server: Server):
    await server.seed(pod("p", namespace=server.apps))
    patch = [{"op": "test", "path": "/metadata/resourceVersion", "value": "1"}]
    status, body, _ = await server.client.request(
        "PATCH", server.pods + "/p", patch, content_type=JSON_PATCH
    )
    assert (status, body["reason"]) == (422, "Invalid")


async def test_stale_versions_conflict_and_missing_objects_are_404(server: Server):
    client, quotas = server.client, server.quota_path
    (stored,) = await server.seed(quota("q", namespace=server.quotas))
    await client.call("PATCH", quotas + "/q", {"spec": {"min": {"cpu": "1"}}}, content_type=MERGE)
    stale = {**stored, "spec": {"min": {"cpu": "2"}}}
    status, body, _ = await client.request("PUT", quotas + "/q", stale)
    assert (status, body["reason"]) == (409, "Conflict")
    assert body["message"] == (
        'Operation cannot be fulfilled on elasticquotas.scheduling.sigs.k8s.io "q": the object has '
        "been modified; please apply your changes to the latest version and try again"
    )
    rv = {"metadata": {"resourceVersion": stored["metadata"]["resourceVersion"]}}
    status, _, _ = await client.request("PATCH", quotas + "/q", rv, content_type=MERGE)
    assert status == 409
    no_version = {
        **stored,
        "metadata": {k: v for k, v in stored["metadata"].items() if k != "resourceVersion"},
    }
    status, body, _ = await client.request("PUT", quotas + "/q", no_version)
    assert status == 422 and "must be specified for an update" in body["message"]
    status, body, _ = await client.request("PATCH", quotas + "/nope", {}, content_type=MERGE)
    assert (status, body["reason"], body["code"]) == (404, "NotFound", 404)
    current = await client.call("GET", quotas + "/q")
    replaced = await client.call("PUT", quotas + "/q", {**current, "spec": {"min": {"cpu": "3"}}})
    assert replaced["spec"]["min"] == {"cpu": "3"}


async def test_a_write_that_changes_nothing_keeps_the_version(server: Server):
    (stored,) = await server.seed(pod("p", namespace=server.apps, labels={"a": "1"}))
    same = await server.client.call(
        "PATCH", server.pods + "/p", {"metadata": {"labels": {"a": "1"}}}, content_type=MERGE
    )
    assert same["metadata"]["resourceVersion"] == stored["metadata"]["resourceVersion"]


async def test_finalizers_hold_a_deleted_object_until_removed(server: Server):
    client, quotas = server.client, server.quota_path
    held = quota("q", namespace=server.quotas)
    await server.seed({**held, "metadata": {**held["metadata"], "finalizers": ["x/y"]}})
    start = str(await server.version())
    deleted = await client.call("DELETE", quotas + "/q?propagationPolicy=Background")
    assert deleted["metadata"]["deletionTimestamp"]
    assert await server.get("elasticquotas", "q", server.quotas)
    status, body, _ = await client.request(
        "PATCH", quotas + "/q", {"metadata": {"finalizers": ["x/y", "z"]}}, content_type=MERGE
    )
    assert status == 422 and "no new finalizers can be added" in body["message"]
    await client.call(
        "PATCH", quotas + "/q", {"metadata": {"finalizers": None}}, content_type=MERGE
    )
    assert await server.get("elasticquotas", "q", server.quotas) is None
    events = await client.watch(quotas, resourceVersion=start, timeoutSeconds="1")
    assert [e["type"] for e in events] == ["MODIFIED", "DELETED"]


async def test_pods_are_deleted_at_once_by_default(api, client):
    api.seed(pod("p"))
    deleted = await client.call("DELETE", PODS + "/p", {"gracePeriodSeconds": 30})
    assert deleted["kind"] == "Pod" and api.get("pods", "p", "apps") is None


async def test_graceful_pod_deletion_waits_for_the_kubelet():
    async with ApiServer(Config(graceful_pods=True)) as api:
        client = Client(api.url)
        try:
            api.seed(pod("bound"), pod("pending", node=None))
            marked = await client.call("DELETE", PODS + "/bound?gracePeriodSeconds=20")
            assert marked["metadata"]["deletionGracePeriodSeconds"] == 20
            assert api.get("pods", "bound", "apps") is not None
            await client.call("DELETE", PODS + "/pending")
            assert api.get("pods", "pending", "apps") is None  # not on a node: at once
            api.finish_pod_deletion("apps", "bound")
            assert api.get("pods", "bound", "apps") is None
        finally:
            await client.close()
