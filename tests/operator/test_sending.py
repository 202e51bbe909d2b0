"""The operator's requests through one module (eq_operator/sending.py): each outcome of a request
read as one value, against the emulated API server with its faults injected (tests/apiserver/
faults.py), and the write budget shared by rank, the Lease's requests and every read outside
it; then what each caller does with those outcomes, seen on the API objects, the Events and the
metrics."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

import pytest
from eq_kit.caching import QUOTAS
from eq_kit.kube import MERGE, Http
from eq_kit.throttling import TokenBucket
from eq_operator.metrics import Metrics
from eq_operator.sending import (
    Conflict,
    Done,
    ErrorAnswer,
    Failed,
    Gone,
    Rank,
    Refused,
    Sender,
    Unanswered,
)
from eq_operator.settings import ReclaimSettings
from eq_operator.view import Ref
from kubernetes_asyncio import client

from tests.apiserver import ApiServer
from tests.manifests import node, pod, quota
from tests.operator.inprocess import Manual, in_process
from tests.operator.test_faults import team
from tests.operator.test_leadership import candidate
from tests.operator.test_reclaim_faults import borrowing, events
from tests.waiting import consistently, eventually

CAPACITY = "quota.scheduling.koordinator.sh/capacity"


def pod_path(name: str, namespace: str = "apps") -> str:
    return f"/api/v1/namespaces/{namespace}/pods/{name}"


def labelled(name: str, label: str = "in-quota") -> dict[str, Any]:
    return {"metadata": {"labels": {CAPACITY: label}}}


def label(api: ApiServer, name: str) -> str | None:
    found = api.get("pods", name, "apps") or {}
    return (found.get("metadata", {}).get("labels") or {}).get(CAPACITY)


def requests(metrics: Metrics, verb: str, code: int) -> float:
    """`elastic_quota_api_requests_total{verb, code}`."""
    labels = {"verb": verb, "code": str(code)}
    return metrics.registry.get_sample_value("elastic_quota_api_requests_total", labels) or 0.0


@contextlib.asynccontextmanager
async def sender(
    api: ApiServer, budget: TokenBucket | None = None
) -> AsyncIterator[tuple[Sender, Metrics]]:
    """A sender to the emulator, its requests counted in the metrics as the operator's are."""
    configuration = client.Configuration(host=api.url)
    configuration.api_key = {"authorization": "Bearer admin"}
    metrics = Metrics()
    async with client.ApiClient(configuration) as session:
        yield Sender(Http(session, observe=metrics.observe_request), budget), metrics


# ------------------------------------------------------------------ one request, one outcome


@pytest.mark.parametrize(
    ("fault", "outcome", "code"),
    [
        ({"status": 404}, Gone, 404),
        ({"status": 409}, Conflict, 409),
        ({"status": 429, "retry_after": 3}, Refused, 429),
        ({"status": 422}, Failed, 422),
        ({"status": 500, "retry_after": 2}, Failed, 500),
        ({"status": 503}, Failed, 503),
    ],
    ids=["404", "409", "429", "422", "500", "503"],
)
async def test_each_error_answer_is_one_outcome_with_the_servers_message(api, fault, outcome, code):
    api.seed(pod("p0", cpu="1"))
    async with sender(api) as (sending, metrics):
        api.fault("PATCH", "pods", name="p0", message="said the server", **fault)
        sent = await sending.send("PATCH", pod_path("p0"), labelled("p0"), content_type=MERGE)
        assert type(sent) is outcome and isinstance(sent, ErrorAnswer)
        assert sent.answered and sent.error.status == code
        assert sent.why == f"{code} said the server"  # as the logs say it
        assert sent.retry_after == float(fault.get("retry_after", 0))
        assert requests(metrics, "PATCH", code) == 1
        assert label(api, "p0") is None  # nothing written

        sent = await sending.send("PATCH", pod_path("p0"), labelled("p0"), content_type=MERGE)
        assert isinstance(sent, Done)  # the fault spent: the same request goes through
        assert sent.body["metadata"]["labels"][CAPACITY] == "in-quota"
        assert label(api, "p0") == "in-quota" and requests(metrics, "PATCH", 200) == 1


async def test_no_answer_is_unanswered_with_the_transport_error(api):
    api.seed(pod("p0", cpu="1"))
    async with sender(api) as (sending, metrics):
        api.fault("PATCH", "pods", drop=True)
        sent = await sending.send("PATCH", pod_path("p0"), labelled("p0"), content_type=MERGE)
        assert isinstance(sent, Unanswered) and not sent.answered
        assert sent.retry_after == 0.0 and sent.why == repr(sent.error)
        assert requests(metrics, "PATCH", 0) == 1  # counted as no answer


