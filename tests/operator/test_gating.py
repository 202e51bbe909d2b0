"""Quota-gated scheduling end to end: the real operator lifts the admission gate of pods that
fit their group's runtime, most important first, never beyond it, and says why others wait."""

from __future__ import annotations

import asyncio
from typing import Any

from eq_engine.model import keys

from tests.kube import PODS, store, stored
from tests.manifests import node, pod, quota
from tests.operator.conftest import eventually, start_operator
from tests.operator.test_reclaim import Evictions, annotation, borrowing, events
from tests.waiting import consistently


def gated(name: str, namespace: str = "team", *, cpu: str = "1", **kwargs: Any) -> dict[str, Any]:
    """A new pod as the mutating webhook lets it in: pending, behind the admission gate."""
    return pod(name, namespace=namespace, node=None, gated=True, cpu=cpu, **kwargs)


def pods_of(api: Any, namespace: str) -> list[dict[str, Any]]:
    return [p for p in stored(api, PODS) if p["metadata"]["namespace"] == namespace]


def admitted(api: Any, namespace: str) -> list[str]:
    """Pods of `namespace` without the gate that are still running or about to."""
    return sorted(
        p["metadata"]["name"]
        for p in pods_of(api, namespace)
        if not p["spec"].get("schedulingGates")
        and p["status"].get("phase") not in ("Succeeded", "Failed")
    )


def waiting(api: Any, namespace: str) -> list[str]:
    return sorted(
        p["metadata"]["name"] for p in pods_of(api, namespace) if p["spec"].get("schedulingGates")
    )


async def test_pods_wait_beyond_the_runtime_and_go_most_important_first(api, client, tmp_path):
    team = quota("team", namespace="team", min={"cpu": 2}, max={"cpu": 2})
    # All five wait before the operator starts: its first decision sees them together.
    waiting_pods = [gated(f"p{i}", priority=priority) for i, priority in enumerate([1, 5, 3, 4, 2])]
    store(api, team, node("n1", cpu="100"), *waiting_pods)
    operator = await start_operator(tmp_path, api)
    try:
        await eventually(lambda: admitted(api, "team") == ["p1", "p3"], what="p1 and p3 admitted")
        await eventually(
            lambda: annotation(api, "team", keys.WAITING) == "3", what="3 waiting on the quota"
        )

        def messages() -> dict[str, str]:
            waiting = events(api, "WaitingForQuota")
            return {e["involvedObject"]["name"]: e["message"] for e in waiting}

        await eventually(lambda: set(messages()) == {"p0", "p2", "p4"}, what="3 Events")
        # about the pod as `kubectl describe pod` finds them: by its uid too
        uids = {p["metadata"]["name"]: p["metadata"]["uid"] for p in stored(api, PODS)}
        about = {
            e["involvedObject"]["name"]: e["involvedObject"]["uid"]
            for e in events(api, "WaitingForQuota")
        }
        assert about == {name: uids[name] for name in ("p0", "p2", "p4")}
        assert (
            messages()["p2"]
            == "waiting for quota: team runtime cpu 2, used or admitted 2, this pod 1"
        )
        status, text = await operator.get("/metrics")
        assert status == 200
        assert (
            'elastic_quota_group_waiting_pods{group="team",namespace="team",'
            'parent="koordinator-root-quota",tree=""} 3.0'
        ) in text
        assert "elastic_quota_gate_wait_seconds_count 2.0" in text  # p1 and p3 were let in

        # p1 finishes: the next most important (p2, priority 3) goes.
        await client.patch(gated("p1"), {"status": {"phase": "Succeeded"}}, subresource="status")
        await eventually(lambda: admitted(api, "team") == ["p2", "p3"], what="p2 admitted")
        # The group's max grows: the other two go, and nobody waits any more.
        await client.patch(team, {"spec": {"max": {"cpu": "4"}, "min": {"cpu": "4"}}})
        await eventually(lambda: waiting(api, "team") == [], what="everybody admitted")
        await eventually(
            lambda: annotation(api, "team", keys.WAITING) is None, what="the count removed"
        )
    finally:
        await operator.stop()


