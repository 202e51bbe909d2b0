"""The list-then-watch cache: paginated LIST, watch from the list's version, resume after a clean
end, relist (which replaces) after a 410, an ERROR event or a broken connection, bookmarks,
readiness only once every first LIST is applied, and optional kinds the cluster may not serve."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

import pytest
from eq_kit.backoff import Backoff
from eq_kit.caching import NODES, PODS, Caches, Kind, Reflector, reflectors

from tests.apiserver import ApiServer, pod_group_crds
from tests.kit.conftest import Recorder
from tests.manifests import node, pod
from tests.operator.conftest import eventually


def fast() -> Backoff:
    return Backoff(0.01, 0.05)


@contextlib.asynccontextmanager
async def following(*members: Reflector) -> AsyncIterator[Caches]:
    caches = Caches(members)
    caches.start()
    try:
        yield caches
    finally:
        await caches.stop()


@contextlib.asynccontextmanager
async def pod_cache(
    api: ApiServer, http: Any, count: int, **options: Any
) -> AsyncIterator[tuple[Recorder, Reflector]]:
    """`count` pods seeded, a cache of them loaded and its watch open."""
    api.seed(*pods(count))
    sink = Recorder()
    reflector = Reflector(http, PODS, sink, backoff=fast(), **options)
    async with following(reflector):
        await reflector.listed.wait()
        await watching(api)
        yield sink, reflector


def pods(n: int, namespace: str = "apps") -> list[dict[str, Any]]:
    return [pod(f"p{i:04d}", namespace=namespace) for i in range(n)]


async def watching(api: ApiServer, plural: str = "pods", count: int = 1) -> None:
    """Wait until the cache's watches are open on the server."""
    await eventually(lambda: api.watchers(plural) == count, what="the watch to open")


def delete_unseen(api: ApiServer, namespace: str, name: str) -> None:
    """Delete a pod without telling the open watches: what a gap in the stream loses."""
    table = api.storage.tables["pods"]
    watchers, table.watchers = table.watchers, set()
    api.storage.remove(api.catalog.named("pods"), f"{namespace}/{name}")
    table.watchers = watchers


async def test_a_paginated_list_loads_every_object_then_the_watch_follows(api, http):
    api.seed(*pods(1200))
    sink = Recorder()
    reflector = Reflector(http, PODS, sink, page=500, backoff=fast())
    async with following(reflector) as caches:
        await caches.wait_ready()
        assert len(sink.objects) == 1200
        assert api.count("list", "pods") == 3  # 500 + 500 + 200
        api.seed(pod("late", namespace="apps"))
        await eventually(lambda: "apps/late" in sink.objects, what="the watch event")
        assert api.count("list", "pods") == 3


async def test_an_expired_continue_token_gets_one_full_list(api, http):
    api.storage.snapshot_ttl = 0.0  # every continue token has expired when it comes back
    api.seed(*pods(700))
    sink = Recorder()
    async with following(Reflector(http, PODS, sink, backoff=fast())) as caches:
        await caches.wait_ready()
        assert len(sink.objects) == 700
        assert api.count("list", "pods") == 3  # a page, its expired continuation, a full list


async def test_readiness_waits_for_every_kinds_first_list(api, http):
    api.seed(*pods(3), node("n1"))
    api.fault("GET", "nodes", status=500, times=2)  # 2.4 s at least before it is in
    sinks = {PODS: Recorder(), NODES: Recorder()}
    caches = Caches(reflectors(http, sinks, backoff=fast()))
    caches.start()
    try:
        await eventually(lambda: len(sinks[PODS].objects) == 3, what="the pods' list")
        assert not caches.ready and caches.missing() == ["Node"]
        await caches.wait_ready()
        assert caches.ready and caches.missing() == []
        assert set(sinks[NODES].objects) == {"n1"}
    finally:
        await caches.stop()


async def test_a_clean_end_resumes_the_watch_from_the_last_version(api, http):
    api.seed(*pods(3))
    sink = Recorder()
    reflector = Reflector(http, PODS, sink, watch_timeout=(1, 1), backoff=fast())
    async with following(reflector) as caches:
        await caches.wait_ready()
        await eventually(lambda: api.count("watch", "pods") >= 2, what="a second watch")
        api.seed(pod("after", namespace="apps"))
        await eventually(lambda: "apps/after" in sink.objects, what="the resumed watch")
        assert api.count("list", "pods") == 1  # resumed, never relisted
        assert sink.upserts == 4  # nothing delivered twice


async def test_a_410_relists_and_forgets_what_was_deleted_in_the_gap(api, http):
    async with pod_cache(api, http, 3) as (sink, _):
        delete_unseen(api, "apps", "p0001")
        api.compact()
        api.watch_error(410)
        await eventually(lambda: "apps/p0001" not in sink.objects, what="the relist")
        assert sink.deleted == ["apps/p0001"]
        assert set(sink.objects) == {"apps/p0000", "apps/p0002"}
        assert api.count("list", "pods") == 2


async def test_a_broken_connection_relists_after_a_pause(api, http):
    async with pod_cache(api, http, 3) as (sink, _):
        await api.go_down()
        delete_unseen(api, "apps", "p0002")
        api.seed(pod("while-down", namespace="apps"))
        await api.come_up()
        await eventually(
            lambda: set(sink.objects) == {"apps/p0000", "apps/p0001", "apps/while-down"},
            what="the relist after the API came back",
        )
        assert sink.deleted == ["apps/p0002"]
        api.seed(pod("after", namespace="apps"))
        await eventually(lambda: "apps/after" in sink.objects, what="the new watch")


