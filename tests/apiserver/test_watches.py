"""WATCH as kube-apiserver serves it: from a version without replay, synthetic ADDED from "0",
410 as an ERROR event, bookmarks, timeouts, and selectors seen on both sides of a change. The
tests taking `server` run on the emulator and on the real kube-apiserver."""

from __future__ import annotations

from tests.apiserver.conftest import MERGE, PODS
from tests.apiserver.servers import Server
from tests.manifests import pod


def summary(events):
    return [(e["type"], e["object"]["metadata"].get("name")) for e in events]


async def test_a_watch_from_a_version_gets_only_later_events(server: Server):
    client, pods = server.client, server.pods
    await server.seed(pod("old", namespace=server.apps), pod("older", namespace=server.apps))
    start = (await client.call("GET", pods))["metadata"]["resourceVersion"]
    await client.call("POST", pods, pod("new", namespace=server.apps))
    await client.call(
        "PATCH", pods + "/old", {"metadata": {"labels": {"a": "b"}}}, content_type=MERGE
    )
    await client.call("DELETE", pods + "/older?gracePeriodSeconds=0")  # no kubelet to wait for
    events = await client.watch(pods, resourceVersion=start, timeoutSeconds="1")
    assert summary(events) == [
        ("ADDED", "new"),
        ("MODIFIED", "old"),
        ("MODIFIED", "older"),  # a pod is marked deleted first, even at grace 0
        ("DELETED", "older"),
    ]
    versions = [int(e["object"]["metadata"]["resourceVersion"]) for e in events]
    assert versions == sorted(versions) and versions[0] > int(start)


async def test_a_watch_without_a_version_starts_with_the_current_objects(server: Server):
    await server.seed(pod("a", namespace=server.apps), pod("b", namespace=server.apps))
    for rv in ("0", ""):
        events = await server.client.watch(server.pods, resourceVersion=rv, timeoutSeconds="1")
        assert summary(events) == [("ADDED", "a"), ("ADDED", "b")]


async def test_a_version_older_than_the_window_is_an_error_event_with_410(api, client):
    api.seed(pod("a"))
    start = api.storage.rv
    for i in range(60):  # the fixture's window holds 50 events
        api.seed(pod(f"p{i}"))
    async with client.session.get(
        client.url + PODS, params={"watch": "1", "resourceVersion": str(start)}
    ) as response:
        assert response.status == 200
        lines = [line async for line in response.content]
    (line,) = lines
    assert b'"type":"ERROR"' in line and b'"code":410' in line and b'"reason":"Expired"' in line
    assert b"too old resource version: %d" % start in line


async def test_compaction_on_demand_expires_resuming_watches(api, client):
    api.seed(pod("a"))
    start = api.storage.rv
    api.seed(pod("b"))
    api.compact()
    events = await client.watch(PODS, resourceVersion=str(start))
    assert [e["object"]["code"] for e in events] == [410]


async def test_bookmarks_carry_only_the_resource_version(api, client):
    events = await client.watch(
        PODS, resourceVersion=str(api.storage.rv), allowWatchBookmarks="true", timeoutSeconds="0.35"
    )
    assert events and {e["type"] for e in events} == {"BOOKMARK"}
    assert events[0]["object"] == {
        "kind": "Pod",
        "apiVersion": "v1",
        "metadata": {"resourceVersion": str(api.storage.rv)},
    }


async def test_no_bookmarks_unless_allowed(server: Server):
    events = await server.client.watch(
        server.pods, resourceVersion=str(await server.version()), timeoutSeconds="1"
    )
    assert events == []


async def test_label_selector_watch_sees_leaving_as_deleted_and_entering_as_added(server: Server):
    client = server.client
    await server.seed(pod("p", namespace=server.apps, labels={"app": "web"}))
    start = str(await server.version())
    path = server.pods + "/p"
    left = await client.call(
        "PATCH", path, {"metadata": {"labels": {"app": "db"}}}, content_type=MERGE
    )
    await client.call("PATCH", path, {"metadata": {"labels": {"x": "1"}}}, content_type=MERGE)
    await client.call("PATCH", path, {"metadata": {"labels": {"app": "web"}}}, content_type=MERGE)
    events = await client.watch(
        server.pods, resourceVersion=start, labelSelector="app=web", timeoutSeconds="1"
    )
    assert [e["type"] for e in events] == ["DELETED", "ADDED"]
    deleted = events[0]["object"]
    # The last state it matched in, stamped with the version of the change that made it leave.
    assert deleted["metadata"]["labels"] == {"app": "web"}
    assert deleted["metadata"]["resourceVersion"] == left["metadata"]["resourceVersion"]


async def test_field_selector_watch(server: Server):
    node = f"n1-{server.apps}"  # a node name no other test's pods are bound to
    await server.seed(
        pod("p", namespace=server.apps, node=None), pod("q", namespace=server.apps, node=None)
    )
    start = str(await server.version())
    binding = {"metadata": {"name": "p"}, "target": {"kind": "Node", "name": node}}
    await server.client.call("POST", server.pods + "/p/binding", binding)
    events = await server.client.watch(
        "/api/v1/pods",
        resourceVersion=start,
        fieldSelector=f"spec.nodeName={node}",
        timeoutSeconds="1",
    )
    assert summary(events) == [("ADDED", "p")]


async def test_a_live_watch_streams_changes_as_they_happen(server: Server):
    client = server.client
    start = str(await server.version())
    async with client.watching(server.pods, watch="TRUE", resourceVersion=start) as stream:
        await client.call("POST", server.pods, pod("live", namespace=server.apps))
        line = await stream.readline()
        assert b'"type":"ADDED"' in line and b'"name":"live"' in line
