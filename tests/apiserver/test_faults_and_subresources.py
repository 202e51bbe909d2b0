"""Injected faults, and the eviction and binding subresources (the tests taking `server` run
on the emulator and on the real kube-apiserver)."""

from __future__ import annotations

import time

import aiohttp
import pytest

from tests.apiserver import disruption_budget
from tests.apiserver.conftest import MERGE, PODS
from tests.apiserver.errors import internal
from tests.apiserver.servers import Server
from tests.manifests import pod
from tests.waiting import eventually

EVICTION = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "p"}}


async def test_a_fault_answers_n_times_then_the_server_does(api, client):
    api.seed(pod("p"))
    api.fault("PATCH", "pods", name="p", status=429, times=2, retry_after=3)
    answers = []
    for _ in range(3):
        status, _body, response = await client.request("PATCH", PODS + "/p", {}, content_type=MERGE)
        answers.append((status, response.headers.get("Retry-After")))
    assert answers == [(429, "3"), (429, "3"), (200, None)]
    assert api.count("patch", "pods") == 3


async def test_a_fault_for_a_while_and_one_for_a_subresource_only(api, client):
    api.seed(pod("p"))
    fault = api.fault("GET", "pods", status=503, seconds=60)
    status, _, _ = await client.request("GET", PODS)
    assert status == 503
    fault.seconds, fault._until = None, 0.0  # end it early
    api.fault("PATCH", "pods", subresource="status", status=409)
    assert (await client.request("PATCH", PODS + "/p", {}, content_type=MERGE))[0] == 200
    assert (await client.request("PATCH", PODS + "/p/status", {}, content_type=MERGE))[0] == 409


async def test_a_slow_server_answers_as_usual_only_later(api, client):
    api.seed(pod("p"))
    api.fault("PATCH", "pods", latency=0.2, times=1)
    started = time.monotonic()
    patch = {"metadata": {"labels": {"slow": "yes"}}}
    status, body, _ = await client.request("PATCH", PODS + "/p", patch, content_type=MERGE)
    assert status == 200 and body["metadata"]["labels"]["slow"] == "yes"
    assert time.monotonic() - started >= 0.2


async def test_a_dropped_connection(api, client):
    api.seed(pod("p"))
    # A PATCH: aiohttp retries idempotent requests once on a dropped kept-alive connection.
    api.fault("PATCH", "pods", drop=True)
    with pytest.raises(aiohttp.ServerDisconnectedError):
        await client.request("PATCH", PODS + "/p", {}, content_type=MERGE)
    assert (await client.request("PATCH", PODS + "/p", {}, content_type=MERGE))[0] == 200


async def test_the_server_goes_down_and_comes_back_with_its_state(api, client):
    api.seed(pod("p"))
    async with client.session.get(
        client.url + PODS, params={"watch": "1", "resourceVersion": "0"}
    ) as watch:
        assert b"ADDED" in await watch.content.readline()
        await api.go_down()
        with pytest.raises(aiohttp.ClientError):
            await watch.content.readline()
    with pytest.raises(aiohttp.ClientConnectionError):
        await client.request("GET", PODS + "/p")
    await api.come_up()
    assert (await client.request("GET", PODS + "/p"))[0] == 200


async def test_injected_watch_errors_and_abrupt_closes(api, client):
    params = {"watch": "1", "resourceVersion": str(api.storage.rv)}
    async with client.session.get(client.url + PODS, params=params) as watch:
        await _until_watching(api)
        api.watch_error(410)
        lines = [line async for line in watch.content]
    assert len(lines) == 1 and b'"code":410' in lines[0] and b'"type":"ERROR"' in lines[0]
    async with client.session.get(client.url + PODS, params=params) as watch:
        await _until_watching(api)
        api.close_watches()
        with pytest.raises(aiohttp.ClientPayloadError):
            await watch.content.read()


async def _until_watching(api):
    from tests.operator.conftest import eventually

    await eventually(lambda: api.watchers("pods") == 1, what="the watch to be open")


async def test_eviction_deletes_the_pod_and_answers_201_success(server: Server):
    await server.seed(pod("p", namespace=server.apps, node=None))  # on no node: gone at once
    path = server.pods + "/p/eviction"
    status, body, _ = await server.client.request("POST", path, EVICTION)
    assert (status, body["kind"], body["status"]) == (201, "Status", "Success")
    assert await server.get("pods", "p", server.apps) is None
    status, body, _ = await server.client.request("POST", path, EVICTION)
    assert (status, body["reason"]) == (404, "NotFound")


async def test_an_eviction_hook_refuses_per_pod(api, client):
    api.seed(pod("p"))
    api.evictions = lambda p: disruption_budget("pdb-a", needs=2, has=2)
    status, body, response = await client.request("POST", PODS + "/p/eviction", EVICTION)
    assert (status, body["reason"]) == (429, "TooManyRequests")
    assert body["message"] == "Cannot evict pod as it would violate the pod's disruption budget."
    assert (
        body["details"]["causes"][0]["message"]
        == "The disruption budget pdb-a needs 2 healthy pods and has 2 currently"
    )
    assert "Retry-After" not in response.headers
    api.evictions = lambda p: internal("boom")
    assert (await client.request("POST", PODS + "/p/eviction", EVICTION))[0] == 500
    assert api.get("pods", "p", "apps") is not None


async def test_binding_sets_the_node_once_and_never_for_a_gated_pod(server: Server):
    client, pods = server.client, server.pods
    await server.seed(pod("p", namespace=server.apps, node=None))
    await client.call("POST", pods, pod("g", namespace=server.apps, node=None, gated=True))
    binding = {"metadata": {"name": "p"}, "target": {"kind": "Node", "name": "n1"}}
    status, _, _ = await client.request("POST", pods + "/p/binding", binding)
    bound = await server.get("pods", "p", server.apps)
    assert bound is not None
    assert status == 201 and bound["spec"]["nodeName"] == "n1"
    assert {"type": "PodScheduled", "status": "True"}.items() <= bound["status"]["conditions"][
        -1
    ].items()
    status, body, _ = await client.request("POST", pods + "/p/binding", binding)
    assert status == 409 and body["message"].endswith('pod p is already assigned to node "n1"')
    status, body, _ = await client.request(
        "POST", pods + "/g/binding", {**binding, "metadata": {"name": "g"}}
    )
    assert status == 409 and body["message"] == (
        'Operation cannot be fulfilled on pods/binding "g": '
        "pod g has non-empty .spec.schedulingGates"
    )

    async def gated() -> bool:  # the scheduler's word, written when it sees the pod
        found = await server.get("pods", "g", server.apps)
        conditions = (found or {}).get("status", {}).get("conditions") or []
        return [c.get("reason") for c in conditions] == ["SchedulingGated"]

    await eventually(gated, what="the SchedulingGated condition on g")