@pytest.mark.parametrize("code", [500, 403])
async def test_any_error_event_relists(api, http, code):
    async with pod_cache(api, http, 2) as (sink, _):
        api.watch_error(code, "injected")
        await eventually(lambda: api.count("list", "pods") == 2, what="the relist")
        api.seed(pod("after", namespace="apps"))
        await eventually(lambda: "apps/after" in sink.objects, what="the new watch")
        assert sink.deleted == []


async def test_watch_events_update_and_delete(api, http):
    async with pod_cache(api, http, 2) as (sink, _):
        resource = api.catalog.named("pods")
        api.storage.remove(resource, "apps/p0000")
        stored = api.get("pods", "p0001", "apps")
        assert stored is not None
        labelled = {**stored, "metadata": {**stored["metadata"], "labels": {"a": "b"}}}
        version = api.storage.put(resource, labelled, type="MODIFIED").obj["metadata"]
        await eventually(
            lambda: sink.objects == {"apps/p0001": version["resourceVersion"]},
            what="the update and the deletion",
        )
        assert sink.deleted == ["apps/p0000"]


async def test_bookmarks_move_the_version_without_events(api, http):
    async with pod_cache(api, http, 1) as (sink, reflector):
        api.seed(node("n1"), node("n2"))  # other kinds move the store's version
        await eventually(
            lambda: reflector.version == str(api.storage.rv), what="a bookmark's version"
        )
        assert sink.upserts == 1 and reflector.events == 0


async def test_one_reflector_per_namespace_replaces_only_its_own(api, http):
    api.seed(*pods(2, "a"), *pods(2, "b"), *pods(1, "c"), node("n1"))
    sinks = {PODS: Recorder(), NODES: Recorder()}
    members = reflectors(http, sinks, ["a", "b"], backoff=fast())
    assert len(members) == 3  # pods in a, pods in b, nodes once
    async with following(*members) as caches:
        await caches.wait_ready()
        assert set(sinks[PODS].objects) == {"a/p0000", "a/p0001", "b/p0000", "b/p0001"}
        await watching(api, count=2)
        delete_unseen(api, "a", "p0000")
        api.watch_error(410)
        await eventually(lambda: "a/p0000" not in sinks[PODS].objects, what="the relist")
        assert sinks[PODS].deleted == ["a/p0000"]


PODGROUPS = Kind("PodGroup", "scheduling.x-k8s.io", "v1alpha1", "podgroups", True, optional=True)
KEY = "podgroups.scheduling.x-k8s.io"  # the emulator's name for it


def pod_group(name: str, namespace: str = "team-b") -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"minMember": 4},
    }


async def test_an_optional_kind_not_served_is_listed_empty_and_followed_once_installed(
    api, http, caplog
):
    caplog.set_level(logging.DEBUG, logger="eq_kit.caching")
    api.seed(*pods(2))
    sinks = {PODS: Recorder(), PODGROUPS: Recorder()}
    members = reflectors(http, sinks, backoff=fast(), absent=fast())
    optional = members[1]
    async with following(*members) as caches:
        await caches.wait_ready()  # readiness does not wait for a kind the cluster lacks
        assert optional.served is False and sinks[PODGROUPS].objects == {}
        await eventually(lambda: api.count("list", KEY) >= 3, what="asked again after its backoff")
        api.serve_crd(pod_group_crds("scheduling.x-k8s.io")[0])
        api.seed(pod_group("train"))
        await eventually(lambda: "team-b/train" in sinks[PODGROUPS].objects, what="its list")
        await watching(api, KEY)
        api.seed(pod_group("tune"))
        await eventually(lambda: "team-b/tune" in sinks[PODGROUPS].objects, what="its watch")
        assert optional.served is True and optional.lists == 1
    said = [(r.levelname, r.getMessage()) for r in caplog.records if "PodGroup" in r.getMessage()]
    assert [level for level, _ in said if level != "DEBUG"] == ["INFO", "INFO", "INFO"], said
    assert said[0][1].startswith(
        "PodGroup is not served (/apis/scheduling.x-k8s.io/v1alpha1/podgroups: 404 "
    )
    assert [text for level, text in said if level == "INFO"][1:] == [
        "PodGroup is served now",
        "listed 1 PodGroup objects",
    ]


async def test_an_optional_kind_no_longer_served_loses_its_objects_quietly(api, http, caplog):
    caplog.set_level(logging.INFO, logger="eq_kit.caching")
    api.serve_crd(pod_group_crds("scheduling.x-k8s.io")[0])
    api.seed(pod_group("train"), pod_group("tune"))
    sink = Recorder()
    reflector = Reflector(http, PODGROUPS, sink, backoff=fast(), absent=fast())
    async with following(reflector):
        await reflector.listed.wait()
        await watching(api, KEY)
        assert set(sink.objects) == {"team-b/train", "team-b/tune"}
        # The CRD deleted: its watches end, and the collection is not found any more.
        api.fault("*", KEY, status=404, seconds=30)
        for watcher in api.storage.tables[KEY].watchers:
            watcher.send(b"", finish=True)
        await eventually(lambda: reflector.served is False, what="the 404 seen")
        assert sink.objects == {} and sorted(sink.deleted) == ["team-b/train", "team-b/tune"]
        assert reflector.listed.is_set()
    assert not [r for r in caplog.records if r.levelname == "WARNING"]


async def test_a_required_kind_not_served_keeps_readiness_waiting(api, http):
    sink = Recorder()
    required = Kind("PodGroup", "scheduling.x-k8s.io", "v1alpha1", "podgroups", True)
    reflector = Reflector(http, required, sink, backoff=fast())
    async with following(reflector) as caches:
        await eventually(lambda: api.count("list", KEY) >= 2, what="two LISTs")
        assert not caches.ready and caches.missing() == ["PodGroup"]