async def test_the_servers_own_answers_are_read_the_same_way(api):
    """Not injected: a pod that does not exist, a group created twice."""
    api.seed(pod("p0", cpu="1"))
    group = quota("team", namespace="apps", min={"cpu": 1})
    async with sender(api) as (sending, _):
        missing = await sending.send("PATCH", pod_path("nobody"), labelled("x"), content_type=MERGE)
        assert isinstance(missing, Gone) and "not found" in missing.why
        path = QUOTAS.url("apps")
        assert isinstance(await sending.send("POST", path, group), Done)
        again = await sending.send("POST", path, group)
        assert isinstance(again, Conflict) and "already exists" in again.why


@pytest.mark.parametrize(
    ("fault", "outcome"),
    [
        (None, Done),
        ({"status": 404}, Gone),
        ({"status": 500}, Failed),
        ({"drop": True, "times": 3}, Unanswered),  # aiohttp sends a GET twice on a drop
    ],
    ids=["200", "404", "500", "dropped"],
)
async def test_a_read_is_read_the_same_way(api, fault, outcome):
    api.seed(pod("p0", cpu="1"))
    async with sender(api) as (sending, _):
        if fault is not None:
            api.fault("GET", "pods", name="p0", **fault)
        sent = await sending.read(pod_path("p0"))
        assert isinstance(sent, outcome)
        if isinstance(sent, Done):
            assert sent.body["metadata"]["name"] == "p0"


# ------------------------------------------------------------------ the budget


async def test_writes_wait_for_the_budget_by_rank_and_reads_and_the_lease_never_do(api):
    """One token a clock step: the loop's write takes it before the label that waited first;
    meanwhile a read and the Lease's sender (no budget) go at once."""
    api.seed(*(pod(f"p{i}", cpu="1") for i in range(4)))
    clock = Manual()
    budget = TokenBucket(100, 1, clock=clock)
    async with sender(api, budget) as (paced, _), sender(api) as (lease, _):
        sent = await paced.send("PATCH", pod_path("p0"), labelled("p0"), content_type=MERGE)
        assert isinstance(sent, Done)
        patched = api.count("patch", "pods")

        def write(name: str, rank: Rank) -> asyncio.Task[Any]:
            body = labelled(name)
            return asyncio.create_task(
                paced.send("PATCH", pod_path(name), body, rank=rank, content_type=MERGE)
            )

        label_write = write("p1", Rank.LABELS)
        await eventually(lambda: budget.waiting == 1, what="the label to wait")
        loop_write = write("p2", Rank.LOOP)
        await eventually(lambda: budget.waiting == 2, what="the loop's write to wait")
        assert isinstance(await paced.read(pod_path("p0")), Done)
        sent = await lease.send("PATCH", pod_path("p3"), labelled("p3"), content_type=MERGE)
        assert isinstance(sent, Done) and label(api, "p3") == "in-quota"
        await consistently(
            lambda: api.count("patch", "pods") == patched + 1, seconds=0.2, what="no token"
        )

        clock.now += 1.0  # one token (the burst is one)
        await eventually(lambda: label(api, "p2") == "in-quota", what="the loop's write")
        assert label(api, "p1") is None and not label_write.done()
        clock.now += 1.0
        assert isinstance(await label_write, Done) and isinstance(await loop_write, Done)
        assert label(api, "p1") == "in-quota"


# ------------------------------------------------------------------ what the callers make of it


def writes(metrics: Metrics, kind: str, result: str) -> float:
    labels = {"kind": kind, "result": result}
    return metrics.registry.get_sample_value("elastic_quota_api_writes_total", labels) or 0.0


async def test_a_label_refused_with_retry_after_is_written_again_no_sooner(api):
    """429 (API Priority and Fairness) with `Retry-After: 3`: the label stays pending for 3 s,
    longer than the writer's own first pause (0.25 s)."""
    api.seed(*team())
    clock = Manual()
    async with in_process(api, clock=clock) as op:
        api.fault("PATCH", "pods", name="p0", status=429, retry_after=3)
        op.run()
        # The three writes run side by side: p0's refusal may come after the other two labels.
        await op.converged(
            lambda: (
                None not in (label(api, "p1"), label(api, "p2"))
                and writes(op.metrics, "Pod", "error") == 1
            ),
            "the other labels and p0's refusal",
        )
        assert label(api, "p0") is None
        assert requests(op.metrics, "PATCH", 429) == 1
        clock.now += 2.0
        patched = api.count("patch", "pods")
        await consistently(
            lambda: api.count("patch", "pods") == patched, seconds=0.3, what="no try before 3 s"
        )
        clock.now += 1.5
        await op.converged(lambda: label(api, "p0") == "in-quota", "p0 labelled after 3 s")
        assert writes(op.metrics, "Pod", "ok") == 3 and writes(op.metrics, "Pod", "error") == 1


