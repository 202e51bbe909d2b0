"""Reclaim across a leader handover and while the watch moves: the pacing window belongs to the
group (a new leader learns the last round from the group's `last-reclaim` annotation, whether
the old leader gave the Lease up or was killed mid-round), and each eviction is planned again on
what the watch shows at that moment (never a pod that became in-quota meanwhile).

Two replicas' parts run in-process against the emulated API server on one manual clock; the
Lease's decision is handed to them as the Lease would (`leading_changed`).
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import pytest
from eq_engine.model import keys
from eq_operator.evicting import ClusterApi, Eviction, Outcome
from eq_operator.sending import Sender
from eq_operator.settings import ReclaimSettings
from eq_operator.view import ClusterView
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.apiserver import ApiServer
from tests.kube import QUOTAS, Client, stored
from tests.manifests import node, pod, quota, run
from tests.operator.inprocess import InProcess, Manual, StubCluster, in_process, reclaimer_of
from tests.operator.test_reclaim_faults import Events, view_of
from tests.waiting import eventually

DELAY = 10.0


def borrowing() -> list[dict[str, Any]]:
    """The borrower runs five 2-cpu pods, b0 most important; its min (4) covers b0 and b1. The
    lender has taken its min (6) back: the borrower is 6 cpu over its runtime of 4."""
    return [
        quota("lender", namespace="lender", min={"cpu": 6}, max={"cpu": 10}),
        quota("borrower", namespace="borrower", min={"cpu": 4}, max={"cpu": 10}),
        *(pod(f"b{i}", namespace="borrower", cpu="2", priority=10 - i) for i in range(5)),
        pod("l0", namespace="lender", cpu="6"),
        node("n1", cpu="10"),
    ]


def evictions(api: ApiServer) -> list[str]:
    """Names of the pods evicted so far, in order (the emulator's eviction hook sees each)."""
    seen: list[str] = []

    def record(raw: dict[str, Any]) -> None:
        seen.append(raw["metadata"]["name"])

    api.evictions = record
    return seen


def stamp(api: ApiServer, group: str) -> str | None:
    (found,) = [q for q in stored(api, QUOTAS) if q["metadata"]["name"] == group]
    return (found["metadata"].get("annotations") or {}).get(keys.LAST_RECLAIM)


async def a_round(op: InProcess, *, acting: bool) -> None:
    await op.loop.step()
    await op.reclaimer.round(acting=acting, refresh=op.loop.recompute)


class Hanging(ClusterApi):
    """The Eviction API as a leader meets it when it is killed mid-round (once `kill` is
    set): the next eviction never returns, the process being gone before it could go on."""

    def __init__(self, sender: Sender) -> None:
        super().__init__(sender, spare_jobs=True)
        self.answered = 0
        self.kill_after: int | None = None
        self.hung = asyncio.Event()

    async def evict(self, namespace: str, name: str) -> Eviction:
        if self.answered == self.kill_after:
            self.hung.set()
            await asyncio.Event().wait()
        self.answered += 1
        return await super().evict(namespace, name)


@pytest.mark.parametrize("handover", ["clean", "killed mid-round"])
async def test_a_new_leader_waits_out_the_window_the_old_leader_began(api, handover):
    api.seed(*borrowing())
    evicted = evictions(api)
    clock = Manual()
    reclaim = ReclaimSettings(delay=DELAY, max_evictions=2)
    hanging: list[Hanging] = []

    def cluster(sender: Sender) -> Hanging:
        hanging.append(Hanging(sender))
        return hanging[-1]

    async with (
        in_process(api, reclaim=reclaim, clock=clock, cluster=cluster) as old,
        in_process(api, reclaim=reclaim, clock=clock, leading=False) as new,
    ):
        # Both replicas time the over-use from the same moment.
        await a_round(old, acting=True)
        await a_round(new, acting=False)
        clock.now += DELAY
        began = clock.now
        if handover == "clean":
            await a_round(old, acting=True)  # two pods, the most it may take in a window
            assert evicted == ["b4", "b3"]
            old.loop.leading_changed(False)  # it gives the Lease up
        else:
            hanging[0].kill_after = 1
            killed = asyncio.create_task(a_round(old, acting=True))
            await hanging[0].hung.wait()
            killed.cancel()  # SIGKILL: no release, nothing more sent
            with contextlib.suppress(asyncio.CancelledError):
                await killed
            assert evicted == ["b4"]
        taken = list(evicted)
        await eventually(
            lambda: new.view.reclaim_stamps.get("borrower") == stamp(api, "borrower") is not None,
            what="the new leader to see the old leader's stamp",
        )

        def leaving(name: str) -> bool:
            pod = new.view.engine.pod(f"borrower/{name}")
            return pod is None or pod.terminating

        await eventually(  # the pod watch, apart from the groups' watch that brought the stamp
            lambda: all(leaving(name) for name in taken),
            what="the new leader to see the evicted pods leave",
        )
        new.loop.leading_changed(True)
        while clock.now < began + DELAY:  # the borrower is still over its runtime throughout
            await a_round(new, acting=True)
            assert evicted == taken, f"evicted at {clock.now - began:.0f}s of the window"
            clock.now += 1.0
        await a_round(new, acting=True)  # a whole delay since it saw the stamp
        assert len(evicted) > len(taken)
        assert set(evicted) <= {"b2", "b3", "b4"}  # b0 and b1 are in quota


class DeletedMeanwhile(ClusterApi):
    """While the first eviction is awaited, the owner of `deleted` (a pod) deletes it, and the
    watch delivers the deletion before the round goes on."""

    def __init__(self, sender: Sender, api: ApiServer, deleted: str) -> None:
        super().__init__(sender, spare_jobs=True)
        self.api, self.deleted = api, deleted
        self.view: ClusterView | None = None

    async def evict(self, namespace: str, name: str) -> Eviction:
        answer = await super().evict(namespace, name)
        view = self.view
        assert view is not None
        if view.engine.pod(self.deleted) is not None:
            owner, pod_name = self.deleted.split("/")
            client = Client(self.api)
            try:
                await client.delete(pod(pod_name, namespace=owner))
            finally:
                await client.close()
            if self.api.get("pods", pod_name, owner) is not None:  # terminating: the kubelet
                self.api.finish_pod_deletion(owner, pod_name)
            await eventually(lambda: view.engine.pod(self.deleted) is None, what="the deletion")
        return answer


async def test_a_pod_made_in_quota_after_the_round_was_planned_is_not_evicted(api):
    api.seed(*borrowing())
    evicted = evictions(api)
    reclaim = ReclaimSettings(delay=0, max_evictions=3)
    meanwhile: list[DeletedMeanwhile] = []

    def cluster(sender: Sender) -> DeletedMeanwhile:
        meanwhile.append(DeletedMeanwhile(sender, api, "borrower/b0"))
        return meanwhile[-1]

    async with in_process(api, reclaim=reclaim, clock=Manual(), cluster=cluster) as op:
        meanwhile[0].view = op.view
        await op.loop.step()
        # Planned: b4, b3, b2 (used 10, runtime 4). Once b0 is gone, b2 is in quota (min 4
        # covers b1 and b2) and the group is over by 2 only, with b4 on its way out.
        await op.reclaimer.round(refresh=op.loop.recompute)
        assert evicted == ["b4", "b3"]


@st.composite
def lending(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A lender that has taken some of its min back from a borrower running random pods."""
    lender_min, borrower_min = draw(st.integers(2, 12)), draw(st.integers(0, 8))
    cpu = st.integers(1, 4)
    total = lender_min + borrower_min
    objects = [
        quota("lender", namespace="lender", min={"cpu": lender_min}, max={"cpu": total}),
        quota("borrower", namespace="borrower", min={"cpu": borrower_min}, max={"cpu": total}),
        node("n1", cpu=str(total)),
    ]
    for i in range(draw(st.integers(1, 12))):
        objects.append(
            pod(
                f"b{i}",
                namespace="borrower",
                cpu=str(draw(cpu)),
                priority=draw(st.integers(0, 3)),
                preemptible=draw(st.integers(0, 5)) > 0,
            )
        )
    for i in range(draw(st.integers(0, 4))):
        objects.append(pod(f"l{i}", namespace="lender", cpu=str(draw(cpu))))
    return objects


@settings(max_examples=100, deadline=None)
@given(lending(), st.data())
async def test_no_interleaving_of_the_watch_and_a_round_evicts_an_in_quota_pod(objects, data):
    """While each eviction is awaited the watch deletes or adds random pods of either group;
    every pod evicted is over-quota in an engine computed afresh on the objects at that moment,
    as `simulate` computes a cluster."""
    current = {_key(raw): raw for raw in objects}
    view = view_of(objects)
    spares = iter(range(1_000_000))

    def deliver(raw: dict[str, Any] | None, key: str) -> None:
        if raw is None:
            current.pop(key, None)
            view.forget_pod(key)
        else:
            current[key] = raw
            view.observe_pod(raw)

    async def evict(namespace: str, name: str) -> Eviction:
        key = f"{namespace}/{name}"
        labels = {p.key: label for p, _, label in run(*current.values()).pods()}
        assert labels[key] == "over-quota", f"{key} is {labels[key]} now"
        pods = sorted(k for k, raw in current.items() if raw["kind"] == "Pod" and k != key)
        change = data.draw(st.sampled_from(["none", "delete", "add"]), label="meanwhile")
        if change == "delete" and pods:
            deliver(None, data.draw(st.sampled_from(pods), label="deleted"))
        elif change == "add" and pods:
            like = current[data.draw(st.sampled_from(pods), label="like")]
            copy = {**like, "metadata": {**like["metadata"], "name": f"new-{next(spares)}"}}
            deliver(copy, _key(copy))
        deliver(None, key)  # evicted: the watch shows it gone
        return Eviction(Outcome.EVICTED)

    reclaim = ReclaimSettings(delay=0, max_evictions=data.draw(st.integers(1, 5)))
    events: Any = Events()
    reclaimer = reclaimer_of(view, StubCluster(evict), events, reclaim, Manual())
    for _ in range(3):
        await reclaimer.round(refresh=view.engine.recompute)


def _key(raw: dict[str, Any]) -> str:
    metadata = raw["metadata"]
    return f"{metadata.get('namespace', '')}/{metadata['name']}"
