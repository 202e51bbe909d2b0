"""Reclaim is paced by windows: a group loses at most `--max-evictions` pods per reclaim delay,
also when every evicted pod comes straight back ungated (gating off, or the pod webhook down
under its fail-open policy) and the group stays over its runtime.

The operator's reclaim module runs in-process on an injectable clock, fed the way its watch
feeds it; a Deployment stand-in replaces each evicted pod at once with a running one.
"""

from __future__ import annotations

import itertools
from typing import Any

from eq_engine import EngineConfig, QuotaEngine
from eq_operator.evicting import Eviction, Outcome
from eq_operator.settings import ReclaimSettings
from eq_operator.view import ClusterView, Ref

from tests.manifests import node, pod, quota
from tests.operator.inprocess import Manual, StubCluster, reclaimer_of

DELAY, INTERVAL = 3.0, 1.0


class Events:
    def __init__(self) -> None:
        self.reasons: list[str] = []

    def record(self, ref: Ref, *, type: str, reason: str, message: str, about: str = "") -> None:
        self.reasons.append(reason)


class Deployment:
    """The borrower's Deployment: every evicted pod is replaced at once by a new one that the
    scheduler binds, as happens when nothing gates it."""

    def __init__(self, view: ClusterView, clock: Manual) -> None:
        self.view, self.clock = view, clock
        self.evicted: list[tuple[float, str]] = []
        self._names = (f"batch-{i}" for i in itertools.count())
        for _ in range(5):
            self.run_one()

    def run_one(self) -> None:
        self.view.observe_pod(pod(next(self._names), namespace="borrower", cpu="2"))

    async def evict(self, namespace: str, name: str) -> Eviction:
        self.evicted.append((self.clock.now, name))
        self.view.forget_pod(f"{namespace}/{name}")
        self.run_one()
        return Eviction(Outcome.EVICTED)


async def evictions_over(seconds: float, *, max_evictions: int) -> list[tuple[float, str]]:
    """Run reclaim rounds every INTERVAL for `seconds` after the lender takes its min back."""
    view = ClusterView(QuotaEngine(EngineConfig()))
    clock = Manual(now=0.0)
    for raw in (
        quota("lender", namespace="lender", min={"cpu": 6}, max={"cpu": 10}),
        quota("borrower", namespace="borrower", min={"cpu": 4}, max={"cpu": 10}),
        node("n1", cpu="10"),
    ):
        if raw["kind"] == "Node":
            view.observe_node(raw)
        else:
            view.observe_quota(raw)
    deployment = Deployment(view, clock)
    view.observe_pod(pod("l0", namespace="lender", cpu="6"))  # the lender takes its min back
    settings = ReclaimSettings(interval=INTERVAL, delay=DELAY, max_evictions=max_evictions)
    events: Any = Events()
    cluster = StubCluster(deployment.evict)
    reclaimer = reclaimer_of(view, cluster, events, settings, clock)
    while clock.now <= seconds:
        view.engine.recompute()
        await reclaimer.round(refresh=view.engine.recompute)
        clock.now += INTERVAL
    return deployment.evicted


async def test_a_group_loses_at_most_max_evictions_pods_per_delay():
    evicted = await evictions_over(30, max_evictions=2)
    # Used stays at 10 over a runtime of 4 (the replacements keep coming), so every window
    # ends in a round: at 3 s, 6 s, ... 30 s, two pods each.
    assert len(evicted) == 2 * 10
    times = sorted({when for when, _ in evicted})
    assert times == [3.0 * i for i in range(1, 11)]
    for window_start in range(0, 30, 3):  # never more than two inside any one delay
        inside = [w for w, _ in evicted if window_start < w <= window_start + DELAY]
        assert len(inside) <= 2


async def test_a_replacement_that_runs_ungated_is_judged_only_after_a_delay_of_its_own():
    evicted = await evictions_over(12, max_evictions=5)
    first_round = [name for when, name in evicted if when == DELAY]
    assert first_round == ["batch-4", "batch-3", "batch-2"]  # 10 - 3 x 2 = 4 fits the runtime
    replacements = {"batch-5", "batch-6", "batch-7"}
    judged = {name: when for when, name in evicted if name in replacements}
    assert all(when >= 2 * DELAY for when in judged.values())
