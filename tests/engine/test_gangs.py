"""Pod groups in the engine: all-or-nothing admission, in each form users write them.

Pods are a Job's as the Job controller makes them (tests.realistic), gated by the webhook, with
Koordinator's gang annotations, scheduler-plugins' PodGroup label, or Kubernetes 1.36's
`spec.schedulingGroup`.
"""

from __future__ import annotations

from typing import Any

import pytest
from eq_engine import QuotaEngine
from eq_engine.decisions import Cause, admissions
from eq_engine.model.gangs import POD_GROUP_KINDS, parse_pod_group

from tests.manifests import load, node, quota, run
from tests.realistic import job_pod

GATE = "quota.scheduling.koordinator.sh/admission"
TEAM = "team-a"


def team(cpu: str = "2") -> list[dict[str, Any]]:
    """The team's group, guaranteed `cpu` on a cluster of exactly that."""
    return [
        quota(TEAM, namespace=TEAM, min={"cpu": cpu}, max={"cpu": cpu}),
        node("n1", cpu=cpu),
    ]


def member(job: str, index: int, *, minimum: str | None = "4", **options: Any) -> dict[str, Any]:
    """A gated pod of Job `job` in Koordinator's gang `job` (min-available `minimum`)."""
    annotations = {"gang.scheduling.koordinator.sh/name": job}
    if minimum is not None:
        annotations["gang.scheduling.koordinator.sh/min-available"] = minimum
    options.setdefault("annotations", annotations)
    options.setdefault("labels", {"quota.scheduling.koordinator.sh/name": TEAM})
    options.setdefault("node", None)
    options.setdefault("gates", [GATE])
    return job_pod(TEAM, job, index, requests={"cpu": "500m"}, **options)


def admitted(engine: QuotaEngine) -> list[str]:
    return sorted(
        key.split("/")[1].rsplit("-", 1)[0] for key in admissions(engine.recompute()).admitted
    )


def test_two_gangs_in_room_for_one_admit_one_whole_and_none_of_the_other():
    engine = run(*team("2"), *(member(job, i) for job in ("job-a", "job-b") for i in range(4)))
    decided = admissions(engine.recompute())
    assert admitted(engine) == ["job-a"] * 4
    waiting = {key: why.message for key, why in decided.waiting.items()}
    assert {why.cause for why in decided.waiting.values()} == {Cause.QUOTA}
    assert len(waiting) == 4 and all("job-b" in key for key in waiting)
    assert set(waiting.values()) == {
        "waiting for quota: team-a runtime cpu 2, used or admitted 2, "
        "gang team-a/job-b (4 pods seen, minimum 4) 2"
    }
    assert decided.gangs_waiting_per_group == {TEAM: 1}
    assert decided.waiting_per_group == {TEAM: 4}


def test_a_gang_short_of_its_minimum_waits_and_holds_nobody_back():
    pods = [member("job-a", i) for i in range(3)]
    single = job_pod(TEAM, "solo", node=None, gates=[GATE], requests={"cpu": "500m"})
    engine = run(*team("2"), *pods, single)
    decided = admissions(engine.recompute())
    assert admitted(engine) == ["solo"]
    assert {why.cause for why in decided.waiting.values()} == {Cause.GANG}
    assert {why.message for why in decided.waiting.values()} == {
        "waiting: gang team-a/job-a: 3 of its minimum 4 pods exist"
    }
    load(engine, member("job-a", 3))
    engine.recompute()
    assert admitted(engine) == ["job-a"] * 4  # solo still counts only once admitted by the edge


def test_an_elastic_gang_takes_its_minimum_together_and_the_rest_one_by_one():
    engine = run(*team("2.5"), *(member("job-a", i) for i in range(6)))
    decided = admissions(engine.recompute())
    assert len(decided.admitted) == 5  # 4 together, then one more fits
    assert len(decided.waiting) == 1


