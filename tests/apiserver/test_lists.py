"""LIST as kube-apiserver serves it: pages on one consistent snapshot, 410 for an expired
continue token, selectors, and the store-wide resourceVersion. The tests taking `server` run on
the emulator and on the real kube-apiserver."""

from __future__ import annotations

import pytest

from tests.apiserver.conftest import MERGE, PODS
from tests.apiserver.servers import Server
from tests.manifests import pod


def names(listed):
    return [item["metadata"]["name"] for item in listed["items"]]


async def test_pages_form_one_snapshot_at_the_first_pages_version(server: Server):
    client, pods, ns = server.client, server.pods, server.apps
    await server.seed(*[pod(f"p{i}", namespace=ns, node=None) for i in range(5)])
    first = await client.call("GET", pods + "?limit=2")
    assert names(first) == ["p0", "p1"]
    assert first["metadata"]["remainingItemCount"] == 3
    snapshot_rv = first["metadata"]["resourceVersion"]
    # Changes after the first page: the rest of the list does not see them.
    await client.call("DELETE", pods + "/p3")
    await client.call("POST", pods, pod("p2a", namespace=ns, node=None))
    changed = await client.call(
        "PATCH", pods + "/p4", {"metadata": {"labels": {"x": "y"}}}, content_type=MERGE
    )
    token = first["metadata"]["continue"]
    second = await client.call("GET", pods + f"?limit=2&continue={token}")
    third = await client.call("GET", pods + f"?limit=2&continue={second['metadata']['continue']}")
    assert names(second) + names(third) == ["p2", "p3", "p4"]
    assert "labels" not in third["items"][-1]["metadata"]  # the label came after the snapshot
    assert second["metadata"]["resourceVersion"] == snapshot_rv
    assert "continue" not in third["metadata"]
    fresh = await client.call("GET", pods)
    assert names(fresh) == ["p0", "p1", "p2", "p2a", "p4"]
    assert int(fresh["metadata"]["resourceVersion"]) >= int(changed["metadata"]["resourceVersion"])


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


async def test_resource_version_0_ignores_the_limit(server: Server):
    await server.seed(*[pod(f"p{i}", namespace=server.apps, node=None) for i in range(3)])
    listed = await server.client.call("GET", server.pods + "?limit=1&resourceVersion=0")
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
async def test_label_selectors(server: Server, selector, expected):
    ns = server.apps
    await server.seed(
        pod("a", namespace=ns, labels={"app": "web"}),
        pod("b", namespace=ns, labels={"app": "web", "tier": "db"}),
        pod("c", namespace=ns, labels={"app": "api"}),
        pod("d", namespace=ns),
    )
    listed = await server.client.call("GET", server.pods + f"?labelSelector={selector}")
    assert names(listed) == expected


async def test_field_selectors_and_cluster_wide_paths(server: Server):
    node = f"n1-{server.apps}"  # a node name no other test's pods are bound to
    await server.seed(
        pod("a", namespace=server.apps, node=node),
        pod("b", namespace=server.apps, node=None),
        pod("c", namespace=server.quotas, node=node, phase="Succeeded"),
    )
    on_n1 = await server.client.call("GET", f"/api/v1/pods?fieldSelector=spec.nodeName={node}")
    assert names(on_n1) == ["a", "c"]
    running = await server.client.call(
        "GET", f"/api/v1/pods?fieldSelector=status.phase!=Succeeded,spec.nodeName=={node}"
    )
    assert names(running) == ["a"]
    status, body, _ = await server.client.request(
        "GET", server.pods + "?fieldSelector=spec.priority=1"
    )
    assert (status, body["message"]) == (400, "field label not supported: spec.priority")


async def test_event_field_selectors(server: Server):
    subject = f"p1-{server.apps}"  # a pod name no other test's events are about
    event = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"generateName": "e-", "namespace": server.apps},
        "involvedObject": {"kind": "Pod", "name": subject, "namespace": server.apps},
        "reason": "Evicted",
    }
    await server.client.call("POST", f"/api/v1/namespaces/{server.apps}/events", event)
    found = await server.client.call(
        "GET", f"/api/v1/events?fieldSelector=involvedObject.name={subject},reason=Evicted"
    )
    assert len(found["items"]) == 1
    none = await server.client.call(
        "GET", f"/api/v1/events?fieldSelector=involvedObject.name={subject}-other"
    )
    assert found["kind"] == "EventList" and none["items"] == []
