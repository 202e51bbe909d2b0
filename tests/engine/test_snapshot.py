"""The snapshot a recompute hands back: what changed, and the state the decisions read, good until
the engine's next event."""

from __future__ import annotations

import pytest
from eq_engine import StaleSnapshot, parse_node, parse_pod
from eq_engine.decisions import admissions, reclaim_plan

from tests.manifests import node, pod, quota, run

TEAM = quota("team", min={"cpu": "1"}, max={"cpu": "2"}, namespaces=["apps"])


def test_a_recompute_hands_back_what_changed_with_the_state_it_left():
    engine = run(TEAM, node("node-1", cpu="4"))
    engine.set_pod(parse_pod(pod("a", quota="team", cpu="1")))
    snapshot = engine.recompute()
    assert "team" in {status.name for status in snapshot.changes.groups}
    assert snapshot.changes.pod_labels == {"apps/a": "in-quota"}
    assert set(snapshot.pods) == {"apps/a"}
    assert snapshot.capacity_label("apps/a") == "in-quota"
    assert snapshot.status("team").used == {"cpu": 1000}


def test_a_second_recompute_with_nothing_new_changes_nothing_and_reads_the_same():
    engine = run(TEAM, node("node-1", cpu="4"), pod("a", quota="team", cpu="1"))
    snapshot = engine.recompute()
    assert snapshot.changes.groups == () and snapshot.changes.pod_labels == {}
    assert snapshot.pod_request("apps/a") == {"cpu": 1000}


@pytest.mark.parametrize(
    "event",
    [
        lambda engine: engine.set_pod(parse_pod(pod("b", quota="team", cpu="1"))),
        lambda engine: engine.remove_pod("apps/a"),
        lambda engine: engine.set_capacity({"cpu": 8000}),
    ],
    ids=["a pod added", "a pod removed", "the capacity set"],
)
def test_a_snapshot_read_after_an_event_refuses_rather_than_mix_two_moments(event):
    engine = run(TEAM, node("node-1", cpu="4"), pod("a", quota="team", cpu="1"))
    snapshot = engine.recompute()
    event(engine)
    with pytest.raises(StaleSnapshot, match="recompute first"):
        admissions(snapshot)
    with pytest.raises(StaleSnapshot):
        reclaim_plan(snapshot)
    assert engine.recompute().pods.keys() == engine.pod_keys()  # a new one reads again


def test_an_event_that_changes_nothing_keeps_the_snapshot_good():
    engine = run(TEAM, node("node-1", cpu="4"), pod("a", quota="team", cpu="1"))
    snapshot = engine.recompute()
    engine.set_pod(parse_pod(pod("a", quota="team", cpu="1")))  # the echo of a write
    engine.remove_pod("apps/nobody")
    engine.set_node(parse_node(node("node-1", cpu="4")))  # as it was fed
    assert admissions(snapshot).admitted == ()
