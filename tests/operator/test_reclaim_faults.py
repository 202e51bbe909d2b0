"""Reclaim when evictions are refused or fail, and when the watch moves while an eviction is
awaited: only over-quota pods, every attempt counted, a refused pod retried with backoff, one
Event per pod and reason, no round lost to an interleaving.

In-process, on a manual clock (one reclaim round per simulated second); evictions go to the
emulated API server, whose eviction hook refuses them.
"""

from __future__ import annotations

import collections
from typing import Any

import pytest
from eq_engine import EngineConfig, QuotaEngine
from eq_operator.evicting import Eviction, Outcome
from eq_operator.settings import ReclaimSettings
from eq_operator.view import ClusterView, Ref
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.apiserver import ApiServer, disruption_budget
from tests.apiserver.errors import internal
from tests.engine.test_properties import clusters
from tests.manifests import node, pod, quota
from tests.operator.inprocess import Manual, StubCluster, in_process, reclaimer_of

CPU = {"cpu": 10}


def borrowing() -> list[dict[str, Any]]:
    """The borrower runs five 2-cpu pods, b0 most important; its min (4) covers b0 and b1."""
    return [
        quota("lender", namespace="lender", min={"cpu": 6}, max=CPU),
        quota("borrower", namespace="borrower", min={"cpu": 4}, max=CPU),
        *(pod(f"b{i}", namespace="borrower", cpu="2", priority=10 - i) for i in range(5)),
        pod("l0", namespace="lender", cpu="6"),  # the lender takes its min back
        node("n1", cpu="10"),
    ]


def events(api: ApiServer) -> collections.Counter[tuple[str, str]]:
    """Event objects by (involved object, reason)."""
    return collections.Counter(
        (e["involvedObject"]["name"], e["reason"]) for e in api.objects("events")
    )


@pytest.mark.parametrize(
    "refusal",
    [disruption_budget(), internal("etcdserver: leader changed")],
    ids=["pdb-429", "500"],
)
async def test_refused_evictions_take_only_over_quota_pods_quietly(api, refusal):
    api.seed(*borrowing())
    tried: list[str] = []

    def refuse(raw: dict[str, Any]) -> Any:
        tried.append(raw["metadata"]["name"])
        return refusal

    api.evictions = refuse
    clock = Manual()
    reclaim = ReclaimSettings(delay=0, max_evictions=1)
    async with in_process(api, reclaim=reclaim, clock=clock) as op:
        await op.loop.step()
        before = op.requests()
        rounds = 30
        per_round = []
        for _ in range(rounds):
            count = len(tried)
            await op.reclaimer.round(refresh=op.loop.recompute)
            op.events.flush()
            await op.events.sent()
            per_round.append(len(tried) - count)
            clock.now += 1.0
        assert set(tried) <= {"b2", "b3", "b4"}  # b0, b1 are in quota: never asked
        assert max(per_round) <= 1  # every attempt counts against --max-evictions
        # Each refused pod waits 1, 2, 4, 8, 16 s: about five tries each in 30 s, not 30.
        assert len(tried) <= 3 * 6
        reason = "ReclaimBlocked" if refusal.code == 429 else "ReclaimFailed"
        assert {obj for (obj, why) in events(api) if why == reason} == {"borrower", *tried}
        # One Event per pod and reason, on the pod and on its group.
        assert events(api)[("borrower", reason)] == len(set(tried))
        assert all(events(api)[(name, reason)] == 1 for name in tried)
        counts = {
            e["involvedObject"]["name"]: e["count"]
            for e in api.objects("events")
            if e["involvedObject"]["kind"] == "Pod"
        }
        assert max(counts.values()) >= 2  # repeats raise the count
        print(
            f"\nevictions refused ({refusal.code}) for {rounds} s: {len(tried)} evictions, "
            f"{op.requests() - before} requests in all"
        )


class Racing:
    """Evictions refused, and while each is awaited the watch delivers a change of the tree."""

    def __init__(self, view: ClusterView) -> None:
        self.view = view
        self.tried: list[str] = []

    async def evict(self, namespace: str, name: str) -> Eviction:
        self.tried.append(name)
        self.view.observe_quota(
            quota(f"new-{len(self.tried)}", namespace="elsewhere", max={"cpu": 1})
        )
        return Eviction(Outcome.BLOCKED)


class Events:
    def record(self, ref: Ref, **_: Any) -> None:
        pass

    def flush(self) -> None:
        pass


def view_of(objects: list[dict[str, Any]]) -> ClusterView:
    view = ClusterView(QuotaEngine(EngineConfig()))
    for raw in objects:
        {
            "ElasticQuota": view.observe_quota,
            "Pod": view.observe_pod,
            "Node": view.observe_node,
        }[raw["kind"]](raw)
    view.engine.recompute()
    return view


async def test_a_tree_change_while_an_eviction_is_awaited_does_not_lose_the_round():
    """The round re-plans on its own snapshot after a refusal, with the engine dirty."""
    view = view_of(borrowing())
    racing = Racing(view)
    settings_ = ReclaimSettings(delay=0, max_evictions=3)
    events: Any = Events()
    cluster = StubCluster(racing.evict)
    reclaimer = reclaimer_of(view, cluster, events, settings_, Manual())
    await reclaimer.round(refresh=view.engine.recompute)
    assert racing.tried == ["b4", "b3", "b2"]


async def test_losing_the_lease_for_a_moment_keeps_the_reclaim_clocks(api):
    api.seed(*borrowing())
    evicted: list[str] = []

    def record(raw: dict[str, Any]) -> None:
        evicted.append(raw["metadata"]["name"])

    api.evictions = record
    clock = Manual()
    reclaim = ReclaimSettings(delay=10, max_evictions=1)
    async with in_process(api, reclaim=reclaim, clock=clock) as op:
        await op.loop.step()
        for second in range(11):
            if second == 9:  # a renewal missed its deadline; the Lease is won back
                op.loop.leading_changed(False)
                await op.reclaimer.round(acting=False, refresh=op.loop.recompute)
                op.loop.leading_changed(True)
            else:
                await op.reclaimer.round(refresh=op.loop.recompute)
            clock.now += 1.0
        assert evicted == ["b4"]  # over for ten seconds, as timed since the start


@settings(max_examples=60, deadline=None)
@given(clusters(), st.data())
async def test_reclaim_never_takes_an_in_quota_pod_when_evictions_are_refused(objects, data):
    """The operator's rounds, re-planning after refusals, on random trees and refusals."""
    view = view_of(objects)
    labels = {p.key: label for p, _, label in view.engine.pods()}
    evicted: list[str] = []

    async def evict(namespace: str, name: str) -> Eviction:
        key = f"{namespace}/{name}"
        assert labels[key] == "over-quota", f"{key} is {labels[key]}"
        if data.draw(st.booleans(), label=f"refuse {key}"):
            return Eviction(data.draw(st.sampled_from([Outcome.BLOCKED, Outcome.FAILED])))
        evicted.append(key)
        return Eviction(Outcome.EVICTED)

    clock = Manual()
    settings_ = ReclaimSettings(delay=0, max_evictions=data.draw(st.integers(1, 5)))
    events: Any = Events()
    reclaimer = reclaimer_of(view, StubCluster(evict), events, settings_, clock)
    for _ in range(4):
        await reclaimer.round(refresh=view.engine.recompute)
        clock.now += 2.0
    assert len(evicted) == len(set(evicted))  # nothing evicted twice
