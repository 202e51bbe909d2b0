"""The operator under API faults: nothing lost, nothing stuck.

Each test runs the operator's modules in-process (tests/operator/inprocess.py) against the
emulated API server with a fault injected, then waits for every group and pod to hold the right
values again, and reports how long that took after the fault ended and how many requests the
fault cost (run with `-s` to see the figures).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
from eq_engine.model import keys
from eq_kit.backoff import LAST_RETRY

from tests.apiserver import ApiServer, Config
from tests.kube import Client
from tests.manifests import node, pod, quota
from tests.operator.inprocess import InProcess, Manual, in_process
from tests.waiting import consistently

CPU = {"cpu": 10}


def team() -> list[dict[str, Any]]:
    return [
        quota("team", namespace="apps", min={"cpu": 4}, max=CPU),
        quota("other", namespace="other", min={"cpu": 4}, max=CPU),
        node("n1", cpu="20"),
        *(pod(f"p{i}", cpu="1") for i in range(3)),
    ]


def annotation(api: ApiServer, name: str, key: str = keys.USED) -> Any:
    found = api.get("elasticquotas", name, _namespace(name))
    text = ((found or {}).get("metadata", {}).get("annotations") or {}).get(key)
    return None if text is None else json.loads(text)


def status_used(api: ApiServer, name: str) -> Any:
    found = api.get("elasticquotas", name, _namespace(name))
    return ((found or {}).get("status") or {}).get("used")


def _namespace(name: str) -> str:
    return "apps" if name == "team" else name


def holds(api: ApiServer, name: str, used: dict[str, str]) -> bool:
    return annotation(api, name) == used and status_used(api, name) == used


def _label(api: ApiServer, name: str) -> str | None:
    found = api.get("pods", name, "apps") or {}
    return (found.get("metadata", {}).get("labels") or {}).get(keys.CAPACITY)


def labelled(api: ApiServer) -> bool:
    return all((p["metadata"].get("labels") or {}).get(keys.CAPACITY) for p in api.objects("pods"))


@contextlib.asynccontextmanager
async def settled(api: ApiServer) -> AsyncIterator[InProcess]:
    """The operator running on `team()`, its first writes done."""
    api.seed(*team())
    async with in_process(api) as op:
        op.run()
        await op.converged(lambda: holds(api, "team", {"cpu": "3"}), "the first write")
        yield op


def report(fault: str, seconds: float, requests: int) -> None:
    print(f"\n{fault}: converged {seconds:.2f}s after the fault ended, {requests} requests")


FAULT = 1.6
"""Seconds of a fault: longer than the four attempts writes once had (1.4 s), and ended before
the attempt 1.75 s after the first (0.25 s doubling): the test waits out no more backoff."""


@pytest.mark.parametrize(
    "fault",
    [{"status": 500}, {"status": 409}, {"drop": True}],
    ids=["500", "409", "dropped-connections"],
)
async def test_writes_refused_for_seconds_are_written_once_the_api_takes_them(api, fault):
    """A fault longer than the old four attempts (1.4 s): the writes stay pending."""
    async with settled(api) as op:
        before = op.requests()
        api.fault("PATCH", "elasticquotas", seconds=FAULT, **fault)
        api.fault("PATCH", "pods", seconds=FAULT, **fault)
        ends = time.monotonic() + FAULT
        api.seed(pod("p3", cpu="1"), pod("p4", cpu="1"))
        await op.converged(
            lambda: holds(api, "team", {"cpu": "5"}) and labelled(api), "convergence"
        )
        seconds = time.monotonic() - ends
        report(f"PATCH {fault} for {FAULT} s", seconds, op.requests() - before)
        assert seconds < 6.0


async def test_writes_pending_while_the_api_server_is_away_are_written_when_it_is_back(api):
    async with settled(api) as op:
        before = op.requests()
        api.fault("PATCH", "elasticquotas", drop=True, times=100)  # in flight as it goes
        api.seed(pod("p3", cpu="1"))
        await op.converged(lambda: bool(op.writer.groups), "a pending write")
        await api.go_down()
        api.faults.clear()
        time_down = time.monotonic()
        await op.converged(lambda: time.monotonic() - time_down > 3, "three seconds away")
        await api.come_up()
        seconds = await op.converged(
            lambda: holds(api, "team", {"cpu": "4"}) and labelled(api), "convergence"
        )
        report("API server away for 3 s", seconds, op.requests() - before)
        assert seconds < 10.0


async def test_pods_deleted_while_the_watch_was_away_are_forgotten_after_a_relist(api):
    """The watch resumes from a compacted version: 410, a new LIST replaces the pods."""
    async with settled(api) as op:
        before = op.requests()
        await api.go_down()
        api.storage.remove(api.catalog.named("pods"), "apps/p0")
        api.compact()
        await api.come_up()
        seconds = await op.converged(lambda: holds(api, "team", {"cpu": "2"}), "convergence")
        report("410 relist, a pod deleted in the gap", seconds, op.requests() - before)


async def test_a_watch_error_other_than_410_leads_to_a_relist(api):
    async with settled(api) as op:
        before = op.requests()
        api.watch_error(500, "etcdserver: request timed out")
        api.seed(pod("p3", cpu="1"))
        seconds = await op.converged(lambda: holds(api, "team", {"cpu": "4"}), "convergence")
        report("watch ERROR 500", seconds, op.requests() - before)
        assert all(task.done() is False for task in op.tasks)


async def test_a_status_404_of_a_deleted_group_does_not_stop_status_writes(api):
    """Gone is told from 'no status subresource' by discovery, never latched."""
    async with settled(api) as op:
        before = op.requests()
        api.fault("PATCH", "elasticquotas", subresource="status", name="other", status=404)
        api.seed(pod("o1", namespace="other", cpu="1"))
        await op.converged(lambda: annotation(api, "other") == {"cpu": "1"}, "the 404")
        api.seed(pod("p3", cpu="1"))
        seconds = await op.converged(lambda: holds(api, "team", {"cpu": "4"}), "convergence")
        report("status 404 once", seconds, op.requests() - before)


async def test_status_goes_on_the_object_where_the_crd_has_no_status_subresource():
    """Koordinator's CRD has no status subresource (PATCH .../status answers 404 there):
    status.used goes on the object, the first write and every one after it (the 404 is not
    taken for a deleted group). tests/apiserver/test_operator.py runs the process so too."""
    async with ApiServer(Config(quota_status_subresource=False)) as api:
        api.seed(*team())
        async with in_process(api) as op:
            op.run()
            await op.converged(lambda: holds(api, "team", {"cpu": "3"}), "the first write")
            api.seed(pod("p3", cpu="1"))
            await op.converged(lambda: holds(api, "team", {"cpu": "4"}), "the next write")


async def test_a_resource_a_group_no_longer_has_leaves_its_used_maps(api):
    """Merge patches of owned maps remove the keys no longer wanted."""
    api.seed(
        quota(
            "team", namespace="apps", min={"cpu": 4, "memory": "4Gi"}, max=CPU | {"memory": "8Gi"}
        ),
        node("n1", cpu="20", memory="64Gi"),
        pod("p0", cpu="1", memory="1Gi"),
    )
    both = {"cpu": "1", "memory": "1Gi"}
    async with in_process(api) as op:
        op.run()
        await op.converged(lambda: holds(api, "team", both), "the first write")
        client = Client(api)
        try:
            team_quota = api.get("elasticquotas", "team", "apps")
            assert team_quota is not None
            spec = {"min": {"cpu": "4", "memory": None}, "max": {"cpu": "10", "memory": None}}
            await client.patch(team_quota, {"spec": spec})
        finally:
            await client.close()
        await op.converged(lambda: holds(api, "team", {"cpu": "1"}), "memory to leave")


async def test_an_answer_the_client_models_would_refuse_does_not_stop_a_write_round(api):
    """A pod status without `imageID` (as some runtimes leave it) failed kubernetes-asyncio's
    V1ContainerStatus model, and with it the whole round."""
    odd = pod("odd", cpu="1")
    odd["status"]["containerStatuses"] = [
        {"name": "main", "ready": True, "restartCount": 0, "image": "busybox"}
    ]
    api.seed(*team(), odd)
    async with in_process(api) as op:
        await op.loop.step()  # raises nothing
        await op.writer.settled()
        assert labelled(api) and holds(api, "team", {"cpu": "4"})


async def test_a_bug_with_one_object_is_logged_and_the_other_writes_go_on(api, caplog):
    """Writes run in the background: an unexpected error with one object must neither pass
    unseen nor hold up the objects after it."""
    api.seed(*team())
    async with in_process(api) as op:
        engine = op.view.engine
        label = engine.capacity_label

        def fails_for_p0(key: str) -> str | None:
            if key.endswith("/p0"):
                raise RuntimeError("a bug")
            return label(key)

        engine.capacity_label = fails_for_p0  # type: ignore[method-assign]
        op.run()
        others = ("p1", "p2")
        await op.converged(
            lambda: all(_label(api, name) for name in others), "the other pods labelled"
        )
        assert _label(api, "p0") is None
        assert "writing Pod apps/p0 failed" in caplog.text and "a bug" in caplog.text


async def test_a_label_the_server_does_not_keep_is_tried_again_after_a_pause(api):
    """Like a mutating webhook that takes the label off: each try is answered without it. The
    pod backs off as after a failure instead of being written again at once, again and again."""
    api.seed(*team())
    mutate = api.admission.mutate

    async def strip_our_label(request: Any) -> list[str]:
        warnings = await mutate(request)
        if request.resource.plural == "pods" and request.obj:
            (request.obj["metadata"].get("labels") or {}).pop(keys.CAPACITY, None)
        return warnings

    api.admission.mutate = strip_our_label  # type: ignore[method-assign]
    clock = Manual()
    async with in_process(api, clock=clock) as op:
        op.run()
        pods = len(api.objects("pods"))
        await op.converged(lambda: api.count("patch", "pods") >= pods, "a try for each pod")
        await consistently(
            lambda: api.count("patch", "pods") == pods, seconds=1, what="no try before the pause"
        )
        clock.now += LAST_RETRY
        await op.converged(lambda: api.count("patch", "pods") >= 2 * pods, "a try after it")


async def test_a_write_that_hangs_holds_up_no_other_write(api):
    """Like a slow mutating webhook on one pod: its write hangs, the other workers go on with
    what is wanted meanwhile, and the hung write lands when it is answered."""
    api.seed(*team())
    mutate = api.admission.mutate
    answer = asyncio.Event()

    async def slow_for_p0(request: Any) -> list[str]:
        if request.resource.plural == "pods" and request.name == "p0":
            await answer.wait()
        return await mutate(request)

    api.admission.mutate = slow_for_p0  # type: ignore[method-assign]
    async with in_process(api) as op:
        op.run()
        await op.converged(lambda: all(_label(api, n) for n in ("p1", "p2")), "p1, p2 labelled")
        api.seed(pod("p3", cpu="1"))  # wanted while p0's write still hangs
        await op.converged(lambda: _label(api, "p3") is not None, "p3 labelled meanwhile")
        await op.converged(lambda: holds(api, "team", {"cpu": "4"}), "the group written too")
        assert _label(api, "p0") is None
        answer.set()
        await op.converged(lambda: labelled(api), "p0 labelled once answered")
