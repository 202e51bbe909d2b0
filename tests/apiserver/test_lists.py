"""LIST as kube-apiserver serves it: pages on one consistent snapshot, 410 for an expired
continue token, selectors, and the store-wide resourceVersion."""

from __future__ import annotations

import pytest

from tests.apiserver.conftest import MERGE, PODS
from tests.manifests import pod


def names(listed):
    return [item["metadata"]["name"] for item in listed["items"]]


async def test_pages_form_one_snapshot_at_the_first_pages_version(api, client):
    api.seed(*[pod(f"p{i}", node=None) for i in range(5)])
    first = await client.call("GET", PODS + "?limit=2")
    assert names(first) == ["p0", "p1"]
    assert first["metadata"]["remainingItemCount"] == 3
    snapshot_rv = first["metadata"]["resourceVersion"]
    # Changes after the first page: the rest of the list does not see them.
    await client.call("DELETE", PODS + "/p3")
    await client.call("POST", PODS, pod("p2a", node=None))
    await client.call(
        "PATCH", PODS + "/p4", {"metadata": {"labels": {"x": "y"}}}, content_type=MERGE
    )
    token = first["metadata"]["continue"]
    second = await client.call("GET", PODS + f"?limit=2&continue={token}")
    third = await client.call("GET", PODS + f"?limit=2&continue={second['metadata']['continue']}")
    assert names(second) + names(third) == ["p2", "p3", "p4"]
    assert "x" not in third["items"][-1]["metadata"]["labels"]
    assert second["metadata"]["resourceVersion"] == snapshot_rv
    assert "continue" not in third["metadata"]
    fresh = await client.call("GET", PODS)
    assert names(fresh) == ["p0", "p1", "p2", "p2a", "p4"]
    assert int(fresh["metadata"]["resourceVersion"]) == api.storage.rv


async def test_an_expired_continue_token_gets_410_with_a_token_for_the_rest(api, client):
    api.seed(*[pod(f"p{i}", node=None) for i in range(3)])
    first = await client.call("GET", PODS + "?limit=1")
    api.compact()
    status, body, _ = await client.request(
        "GET", PODS + f"?limit=1&continue={first['metadata']['continue']}"
    )
    assert status == 410
    assert body["reason"] == "Expired"
    assert body["message"].startswith("The provided continue parameter is too old")
    rest = await client.call("GET", PODS + f"?continue={body['metadata']['continue']}")
    assert names(rest) == ["p1", "p2"]


async def test_resource_version_0_ignores_the_limit(api, client):
    api.seed(*[pod(f"p{i}", node=None) for i in range(3)])
    listed = await client.call("GET", PODS + "?limit=1&resourceVersion=0")
    assert names(listed) == ["p0", "p1", "p2"] and "continue" not in listed["metadata"]


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ("app=web", ["a", "b"]),
        ("app==web,tier!=db", ["a"]),
        ("app in (web,api)", ["a", "b", "c"]),
        ("app notin (web)", ["c", "d"]),
        ("tier", ["b"]),
        ("!tier", ["a", "c", "d"]),
        ("app,app!=api", ["a", "b"]),
    ],
)
async def test_label_selectors(api, client, selector, expected):
    api.seed(
        pod("a", labels={"app": "web"}),
        pod("b", labels={"app": "web", "tier": "db"}),
        pod("c", labels={"app": "api"}),
        pod("d"),
    )
    listed = await client.call("GET", PODS + f"?labelSelector={selector}")
    assert names(listed) == expected


async def test_field_selectors_and_cluster_wide_paths(api, client):
    api.seed(
        pod("a", node="n1"),
        pod("b", node=None),
        pod("c", namespace="other", node="n1", phase="Succeeded"),
    )
    on_n1 = await client.call("GET", "/api/v1/pods?fieldSelector=spec.nodeName=n1")
    assert names(on_n1) == ["a", "c"]
    running = await client.call(
        "GET", "/api/v1/pods?fieldSelector=status.phase!=Succeeded,spec.nodeName==n1"
    )
    assert names(running) == ["a"]
    status, body, _ = await client.request("GET", PODS + "?fieldSelector=spec.priority=1")
    assert (status, body["message"]) == (400, "field label not supported: spec.priority")


async def test_event_field_selectors(api, client):
    event = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"generateName": "e-", "namespace": "apps"},
        "involvedObject": {"kind": "Pod", "name": "p1", "namespace": "apps"},
        "reason": "Evicted",
    }
    await client.call("POST", "/api/v1/namespaces/apps/events", event)
    found = await client.call(
        "GET", "/api/v1/events?fieldSelector=involvedObject.name=p1,reason=Evicted"
    )
    assert len(found["items"]) == 1
    none = await client.call("GET", "/api/v1/events?fieldSelector=involvedObject.name=p2")
    assert found["kind"] == "EventList" and none["items"] == []
