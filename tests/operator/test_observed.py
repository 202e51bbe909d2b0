"""The view hands over what the watch delivered in one call (`ClusterView.take`, an `Observed`),
and the loop acts on each part of it once: a recompute when something changed, a comparison of
each object seen, an Event on each object found unreadable (kept while the replica stands by,
sent once it leads)."""

from __future__ import annotations

import json

from eq_engine import EngineConfig, QuotaEngine
from eq_engine.model import keys
from eq_kit.kube import Http
from eq_operator import observing
from eq_operator.events import Recorder
from eq_operator.metrics import Metrics
from eq_operator.pools import Pools
from eq_operator.sending import Sender
from eq_operator.view import ClusterView, Observed
from kubernetes_asyncio import client

from tests.apiserver import ApiServer
from tests.kube import Client
from tests.manifests import node, pod, quota
from tests.operator.inprocess import in_process
from tests.operator.test_faults import holds, team
from tests.waiting import consistently, eventually

ODD = pod("odd", cpu="a lot")
"""A pod the engine cannot read: reported once, with an Event."""


class Taking:
    """Every take of a view since this began, as one."""

    def __init__(self, view: ClusterView) -> None:
        self.view, self.seen = view, Observed()

    def __call__(self) -> Observed:
        self.seen |= self.view.take()
        return self.seen


async def test_the_view_hands_over_what_the_watch_delivered_once(api):
    api.seed(quota("team", namespace="apps", min={"cpu": 4}), node("n1", cpu="8"))
    api.seed(pod("p0", cpu="1"), pod("p1", cpu="1"), ODD)
    async with client.ApiClient(client.Configuration(host=api.url)) as connection:
        http = Http(connection)
        view = ClusterView(QuotaEngine(EngineConfig()))
        streams = observing.caches(http, view, Pools(Sender(http), Recorder(Sender(http))))
        streams.start()
        try:
            await streams.wait_ready()
            first = view.take()
            assert first.changed and first.quotas == {"team"}
            assert first.pods == {"apps/p0", "apps/p1", "apps/odd"}
            ((ref, error),) = first.unreadable
            assert (ref.kind, ref.namespace, ref.name) == ("Pod", "apps", "odd")
            assert "cpu" in error
            assert view.take() == Observed()  # handed over: nothing twice

            labels = {keys.CAPACITY: "in-quota"}
            session = Client(api)
            try:
                await session.patch(pod("p0", cpu="1"), {"metadata": {"labels": labels}})
            finally:
                await session.close()
            taking = Taking(view)
            await eventually(lambda: "apps/p0" in taking().pods, what="the pod's change")
            assert taking.seen.changed and taking.seen.pods == {"apps/p0"}
            assert not taking.seen.quotas and not taking.seen.unreadable  # reported once
        finally:
            await streams.stop()


def invalid(api: ApiServer) -> int:
    """The InvalidObject Events' occurrences."""
    return sum(e["count"] for e in api.objects("events") if e["reason"] == "InvalidObject")


async def test_a_stand_by_reports_what_it_found_unreadable_once_it_leads(api):
    api.seed(*team(), ODD)
    async with in_process(api, leading=False) as op:
        op.run()
        await op.converged(lambda: "Pod apps/odd" in op.view.unreadable, "the odd pod seen")
        await op.converged(lambda: op.loop.synced, "a step")
        await consistently(lambda: invalid(api) == 0, seconds=0.3, what="a stand-by's silence")
        op.loop.leading_changed(True)
        await op.converged(lambda: invalid(api) == 1, "the Event once it leads")
        await consistently(lambda: invalid(api) == 1, seconds=0.3, what="one Event")


async def test_a_hand_edit_of_an_annotation_of_ours_is_undone(api):
    """The engine's numbers do not move: the group is compared again because it was seen."""
    api.seed(*team())
    async with in_process(api) as op:
        op.run()
        await op.converged(lambda: holds(api, "team", {"cpu": "3"}), "the first write")
        session = Client(api)
        try:
            edited = {keys.USED: json.dumps({"cpu": "99"})}
            team_quota = api.get("elasticquotas", "team", "apps")
            assert team_quota is not None
            await session.patch(team_quota, {"metadata": {"annotations": edited}})
        finally:
            await session.close()
        await op.converged(lambda: holds(api, "team", {"cpu": "3"}), "the edit undone")


def recomputes(metrics: Metrics) -> float:
    name = "elastic_quota_recompute_duration_seconds_count"
    return metrics.registry.get_sample_value(name) or 0.0


async def test_the_engine_is_recomputed_when_the_watch_brought_something_not_each_step(api):
    api.seed(*team())
    async with in_process(api) as op:
        assert not op.loop.synced  # until a step has begun with every kind listed
        await op.loop.step()
        assert op.loop.synced and recomputes(op.metrics) == 1
        await op.loop.step()
        await op.loop.step()
        assert recomputes(op.metrics) == 1
        api.seed(pod("p3", cpu="1"))
        await eventually(lambda: op.view.engine.pod("apps/p3") is not None, what="the watch")
        await op.loop.step()
        assert recomputes(op.metrics) == 2
