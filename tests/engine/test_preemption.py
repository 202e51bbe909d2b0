"""Preemption inside a group: which running pods make room for the pod (or gang) that waits
first in its group, Koordinator's rule (the same group, strictly lower priority, preemptible)
in Kueue's order (lowest priority first, the most recently started first among equals)."""

from __future__ import annotations

from typing import Any

import pytest
from eq_engine import QuotaEngine
from eq_engine.decisions import admissions, preemptions
from hypothesis import given
from hypothesis import strategies as st

from tests.manifests import node, pod, quota, run

TEAM = quota("team", namespace="team", min={"cpu": 4}, max={"cpu": 4})
OTHER = quota("other", namespace="other", min={"cpu": 4}, max={"cpu": 4})
CLUSTER = node("n", cpu=100)
GANG = "gang.scheduling.koordinator.sh/"


def running(name: str, *, cpu: str = "1", priority: int = 1, minute: int = 0, **options: Any):
    """A pod of the team's running since 00:`minute`."""
    start = f"2026-01-01T00:{minute:02d}:00Z"
    options.setdefault("namespace", "team")
    return pod(name, cpu=cpu, priority=priority, start=start, **options)


def waiting(name: str, *, cpu: str = "2", priority: int = 10, **options: Any):
    options.setdefault("namespace", "team")
    return pod(name, node=None, gated=True, cpu=cpu, priority=priority, **options)


def member(name: str, gang: str, minimum: int, **options: Any) -> dict[str, Any]:
    """A pod of Koordinator's gang `gang`."""
    annotations = {GANG + "name": gang, GANG + "min-available": str(minimum)}
    made = options.pop("make")(name, **options)
    made["metadata"]["annotations"] = annotations
    return made


def victims(engine: QuotaEngine, **options: Any) -> dict[str, list[str]]:
    """Per group with a plan: the pods to evict, in order (names)."""
    snapshot = engine.recompute()
    plans = preemptions(snapshot, admissions(snapshot), **options)
    return {
        group: [key.split("/")[1] for c in plan.victims() for key in c.keys]
        for group, plan in plans.items()
    }


@pytest.mark.parametrize(
    ("objects", "taken"),
    [
        pytest.param(
            [*(running(f"r{minute}", minute=minute) for minute in range(4)), waiting("urgent")],
            ["r3", "r2"],
            id="the most recently started lower-priority pods make exactly the room",
        ),
        pytest.param(
            [
                running("big", cpu="2", priority=5),
                running("small-1", priority=1, minute=1),
                running("small-2", priority=1, minute=2),
                waiting("urgent"),
            ],
            ["small-2", "small-1"],
            id="the lowest priority goes first even when more pods go",
        ),
        pytest.param(
            [
                running("big", cpu="3", priority=1, minute=0),
                running("small", priority=1, minute=1),
                waiting("urgent", cpu="3"),
            ],
            ["big"],
            id="a pod taken first is put back when the room is made without it",
        ),
        pytest.param(
            [
                running("peer", priority=10),
                running("boss", priority=50),
                running("locked", priority=1, preemptible=False),
                running("low", priority=1, minute=1),
                running("elsewhere", priority=1, namespace="other"),
                waiting("urgent", cpu="1"),
            ],
            ["low"],
            id="nobody of an equal or higher priority, non-preemptible or of another group",
        ),
        pytest.param(
            [
                running("peer", cpu="2", priority=10),
                running("low-1", priority=1),
                running("low-2", priority=1, minute=1),
                waiting("urgent", cpu="3"),
            ],
            [],
            id="nobody for a pod that would not fit even then",
        ),
    ],
)
def test_who_makes_room(objects: list[dict[str, Any]], taken: list[str]):
    assert victims(run(TEAM, OTHER, CLUSTER, *objects)) == {"team": taken}


def test_a_pod_whose_non_preemptible_part_does_not_fit_the_min_preempts_nobody():
    team = quota("team", namespace="team", min={"cpu": 1}, max={"cpu": 4})
    engine = run(
        team, CLUSTER, running("low", cpu="4"), waiting("locked", preemptible=False, cpu="2")
    )
    assert victims(engine) == {}