def evictions(metrics: Metrics, result: str) -> float:
    labels = {"group": "borrower", "tree": "", "result": result}
    return metrics.registry.get_sample_value("elastic_quota_evictions_total", labels) or 0.0


@pytest.mark.parametrize(
    ("fault", "reason", "result"),
    [
        (None, "Reclaimed", "evicted"),
        ({"status": 404}, "Reclaimed", "gone"),
        ({"status": 429, "retry_after": 5}, "ReclaimBlocked", "blocked"),
        ({"status": 500}, "ReclaimFailed", "failed"),
        ({"drop": True}, "ReclaimFailed", "failed"),
    ],
    ids=["201", "404", "429", "500", "dropped"],
)
async def test_an_evictions_outcome_is_its_event_and_its_count(api, fault, reason, result):
    api.seed(*borrowing())
    async with in_process(api, reclaim=ReclaimSettings(delay=0, max_evictions=1)) as op:
        if fault is not None:
            api.fault("POST", "pods", subresource="eviction", **fault)
        await op.loop.step()
        await op.reclaimer.round(refresh=op.loop.recompute)
        await op.events.sent()
        assert evictions(op.metrics, result) == 1
        assert events(api)["b4", reason] == 1 and events(api)["borrower", reason] == 1
        found = api.get("pods", "b4", "borrower")
        evicted = found is None or "deletionTimestamp" in found["metadata"]
        assert evicted == (result == "evicted")


async def test_an_event_that_cannot_be_created_is_logged_and_dropped(api, caplog):
    api.seed(*team())
    async with in_process(api) as op:
        ref = Ref("v1", "Pod", "apps", "p0", "uid-p0")
        api.fault("POST", "events", status=500)
        op.events.record(ref, type="Normal", reason="First", message="one")
        op.events.record(ref, type="Normal", reason="Second", message="two")
        await op.events.sent()
        assert {e["reason"] for e in api.objects("events")} == {"Second"}
        assert "cannot record an Event on Pod apps/p0: ApiError('500 injected fault')" in (
            caplog.text
        )


async def test_an_event_expired_meanwhile_starts_a_new_series(api):
    """Its count's PATCH answers 404: the Event is created again, as a new series."""
    api.seed(*team())
    async with in_process(api) as op:
        ref = Ref("v1", "Pod", "apps", "p0", "uid-p0")
        op.events.record(ref, type="Warning", reason="Odd", message="once")
        await op.events.sent()
        (first,) = api.objects("events")
        api.storage.remove(api.catalog.named("events"), f"apps/{first['metadata']['name']}")
        op.events.record(ref, type="Warning", reason="Odd", message="twice")
        await op.events.sent()
        (again,) = api.objects("events")
        assert again["metadata"]["name"] != first["metadata"]["name"]
        assert again["count"] == 1 and again["message"] == "twice"
        assert api.count("patch", "events") == 1 and api.count("create", "events") == 2


BUILTINS = {"koordinator-root-quota", "koordinator-system-quota", "koordinator-default-quota"}


def builtins(api: ApiServer) -> set[str]:
    return {q["metadata"]["name"] for q in api.objects("elasticquotas")} & BUILTINS


@pytest.mark.parametrize("status", [409, 500])
async def test_a_built_in_group_refused_is_created_after_all(api, caplog, status):
    """409: created meanwhile as far as the operator can tell, no warning, and created when the
    watch does not show it; 500: a warning, and tried again after a backoff."""
    api.seed(node("n1", cpu="4"))
    caplog.set_level(logging.INFO, logger="eq_operator")
    async with in_process(api) as op:
        api.fault("POST", "elasticquotas", status=status)
        op.run()
        await op.converged(lambda: builtins(api) == BUILTINS, "the built-in groups", timeout=20)
        assert api.count("create", "elasticquotas") == 4
        warned = "could not create the built-in group" in caplog.text
        assert warned == (status == 500)


async def test_a_lease_written_first_by_another_replica_is_no_warning(api, caplog):
    """409 on the Lease: another replica won this round; nothing is logged, and the next try
    (the Lease is free) takes it."""
    api.fault("POST", "leases", status=409)
    changes: list[bool] = []
    async with candidate(api, changes, Manual()) as leadership:
        await eventually(lambda: leadership.leading, what="leading after the conflict")
    assert api.count("create", "leases") == 2
    assert "the Lease" not in caplog.text