async def test_many_rapid_pods_never_admit_more_than_the_runtime(api, client, tmp_path):
    store(
        api, quota("team", namespace="team", min={"cpu": 5}, max={"cpu": 5}), node("n1", cpu="100")
    )
    operator = await start_operator(tmp_path, api)
    try:
        seen: list[int] = []

        async def watch_admissions() -> None:
            while True:
                seen.append(len(admitted(api, "team")))
                await asyncio.sleep(0.01)

        watcher = asyncio.create_task(watch_admissions())
        await asyncio.gather(*(client.create(gated(f"p{i:02}", cpu="500m")) for i in range(40)))
        await eventually(lambda: len(admitted(api, "team")) == 10, what="10 of 500m admitted")
        # the operator has decided on all 40: the other 30 wait
        await eventually(lambda: annotation(api, "team", keys.WAITING) == "30", what="30 waiting")
        watcher.cancel()
        # Never more than the runtime at any look (the last look may come before the tenth).
        assert max(seen) <= 10 and len(admitted(api, "team")) == 10
        assert len(waiting(api, "team")) == 30
    finally:
        await operator.stop()


async def test_recreated_evicted_pods_wait_instead_of_being_evicted_again(api, client, tmp_path):
    store(api, *borrowing())
    evictions = Evictions(api, client)
    operator = await start_operator(tmp_path, api, "--reclaim-delay", "0.5")
    try:
        # The lender comes back with three 2-cpu pods: its runtime is 6, the borrower's 4.
        for i in range(3):
            await client.create(gated(f"l{i}", "lender", cpu="2"))
        await eventually(lambda: admitted(api, "lender") == ["l0", "l1", "l2"], what="lender in")
        await eventually(lambda: len(evictions.names) == 3, what="three evictions")
        assert evictions.names == ["b4", "b3", "b2"]
        # Their ReplicaSet recreates the evicted pods; the webhook gates them.
        for name in evictions.names:
            await client.create(gated(f"{name}-again", "borrower", cpu="2"))
        await eventually(
            lambda: annotation(api, "borrower", keys.WAITING) == "3", what="the three waiting"
        )
        # for two reclaim delays they keep waiting, and nothing is evicted a second time
        await consistently(
            lambda: (
                waiting(api, "borrower") == ["b2-again", "b3-again", "b4-again"]
                and evictions.names == ["b4", "b3", "b2"]
            ),
            seconds=1.0,
            what="waiting, no second eviction",
        )
    finally:
        await operator.stop()


async def test_an_ungated_pod_that_never_schedules_does_not_hold_the_budget(api, client, tmp_path):
    """Created before the webhook (or while it was down), it waits for a volume for ever: the
    gated pods behind it are admitted all the same, since the operator did not admit it."""
    team = quota("team", namespace="team", min={"cpu": 2}, max={"cpu": 2})
    stuck = pod("stuck", namespace="team", node=None, cpu="2")  # pending, no gate
    store(api, team, stuck, node("n1", cpu="100"))
    operator = await start_operator(tmp_path, api)
    try:
        await client.create(gated("next"))
        await eventually(
            lambda: admitted(api, "team") == ["next", "stuck"], what="the gated pod admitted"
        )
    finally:
        await operator.stop()


async def test_an_admitted_pod_holds_the_budget_only_for_the_admission_hold(api, client, tmp_path):
    team = quota("team", namespace="team", min={"cpu": 2}, max={"cpu": 2})
    store(api, team, node("n1", cpu="100"))
    # A hold of 4 s: the second pod must be judged while the first one's hold lasts, by an
    # operator on the real clock that a loaded machine may stall for a second or two.
    operator = await start_operator(tmp_path, api, "--admission-hold", "4")
    try:
        await client.create(gated("first", cpu="2"))
        await eventually(lambda: admitted(api, "team") == ["first"], what="the first admitted")
        await client.create(gated("second", cpu="2"))  # nothing binds "first": its hold ends
        await eventually(lambda: waiting(api, "team") == ["second"], what="the second waiting")
        held = (
            "waiting for quota: team runtime cpu 2, used or admitted 2, this pod 2; "
            "admitted, not bound yet: team/first"
        )
        await eventually(
            lambda: [e["message"] for e in events(api, "WaitingForQuota")] == [held],
            what="the Event naming the pod that holds the budget",
        )
        await eventually(
            lambda: admitted(api, "team") == ["first", "second"],
            what="the second admitted once the first's hold ran out",
        )
    finally:
        await operator.stop()
