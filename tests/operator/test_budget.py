"""The write budget (`--api-qps`, `--api-burst`) spent on the groups' numbers first, and the
writers without a budget mostly on the groups too.

The operator's modules run in-process (tests/operator/inprocess.py) against the emulated API
server with a budget of 5 writes a second and a burst of 1, on a clock that moves only when the
test moves it: each step of 0.25 s brings exactly one token. Hundreds of pods need their
capacity label; what the emulator received, and in what order, is read from its request counts
between two steps.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

from eq_engine.model import keys

from tests.apiserver import ApiServer
from tests.manifests import node, pod, quota
from tests.operator.inprocess import InProcess, Manual, in_process
from tests.operator.test_accounting import actual_groups, expected
from tests.operator.test_gating import admitted, gated
from tests.operator.test_reclaim import annotation
from tests.waiting import eventually

PODS = 300
STEP = 0.25
"""Seconds of the test's clock that bring one token (5 a second, at most 1 saved)."""


def cluster() -> list[dict[str, Any]]:
    return [
        quota("team", namespace="apps", min={"cpu": 100}, max={"cpu": 400}),
        node("n1", cpu="400"),
        *(pod(f"p{i:03d}", cpu="1") for i in range(PODS)),
    ]


def group_right(api: ApiServer) -> bool:
    return actual_groups(api)["team"] == expected(api)[0]["team"]


def label_writes(api: ApiServer) -> int:
    return api.count("patch", "pods")


def group_writes(api: ApiServer) -> tuple[int, int]:
    """The group's annotation writes and its status writes."""
    return api.count("patch", "elasticquotas"), api.count("patch", "elasticquotas", "status")


class Budget:
    """The operator on `cluster()`, its clock, and one token at a time."""

    def __init__(self, api: ApiServer, op: InProcess, clock: Manual) -> None:
        self.api, self.op, self.clock = api, op, clock

    async def token(self, *, until: Any, what: str) -> None:
        """One more token; then wait until `until` holds."""
        self.clock.now += STEP
        await eventually(until, what=what)

    async def delete(self, name: str) -> None:
        """Delete a pod, and let the operator see it and recompute (without writing: no
        token comes meanwhile)."""
        self.api.storage.remove(self.api.catalog.named("pods"), f"apps/{name}")
        await eventually(
            lambda: f"apps/{name}" not in set(self.op.view.pod_keys()), what="the watch"
        )
        await self.op.loop.step()


@contextlib.asynccontextmanager
async def budget() -> AsyncIterator[Budget]:
    """Every worker waiting for a token, with the group right and its labels pending."""
    api, clock = ApiServer(), Manual()
    api.seed(*cluster())
    async with api, in_process(api, clock=clock, api_qps=5, api_burst=1) as op:
        await op.loop.step()  # the group and every pod wanted; the burst's token goes at once
        state = Budget(api, op, clock)
        await eventually(lambda: sum(group_writes(api)) == 1, what="the burst")
        # At a first install the group's numbers go before any label.
        await state.token(until=lambda: group_right(api), what="the group's status.used")
        assert group_writes(api) == (1, 1) and label_writes(api) == 0
        for written in (1, 2, 3):
            await state.token(until=lambda n=written: label_writes(api) == n, what="a label")
        yield state


async def test_a_group_change_is_written_before_the_labels_queued_ahead_of_it() -> None:
    async with budget() as state:
        api = state.api
        await state.delete("p000")
        assert not group_right(api) and label_writes(api) == 3
        labels = label_writes(api)
        await state.token(until=lambda: group_writes(api)[0] == 2, what="the group's annotations")
        await state.token(until=lambda: group_right(api), what="the group's status.used")
        assert label_writes(api) == labels  # the labels queued before it wait
        pending = [k for k in state.op.view.pod_keys() if state.op.view.held_label(k) is None]
        assert len(pending) == PODS - labels  # p000 was labelled before it went
        await state.token(until=lambda: label_writes(api) == labels + 1, what="the labels")


async def test_a_group_changed_while_it_waits_is_written_once_as_it_is_then() -> None:
    async with budget() as state:
        api = state.api
        before = group_writes(api)
        for i in range(5):
            await state.delete(f"p{i:03d}")
        assert group_writes(api) == before  # no token came: nothing written meanwhile
        await state.token(until=lambda: group_writes(api)[0] > before[0], what="a group write")
        await state.token(until=lambda: group_right(api), what="the group's status.used")
        assert group_writes(api) == (before[0] + 1, before[1] + 1)
        assert actual_groups(api)["team"][keys.USED] == {"cpu": str(PODS - 5)}


async def test_a_burst_of_waiting_pods_holds_neither_the_loop_nor_the_groups() -> None:
    async with budget() as state:
        api, op = state.api, state.op
        for i in range(20):  # a Job of 20 pods that do not fit: each gets an Event
            api.seed(gated(f"big{i:02d}", namespace="apps", cpu="200"))
        await eventually(
            lambda: sum(pod.gated for pod, _, _ in op.view.engine.pods()) == 20, what="the watch"
        )
        await op.loop.step()  # returns with no token come: the Events do not hold it
        assert api.count("create", "events") == 0
        await state.token(
            until=lambda: annotation(api, "team", keys.WAITING) == "20", what="the group's count"
        )
        assert api.count("create", "events") == 0  # the group's numbers went first
        await state.token(until=lambda: group_right(api), what="the group's status.used")
        labels = label_writes(api)
        await state.token(until=lambda: api.count("create", "events") == 1, what="an Event")
        assert label_writes(api) == labels  # Events go before the labels, after the groups