def test_members_of_an_admitted_gang_go_as_single_pods():
    running = [
        {
            **member("job-a", i),
            "spec": {**member("job-a", i)["spec"], "schedulingGates": [], "nodeName": "n1"},
        }
        for i in range(4)
    ]
    engine = run(*team("3"), *running, member("job-a", 4))
    assert admitted(engine) == ["job-a"]  # the fifth, alone


def test_the_new_pods_of_a_gang_being_deleted_are_a_gang_again():
    """A gang reclaimed whole: its pods are terminating (still using their cpu) when the Job's
    replacements come. They wait together, none of them alone in the room left, and go
    together once the old pods are gone."""
    leaving = [
        member("job-a", i, gates=[], node="n1", phase="Running", terminating=True) for i in range(4)
    ]
    replacements = [member("job-a", i) for i in range(4, 8)]
    engine = run(*team("3"), *leaving, *replacements)
    assert admitted(engine) == []  # 1 cpu left: 2 of them would fit alone
    for raw in leaving:
        engine.remove_pod(f"{raw['metadata']['namespace']}/{raw['metadata']['name']}")
    engine.recompute()
    assert admitted(engine) == ["job-a"] * 4


@pytest.mark.parametrize(
    ("minimum", "problem"),
    [
        ("four", "'four' is not a whole number of pods"),
        (" 4", "' 4' is not a whole number of pods"),
        ("1_0", "'1_0' is not a whole number of pods"),
        ("2147483648", "'2147483648' is not a whole number of pods"),
        ("0", "0; expected at least 1 pod"),
        (None, "missing; expected the gang's minimum number of pods"),
    ],
)
def test_a_malformed_minimum_is_a_problem_and_nothing_is_admitted(minimum, problem):
    engine = run(*team("4"), *(member("job-a", i, minimum=minimum) for i in range(4)))
    decided = admissions(engine.recompute())
    assert decided.admitted == ()
    field = "metadata.annotations[gang.scheduling.koordinator.sh/min-available]"
    assert all(f"{field}: {problem}" in why.message for why in decided.waiting.values())
    (found,) = [p for p in engine.problems if p.field == "gang minimum"]
    assert found.kind == "Pod" and found.message == f"{field}: {problem}"


def test_a_gang_split_across_groups_is_a_problem_and_waits_whole():
    other = quota("team-b", namespace="team-b", min={"cpu": 2}, max={"cpu": 2})
    pods = [member("job-a", i) for i in range(3)]
    stray = member("job-a", 3, labels={"quota.scheduling.koordinator.sh/name": "team-b"})
    engine = run(*team("4"), other, *pods, stray)
    assert admissions(engine.recompute()).admitted == ()
    (found,) = [p for p in engine.problems if p.field == "gang"]
    assert "has pods in groups team-a and team-b" in found.message


def test_a_scheduler_plugins_gang_waits_for_its_podgroup_and_takes_its_minimum():
    labels = {
        "scheduling.x-k8s.io/pod-group": "llama",
        "quota.scheduling.koordinator.sh/name": TEAM,
    }
    pods = [member("llama", i, labels=labels, annotations={}) for i in range(4)]
    engine = run(*team("2"), *pods)
    assert {why.message for why in admissions(engine.recompute()).waiting.values()} == {
        "waiting: gang team-a/llama has no valid minimum: its PodGroup team-a/llama "
        "(podgroups.scheduling.x-k8s.io) does not exist"
    }
    kind = next(k for k in POD_GROUP_KINDS if k.group == "scheduling.x-k8s.io")
    group = {
        "apiVersion": kind.api_version,
        "kind": "PodGroup",
        "metadata": {
            "name": "llama",
            "namespace": TEAM,
            "uid": "c4d5e6f7",
            "resourceVersion": "51903",
        },
        "spec": {"minMember": 4, "minResources": {"cpu": "2"}, "scheduleTimeoutSeconds": 300},
        "status": {"phase": "Pending"},
    }
    engine.set_pod_group(parse_pod_group(kind, group))
    assert admitted(engine) == ["llama"] * 4