def test_a_gang_makes_room_for_all_of_its_minimum_and_takes_a_running_gang_only_whole():
    engine = run(
        TEAM,
        CLUSTER,
        running("alone", minute=0),
        *(member(f"old-{i}", "old", 3, make=running, minute=1) for i in range(3)),
        *(member(f"new-{i}", "new", 2, make=waiting, cpu="1") for i in range(2)),
    )
    assert victims(engine) == {"team": ["old-0", "old-1", "old-2"]}


def test_a_gang_whose_pods_disagree_on_their_priority_preempts_nobody_and_says_why():
    engine = run(
        TEAM,
        CLUSTER,
        *(running(f"r{minute}", minute=minute) for minute in range(4)),
        member("g-0", "g", 2, make=waiting, cpu="1", priority=10),
        member("g-1", "g", 2, make=waiting, cpu="1", priority=5),
    )
    snapshot = engine.recompute()
    (plan,) = preemptions(snapshot, admissions(snapshot)).values()
    assert plan.victims() == []
    assert plan.refusal == (
        "its pods disagree on their priority (spec.priority: team/g-0 10, team/g-1 5): it "
        "preempts nobody; give its pods one priority class"
    )
    assert plan.what == "gang team/g (2 pods)"


def test_pods_already_leaving_count_as_gone():
    engine = run(
        TEAM, CLUSTER, *(running(f"r{minute}", minute=minute) for minute in range(4)), waiting("w")
    )
    assert victims(engine, leaving={"team/r3"}) == {"team": ["r2"]}


YOUNG_AND_OLD = (
    running("old", minute=0),
    running("older", minute=1),
    running("young-1", minute=9),
    running("young-2", minute=9),
)
TEN_PAST = 1767225600.0 + 10 * 60  # 2026-01-01T00:10:00Z: the young ones have run a minute


@pytest.mark.parametrize(
    ("wants", "options", "taken"),
    [
        ("1", {}, ["young-2"]),
        ("1", {"reclaim_min_runtime": 120}, ["older"]),
        ("1", {"reclaim_min_runtime": 120, "reclaim_min_runtime_hard": True}, ["older"]),
        ("3", {"reclaim_min_runtime": 120}, ["older", "old", "young-2"]),
        ("3", {"reclaim_min_runtime": 120, "reclaim_min_runtime_hard": True}, []),
    ],
)
def test_young_pods_go_last_or_with_a_hard_minimum_never(
    wants: str, options: dict[str, Any], taken: list[str]
):
    engine = run(TEAM, CLUSTER, *YOUNG_AND_OLD, waiting("urgent", cpu=wants), **options)
    assert victims(engine, now=TEN_PAST) == {"team": taken}


@given(
    st.lists(
        st.tuples(st.integers(1, 3), st.integers(0, 3), st.booleans(), st.integers(0, 9)),
        max_size=6,
    ),
    st.integers(1, 4),
    st.integers(0, 3),
)
def test_victims_are_lower_preemptible_pods_of_the_group_that_make_the_whole_room(
    pods: list[tuple[int, int, bool, int]], want: int, priority: int
):
    objects = [
        running(f"p{i}", cpu=str(cpu), priority=prio, preemptible=preemptible, minute=minute)
        for i, (cpu, prio, preemptible, minute) in enumerate(pods)
    ]
    engine = run(TEAM, CLUSTER, *objects, waiting("w", cpu=str(want), priority=priority))
    used = sum(cpu for cpu, *_ in pods)
    taken = victims(engine).get("team", [])
    by_name = {f"p{i}": entry for i, entry in enumerate(pods)}
    for name in taken:
        _, prio, preemptible, _ = by_name[name]
        assert preemptible and prio < priority, (name, by_name[name])
    if taken:
        assert used - sum(by_name[name][0] for name in taken) + want <= 4
        assert used + want > 4  # nobody goes for a pod that fits