def teams(min_cpu: int, max_cpu: int = 20) -> list[dict[str, Any]]:
    """40 teams of 10 running pods of 1 cpu: each team's pods beyond `min_cpu` over-quota."""
    objects = []
    for team in range(40):
        namespace = f"team-{team:02d}"
        limits = {"min": {"cpu": min_cpu}, "max": {"cpu": max_cpu}}
        objects.append(quota(namespace, namespace=namespace, **limits))
        objects.extend(pod(f"p{i}", namespace=namespace, node="n1", cpu="1") for i in range(10))
    return objects


def teams_right(api: ApiServer) -> bool:
    have, want = actual_groups(api), expected(api)[0]
    ours = {name: fields for name, fields in have.items() if name.startswith("team-")}
    return len(ours) == 40 and all(want[name] == fields for name, fields in ours.items())


def version(body: dict[str, Any]) -> int:
    return int(body["metadata"]["resourceVersion"])


@contextlib.asynccontextmanager
async def slow_server() -> AsyncIterator[tuple[ApiServer, InProcess]]:
    """The teams on a server that answers every write after 20 ms, the rate limit off, and the
    operator's loop running."""
    api = ApiServer()
    api.seed(node("n1", cpu="1000"), *teams(min_cpu=5))
    for resource in ("pods", "elasticquotas"):
        api.fault("patch", resource, latency=0.02, seconds=600)
    async with api, in_process(api) as op:
        op.run()
        yield api, op


async def test_a_new_leader_brings_every_group_up_to_date_before_it_labels() -> None:
    """Until every group has been taken once, every writer takes groups first: on a first
    install the first label is written once most groups are complete (with three writers in
    four on groups from the start, the first label comes with the first groups)."""
    async with slow_server() as (api, _):
        await eventually(lambda: label_writes(api) == 400, timeout=60, what="every label")
        first_label = min(version(p) for p in api.objects("pods") if p["metadata"].get("labels"))
        teams_ = [q for q in api.objects("elasticquotas") if q["metadata"]["name"][:5] == "team-"]
        complete = sum(1 for q in teams_ if version(q) < first_label)  # status.used written last
        assert complete >= 20, complete


async def test_later_three_writers_in_four_take_the_groups_first() -> None:
    """After the first comparison, every team's min raised and max lowered (3 of its pods
    become in-quota, its runtime moves): the 40 groups are right again while most of the 120
    labels wait (with one writer in four on groups, all 120 went first)."""
    async with slow_server() as (api, _):
        await eventually(lambda: label_writes(api) == 400, timeout=60, what="every label")
        await eventually(lambda: teams_right(api), timeout=60, what="every group right")
        labels = label_writes(api)
        resource = api.catalog.named("elasticquotas")
        for raised in teams(min_cpu=8, max_cpu=9)[::11]:  # the quotas
            name, namespace = raised["metadata"]["name"], raised["metadata"]["namespace"]
            stored_ = api.get("elasticquotas", name, namespace)
            assert stored_ is not None
            api.storage.put(resource, {**stored_, "spec": raised["spec"]}, type="MODIFIED")
        await eventually(lambda: not teams_right(api), what="the change seen")
        await eventually(lambda: teams_right(api), timeout=60, what="every group right again")
        assert label_writes(api) - labels < 70, label_writes(api) - labels
        await eventually(lambda: label_writes(api) == labels + 120, timeout=60, what="labels")


async def test_the_lifts_waiting_for_the_budget_go_most_important_first() -> None:
    """A pod admitted a round later, but more important, is lifted before the pods of another
    group that wait for the budget (Kueue's scheduler, too, takes the most important of every
    queue's heads first)."""
    api, clock = ApiServer(), Manual()
    limits = {"min": {"cpu": 10}, "max": {"cpu": 10}}
    api.seed(
        quota("low", namespace="low", **limits),
        quota("high", namespace="high", **limits),
        node("n1", cpu="100"),
        *(gated(f"l{i}", namespace="low", priority=1) for i in range(4)),
    )
    async with api, in_process(api, clock=clock, api_qps=5, api_burst=1) as op:
        await op.loop.step()  # the 4 admitted: l0 lifted with the burst's token, l1 in flight
        await eventually(lambda: admitted(api, "low") == ["l0"], what="l0 lifted")
        api.seed(gated("h0", namespace="high", priority=100))
        await eventually(lambda: "high/h0" in set(op.view.pod_keys()), what="the watch")
        await op.loop.step()  # admitted too: after l2 and l3 in time, before them in order
        state = Budget(api, op, clock)
        await state.token(until=lambda: admitted(api, "low") == ["l0", "l1"], what="l1 lifted")
        await state.token(until=lambda: admitted(api, "high") == ["h0"], what="h0 lifted")
        assert admitted(api, "low") == ["l0", "l1"]
        for lifted in (["l0", "l1", "l2"], ["l0", "l1", "l2", "l3"]):
            await state.token(until=lambda a=lifted: admitted(api, "low") == a, what=str(lifted))
