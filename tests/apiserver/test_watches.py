"""WATCH as kube-apiserver serves it: from a version without replay, synthetic ADDED from "0",
410 as an ERROR event, bookmarks, timeouts, and selectors seen on both sides of a change."""

from __future__ import annotations

from tests.apiserver.conftest import MERGE, PODS
from tests.manifests import pod


def summary(events):
    return [(e["type"], e["object"]["metadata"].get("name")) for e in events]


async def test_a_watch_from_a_version_gets_only_later_events(api, client):
    api.seed(pod("old"), pod("older"))
    start = (await client.call("GET", PODS))["metadata"]["resourceVersion"]
    await client.call("POST", PODS, pod("new"))
    await client.call(
        "PATCH", PODS + "/old", {"metadata": {"labels": {"a": "b"}}}, content_type=MERGE
    )
    await client.call("DELETE", PODS + "/older")
    events = await client.watch(PODS, resourceVersion=start, timeoutSeconds="0.3")
    assert summary(events) == [("ADDED", "new"), ("MODIFIED", "old"), ("DELETED", "older")]
    versions = [int(e["object"]["metadata"]["resourceVersion"]) for e in events]
    assert versions == sorted(versions) and versions[0] > int(start)


async def test_a_watch_without_a_version_starts_with_the_current_objects(api, client):
    api.seed(pod("a"), pod("b"))
    for rv in ("0", ""):
        events = await client.watch(PODS, resourceVersion=rv, timeoutSeconds="0.2")
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


async def test_no_bookmarks_unless_allowed(api, client):
    events = await client.watch(PODS, resourceVersion=str(api.storage.rv), timeoutSeconds="0.3")
    assert events == []


async def test_label_selector_watch_sees_leaving_as_deleted_and_entering_as_added(api, client):
    api.seed(pod("p", labels={"app": "web"}))
    start = str(api.storage.rv)
    path = PODS + "/p"
    await client.call("PATCH", path, {"metadata": {"labels": {"app": "db"}}}, content_type=MERGE)
    await client.call("PATCH", path, {"metadata": {"labels": {"x": "1"}}}, content_type=MERGE)
    await client.call("PATCH", path, {"metadata": {"labels": {"app": "web"}}}, content_type=MERGE)
    events = await client.watch(
        PODS, resourceVersion=start, labelSelector="app=web", timeoutSeconds="0.3"
    )
    assert [e["type"] for e in events] == ["DELETED", "ADDED"]
    left = events[0]["object"]
    # The previous state, stamped with the version of the change that made it leave.
    assert left["metadata"]["labels"] == {"app": "web"}
    assert int(left["metadata"]["resourceVersion"]) == int(start) + 1


async def test_field_selector_watch(api, client):
    api.seed(pod("p", node=None), pod("q", node=None))
    start = str(api.storage.rv)
    binding = {"metadata": {"name": "p"}, "target": {"kind": "Node", "name": "n1"}}
    await client.call("POST", PODS + "/p/binding", binding)
    events = await client.watch(
        "/api/v1/pods",
        resourceVersion=start,
        fieldSelector="spec.nodeName=n1",
        timeoutSeconds="0.3",
    )
    assert summary(events) == [("ADDED", "p")]


async def test_a_live_watch_streams_changes_as_they_happen(api, client):
    async with client.session.get(
        client.url + PODS, params={"watch": "TRUE", "resourceVersion": str(api.storage.rv)}
    ) as response:
        await client.call("POST", PODS, pod("live"))
        line = await response.content.readline()
        assert b'"type":"ADDED"' in line and b'"name":"live"' in line
