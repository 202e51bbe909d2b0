"""Koordinator's queue keys on an ElasticQuota, as the gate reads them (`model.queues`):
`queue-policy` Block or Priority, `max-depth`, `wait-for-pods-running` and
`enable-queueunit-preemption`; a value the gate cannot read keeps its default and is warned of."""

from __future__ import annotations

from typing import Any

import pytest
from eq_engine.decisions import admissions, preemptions
from eq_engine.model import queue_policy

from tests.manifests import node, pod, quota, run

CLUSTER = node("n", cpu=100)
POLICY = "koord-queue/queue-policy"


def team(labels: dict[str, str] | None = None, **annotations: str) -> dict[str, Any]:
    made = quota("team", namespace="team", min={"cpu": 4}, max={"cpu": 4}, labels=labels)
    made["metadata"]["annotations"] = {
        f"koord-queue/{k.replace('_', '-')}": v for k, v in annotations.items()
    }
    return made


def waiting(name: str, cpu: str, minute: int) -> dict[str, Any]:
    return pod(
        name,
        namespace="team",
        cpu=cpu,
        node=None,
        gated=True,
        created=f"2026-01-01T00:{minute:02d}:00Z",
    )


QUEUE = [waiting("big", "3", 0), waiting("small-1", "1", 1), waiting("small-2", "1", 2)]
RUNNING = pod("running", namespace="team", cpu="2")


@pytest.mark.parametrize(
    ("group", "admitted", "told"),
    [
        pytest.param(
            team(), [], {"team/small-1": "team/big waits first in team"}, id="Block by default"
        ),
        pytest.param(
            team({POLICY: "Block"}),
            [],
            {"team/small-2": "team/big waits first in team"},
            id="Block",
        ),
        pytest.param(
            team({POLICY: "Priority"}),
            ["team/small-1", "team/small-2"],
            {"team/big": "team runtime cpu 4, used or admitted 2, this pod 3"},
            id="Priority lets later pods that fit pass",
        ),
        pytest.param(
            team({POLICY: "Priority"}, max_depth="2"),
            ["team/small-1"],
            {"team/small-2": "beyond the first 2 places of team's queue, all it looks at"},
            id="max-depth bounds how far Priority looks",
        ),
    ],
)
def test_the_queue_policy_says_who_may_pass_a_head_that_does_not_fit(
    group: dict[str, Any], admitted: list[str], told: dict[str, str]
):
    decided = admissions(run(group, CLUSTER, RUNNING, *QUEUE).recompute())
    assert sorted(decided.admitted) == admitted
    for key, message in told.items():
        assert message in decided.waiting[key].message, decided.waiting[key]


def test_wait_for_pods_running_lets_nothing_go_while_an_admitted_pod_does_not_run():
    starting = pod("starting", namespace="team", cpu="1", phase="Pending")
    engine = run(team(wait_for_pods_running="true"), CLUSTER, starting, waiting("next", "1", 0))
    decided = admissions(engine.recompute())
    assert decided.admitted == ()
    assert decided.waiting["team/next"].message == (
        "waiting for quota: team lets the next pod go once those it admitted run "
        "(koord-queue/wait-for-pods-running): team/starting not Running yet"
    )
    running = pod("starting", namespace="team", cpu="1", phase="Running")
    engine = run(team(wait_for_pods_running="true"), CLUSTER, running, waiting("next", "1", 0))
    assert admissions(engine.recompute()).admitted == ("team/next",)


@pytest.mark.parametrize(
    ("setting", "default", "preempts"),
    [("false", True, False), ("true", False, True), (None, True, True), (None, False, False)],
)
def test_a_group_turns_its_preemption_on_or_off_whatever_the_cluster_says(
    setting: str | None, default: bool, preempts: bool
):
    group = team() if setting is None else team(enable_queueunit_preemption=setting)
    low = pod("low", namespace="team", cpu="4", priority=1)
    urgent = pod("urgent", namespace="team", cpu="1", priority=10, node=None, gated=True)
    snapshot = run(group, CLUSTER, low, urgent).recompute()
    plans = preemptions(snapshot, admissions(snapshot), default=default)
    assert bool(plans and plans["team"].victims()) is preempts


def test_a_value_the_gate_cannot_read_keeps_its_default_and_is_named():
    policy = queue_policy(
        {POLICY: "Round"},
        {
            "koord-queue/max-depth": "deep",
            "koord-queue/wait-for-pods-running": "yes",
            "koord-queue/enable-queueunit-preemption": "1",
        },
    )
    assert (policy.block, policy.max_depth, policy.wait_for_running, policy.preemption) == (
        True,
        -1,
        False,
        None,
    )
    assert policy.problems == (
        "metadata.labels[koord-queue/queue-policy]: 'Round' is not read here (Block or "
        "Priority): the gate keeps Block",
        "metadata.annotations[koord-queue/wait-for-pods-running]: 'yes' is not \"true\" or "
        '"false": ignored',
        "metadata.annotations[koord-queue/enable-queueunit-preemption]: '1' is not \"true\" or "
        '"false": ignored',
        "metadata.annotations[koord-queue/max-depth]: 'deep' is not a whole number from 1, or -1 "
        "for the whole queue: the gate looks at the whole queue",
    )
