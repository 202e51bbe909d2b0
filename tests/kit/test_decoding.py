"""A kind decoded into a schema's fields: what the sink gets from the LIST and from the watch,
an object off the schema given whole (in a page and in an event), and the watch's ERROR events
still read whole."""

from __future__ import annotations

import contextlib
import logging
from typing import Any, TypedDict

import orjson
import pytest
from eq_kit.caching import NODES, PODS, Caches, reflectors
from eq_kit.decoding import Decoding, fields
from eq_kit.kube import MERGE

from tests.apiserver import ApiServer
from tests.kit.conftest import Recorder
from tests.kit.test_caching import fast, following, watching
from tests.manifests import node, pod
from tests.operator.conftest import eventually


class _Meta(TypedDict, total=False):
    name: str
    namespace: str
    resourceVersion: str
    labels: dict[str, str]


class _Spec(TypedDict, total=False):
    priority: int


class _Pod(TypedDict, total=False):
    metadata: _Meta
    spec: _Spec


class Keeper(Recorder):
    """A Recorder that also keeps each object as it was delivered."""

    def __init__(self) -> None:
        super().__init__()
        self.bodies: dict[str, Any] = {}

    def upsert(self, key: str, obj: Any) -> None:
        super().upsert(key, obj)
        self.bodies[key] = obj


def trimmed(api: ApiServer, name: str, priority: int = 0) -> dict[str, Any]:
    """The stored pod as the schema keeps it."""
    stored = api.get("pods", name, "apps")
    assert stored is not None
    meta = stored["metadata"]
    # (A pod without labels is stored without the key, as the real server stores it.)
    kept = {k: meta[k] for k in ("name", "namespace", "resourceVersion", "labels") if k in meta}
    return {"metadata": kept, "spec": {"priority": priority}}


def follow(http: Any, sink: Keeper) -> contextlib.AbstractAsyncContextManager[Caches]:
    """Pods decoded into `_Pod` into `sink`, and nodes whole."""
    sinks = {PODS: sink, NODES: Recorder()}
    return following(*reflectors(http, sinks, schemas={PODS.name: _Pod}, backoff=fast()))


async def test_a_schema_keeps_only_its_fields_from_the_list_and_the_watch(api, http):
    api.seed(pod("listed", labels={"app": "a"}, priority=5))
    sink = Keeper()
    async with follow(http, sink) as caches:
        await caches.wait_ready()
        assert sink.bodies == {"apps/listed": trimmed(api, "listed", 5)}
        await watching(api)
        api.seed(pod("watched", labels={"app": "b"}))
        await eventually(lambda: "apps/watched" in sink.bodies, what="the watch event")
        assert sink.bodies["apps/watched"] == trimmed(api, "watched")


async def test_an_object_off_the_schema_is_delivered_whole(api, http):
    odd = pod("odd-listed")
    odd["spec"]["priority"] = "high"
    api.seed(odd, pod("even"))
    sink = Keeper()
    async with follow(http, sink) as caches:
        await caches.wait_ready()
        # its page decoded whole: both pods have all their fields
        assert sink.bodies["apps/odd-listed"]["spec"]["priority"] == "high"
        assert sink.bodies["apps/odd-listed"]["spec"]["containers"]
        assert sink.bodies["apps/even"]["spec"]["containers"]
        await watching(api)
        late = pod("odd-watched")
        late["spec"]["priority"] = "high"
        api.seed(late, pod("even-watched"))
        await eventually(lambda: "apps/even-watched" in sink.bodies, what="the watch events")
        assert sink.bodies["apps/odd-watched"]["spec"]["containers"]
        assert sink.bodies["apps/even-watched"] == trimmed(api, "even-watched")


async def test_error_events_are_read_whole_and_relist(api, http, caplog):
    caplog.set_level(logging.INFO, logger="eq_kit.caching")
    api.seed(pod("p0"), node("n1"))
    sink = Keeper()
    async with follow(http, sink) as caches:
        await caches.wait_ready()
        await watching(api, count=1)
        await watching(api, "nodes")
        api.watch_error(410)
        await eventually(lambda: api.count("list", "pods") == 2, what="the relist")
        assert sink.deleted == []
    # the Status's code, reason and message, which the schema does not name
    assert "watching Pod: ERROR event 410 Expired: too old resource version" in caplog.text


def test_bad_json_raises_as_without_a_schema():
    with pytest.raises(orjson.JSONDecodeError):
        Decoding(_Pod).page(b'{"items": [')
    with pytest.raises(orjson.JSONDecodeError):
        Decoding(_Pod).event(b'{"type": "ADDED", "object": ')


async def test_a_writes_answer_is_decoded_into_the_readers_fields_or_whole_off_the_schema(
    api, http
):
    odd = pod("odd")
    odd["spec"]["priority"] = "high"
    api.seed(pod("even", priority=3), odd)
    patch = {"metadata": {"labels": {"written": "yes"}}}
    answers = [
        await http.send(
            "PATCH",
            f"/api/v1/namespaces/apps/pods/{name}",
            patch,
            content_type=MERGE,
            decode=fields(_Pod),
        )
        for name in ("even", "odd")
    ]
    assert answers[0] == trimmed(api, "even", 3)
    assert answers[0]["metadata"]["labels"]["written"] == "yes"
    assert answers[1] == api.get("pods", "odd", "apps")  # whole: its reader judges it
