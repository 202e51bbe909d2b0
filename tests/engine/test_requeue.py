"""Gangs that cannot start: which admitted gangs are stalled, which started, how long a
requeued one waits, how the gate holds it back meanwhile, and how the operator's record of it
reads."""

from __future__ import annotations

import json
from typing import Any

import pytest
from eq_engine.decisions import admissions, backoff, stalled, started
from eq_engine.model import Requeue
from eq_engine.reading import requeued_annotation, requeued_gangs

from tests.manifests import node, pod, quota, run

TEAM = quota("team", namespace="team", min={"cpu": 4}, max={"cpu": 4})
CLUSTER = node("n", cpu=100)
GANG = "gang:team/train"
KEY = "quota.scheduling.koordinator.sh/requeued-gangs"


def member(name: str, *, ready: bool = False, gated: bool = False, **options: Any):
    """A pod of the team's gang `train` (minimum 3), Ready or not, or behind the gate."""
    made = pod(name, namespace="team", cpu="1", gated=gated, **options)
    made["metadata"]["annotations"] = {
        "gang.scheduling.koordinator.sh/name": "train",
        "gang.scheduling.koordinator.sh/min-available": "3",
    }
    if ready:
        made["status"]["conditions"] = [{"type": "Ready", "status": "True"}]
    return made


def test_a_gang_short_of_its_minimum_ready_is_stalled_only_after_the_timeout():
    engine = run(
        TEAM,
        CLUSTER,
        member("train-0", ready=True),
        member("train-1", ready=True),
        member("train-2", node=None),
    )
    snapshot = engine.recompute()
    assert stalled(snapshot, {GANG: 100.0}, now=399.0, timeout=300) == []
    (stall,) = stalled(snapshot, {GANG: 100.0}, now=400.0, timeout=300)
    assert (stall.gang, stall.name, stall.group) == (GANG, "team/train", "team")
    assert stall.pods == ("team/train-0", "team/train-1", "team/train-2")
    assert (stall.ready, stall.minimum) == (2, 3)
    assert started(snapshot, [GANG, "gang:team/gone"]) == {GANG: False, "gang:team/gone": None}


def test_a_gang_whose_minimum_is_ready_has_started():
    engine = run(TEAM, CLUSTER, *(member(f"train-{i}", ready=True) for i in range(3)))
    snapshot = engine.recompute()
    assert stalled(snapshot, {GANG: 0.0}, now=1000.0, timeout=300) == []
    assert started(snapshot, [GANG]) == {GANG: True}


@pytest.mark.parametrize(
    ("times", "seconds"), [(1, 60), (2, 120), (3, 240), (7, 3600), (10_000, 3600)]
)
def test_the_backoff_doubles_per_requeue_up_to_its_cap(times: int, seconds: float):
    assert backoff(times, base=60, cap=3600) == seconds


def test_a_requeued_gang_waits_out_its_backoff_holding_nobody_back():
    engine = run(
        TEAM,
        CLUSTER,
        *(
            member(f"train-{i}", gated=True, node=None, created="2026-01-01T00:00:00Z")
            for i in range(3)
        ),
        pod(
            "later",
            namespace="team",
            cpu="1",
            gated=True,
            node=None,
            created="2026-01-01T00:01:00Z",
        ),
    )
    snapshot = engine.recompute()
    requeued = {GANG: Requeue(GANG, 2, until=500.0)}
    held = admissions(snapshot, requeued=requeued, now=499.0)
    assert held.admitted == ("team/later",)
    assert held.waiting["team/train-0"].message == (
        "requeued: gang team/train, 2 times for not starting in time: not admitted again before "
        "1970-01-01T00:08:20Z"
    )
    assert held.gangs_waiting_per_group == {"team": 1}
    after = admissions(snapshot, requeued=requeued, now=500.0)
    assert set(after.admitted) == {"team/train-0", "team/train-1", "team/train-2", "team/later"}


def test_the_record_reads_back_what_the_operator_writes_and_ignores_the_rest():
    requeues = {GANG: Requeue(GANG, 2, until=1767225600.0)}
    written = requeued_annotation(requeues)
    assert json.loads(written or "") == {GANG: {"times": 2, "until": "2026-01-01T00:00:00Z"}}
    assert requeued_gangs({KEY: written or ""}) == tuple(requeues.values())
    assert requeued_annotation({}) is None
    for hand_edit in (
        "not json",
        "[1]",
        '{"g": 3}',
        '{"g": {"times": "2"}}',
        '{"g": {"times": 1, "until": "soon"}}',
    ):
        assert requeued_gangs({KEY: hand_edit}) == (), hand_edit
