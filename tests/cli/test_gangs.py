"""Pod groups (gangs) through `elastic-quota simulate`, on dumps shaped like `kubectl get -o
json`: Job pods with Koordinator's gang annotations, Kubeflow-style pods naming a
scheduler-plugins PodGroup, and the PodGroup objects themselves (docs/pod-groups-sources.md).

team-a may use 2 cpu (its max; the node has 8), and nothing runs there yet: its runtime is 2.
Two Jobs of 4 pods of 500m each, gang minimum 4, all behind the admission gate: train-a comes
first in the queue (same priority and creation time; its name sorts first) and takes the 2 cpu
whole; train-b's 4 pods would need 2 cpu more, so all 4 wait, and so does nothing else.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.cli.test_simulate import simulate
from tests.realistic import P, elastic_quota, job_pod, kubectl_list, node, pod
from tests.realistic.metadata import managed_entry, object_metadata, owner_reference

GATE = P + "admission"
GANG = "gang.scheduling.koordinator.sh/"


def gang_pod(job: str, index: int, *, minimum: str = "4", **options: Any) -> dict[str, Any]:
    """A pod of Job `job` in team-a, 500m, behind the admission gate, in Koordinator's gang
    named after the job."""
    annotations = {GANG + "name": job, GANG + "min-available": minimum}
    options.setdefault("gates", [GATE])
    return job_pod(
        "team-a",
        job,
        index,
        annotations=annotations,
        requests={"cpu": "500m", "memory": "1Gi"},
        **options,
    )


def pod_group(namespace: str, name: str, min_member: int) -> dict[str, Any]:
    """A scheduler-plugins PodGroup as Kubeflow's training-operator makes it."""
    spec = {"minMember": min_member, "scheduleTimeoutSeconds": 300}
    owner = owner_reference("kubeflow.org/v1", "PyTorchJob", name)
    managed = [managed_entry("manager", "Update", "scheduling.x-k8s.io/v1alpha1", {"spec": spec})]
    return {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "PodGroup",
        "metadata": object_metadata(
            "PodGroup",
            namespace,
            name,
            generation=1,
            ownerReferences=[owner],
            managedFields=managed,
        ),
        "spec": spec,
        "status": {"phase": "Pending"},
    }


def worker(job: str, index: int) -> dict[str, Any]:
    """A PyTorchJob's worker in team-b naming its PodGroup by scheduler-plugins' label."""
    labels = {
        "scheduling.x-k8s.io/pod-group": job,
        "training.kubeflow.org/job-name": job,
        "training.kubeflow.org/replica-index": str(index),
        "training.kubeflow.org/replica-type": "worker",
    }
    return pod(
        "team-b",
        f"{job}-worker-{index}",
        owner=owner_reference("kubeflow.org/v1", "PyTorchJob", job),
        labels=labels,
        requests={"cpu": "500m"},
        gates=[GATE],
        manager="manager",
    )


def cluster(*extra: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        elastic_quota("team-a", "team-a", max={"cpu": "2", "memory": "16Gi"}),
        elastic_quota("team-b", "team-b", max={"cpu": "2"}),
        node("worker-1", cpu="8"),
        *extra,
    ]


TWO_GANGS = [
    *(gang_pod("train-a", i) for i in range(4)),
    *(gang_pod("train-b", i) for i in range(4)),
]


def dump(tmp_path: Path, objects: list[dict[str, Any]]) -> str:
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps(kubectl_list(*objects)))
    return str(path)


def report(tmp_path: Path, objects: list[dict[str, Any]]) -> dict[str, Any]:
    result = simulate("-f", dump(tmp_path, objects), "-o", "json")
    assert result.returncode == 0, result.stderr
    document: dict[str, Any] = json.loads(result.stdout)
    return document


def explain(tmp_path: Path, objects: list[dict[str, Any]], key: str) -> list[str]:
    result = simulate("-f", dump(tmp_path, objects), "--explain", "pod", key, "-o", "json")
    assert result.returncode == 0, result.stderr
    lines: list[str] = json.loads(result.stdout)["lines"]
    return lines


def members(document: dict[str, Any], job: str) -> list[str]:
    return sorted(k for k in document["pods"] if k.startswith(f"team-a/{job}-"))


def test_of_two_gangs_in_room_for_one_the_first_is_admitted_whole_and_the_second_waits(tmp_path):
    document = report(tmp_path, cluster(*TWO_GANGS))
    first, second = (
        document["gangs"]["gang:team-a/train-a"],
        document["gangs"]["gang:team-a/train-b"],
    )
    assert first == {
        "name": "team-a/train-a",
        "source": f"annotation {GANG}name (Koordinator)",
        "groups": ["team-a"],
        "minimum": 4,
        "pods": 4,
        "gated": 4,
        "admitted": 4,
        "bound": 0,
        "request": {"cpu": "2", "memory": "4Gi"},
        "waiting": None,
        "problem": None,
    }
    assert (second["admitted"], second["gated"]) == (0, 4)
    assert second["waiting"] == (
        "waiting for quota: team-a runtime cpu 2, used or admitted 2, "
        "gang team-a/train-b (4 pods seen, minimum 4) 2"
    )
    assert document["waiting"] == {"team-a": {"pods": 4, "gangs": 1, "gangPods": 4}}
    for key in members(document, "train-b"):
        assert document["pods"][key] == {
            "group": "team-a",
            "capacity": None,
            "gang": "gang:team-a/train-b",
        }


def test_a_waiting_member_explains_its_gang_its_request_and_the_room(tmp_path):
    document = report(tmp_path, cluster(*TWO_GANGS))
    key = members(document, "train-b")[0]
    lines = explain(tmp_path, cluster(*TWO_GANGS), key)
    assert lines[1] == f"gang: team-a/train-b, from annotation {GANG}name (Koordinator)"
    assert lines[2].startswith("gang pods: 4 of its minimum 4 exist (annotation ")
    assert lines[3] == (
        "waiting: 2nd of 2 places behind the admission gate of team-a "
        "(a gang takes one place, its most important pod's)"
    )
    # the 2 cpu of team-a's runtime go to train-a, ahead of it in the same decision (memory:
    # the runtime covers what the 8 pods ask, 8Gi, within the max of 16Gi)
    assert lines[4] == (
        "gang request: cpu 2, memory 4Gi for its first 4 pods, all admitted together or none; "
        "room in team-a: cpu 0, memory 4Gi (runtime cpu 2, memory 8Gi, used cpu 0, "
        "memory 0, admitted ahead of it cpu 2, memory 4Gi)"
    )
    assert lines[5].startswith("waiting for quota: team-a runtime cpu 2, used or admitted 2")
    assert lines[6].startswith(
        "to be admitted: team-a's runtime must grow, or its pods must free, cpu 2"
    )


def test_a_member_of_the_admitted_gang_says_its_gang_fits(tmp_path):
    document = report(tmp_path, cluster(*TWO_GANGS))
    key = members(document, "train-a")[2]
    lines = explain(tmp_path, cluster(*TWO_GANGS), key)
    assert lines[3].startswith("waiting: 1st of 2 places behind the admission gate of team-a")
    assert lines[4].endswith(
        "room in team-a: cpu 2, memory 8Gi (runtime cpu 2, memory 8Gi, used cpu 0, memory 0, "
        "admitted ahead of it cpu 0, memory 0)"
    )
    assert lines[5] == (
        "its gang's 4 pods fit together: the operator lifts the gate at its next round"
    )


def test_a_gang_short_of_its_minimum_waits_and_holds_nobody_back(tmp_path):
    short = [gang_pod("train-c", i) for i in range(3)]
    single = job_pod("team-a", "lint", gates=[GATE], requests={"cpu": "500m"})
    objects = cluster(*short, single)
    document = report(tmp_path, objects)
    gang = document["gangs"]["gang:team-a/train-c"]
    assert (gang["pods"], gang["minimum"], gang["admitted"]) == (3, 4, 0)
    assert gang["waiting"] == "waiting: gang team-a/train-c: 3 of its minimum 4 pods exist"
    assert document["waiting"] == {"team-a": {"pods": 3, "gangs": 1, "gangPods": 3}}
    lines = explain(tmp_path, objects, members(document, "train-c")[0])
    assert lines[2].startswith("gang pods: 3 of its minimum 4 exist")
    assert lines[3:] == [
        "waiting: its gang cannot be judged yet, so it takes no place in team-a's queue",
        "waiting: gang team-a/train-c: 3 of its minimum 4 pods exist",
    ]
    # the single pod behind it in the queue is admitted: the gang holds no place
    assert explain(tmp_path, objects, members(document, "lint")[0])[-1] == (
        "it fits now: the operator lifts the gate at its next round"
    )


def test_a_malformed_minimum_is_a_problem_named_by_its_field(tmp_path):
    objects = cluster(*(gang_pod("train-d", i, minimum="four") for i in range(4)))
    document = report(tmp_path, objects)
    field = f"metadata.annotations[{GANG}min-available]"
    problem = f"{field}: 'four' is not a whole number of pods"
    assert document["gangs"]["gang:team-a/train-d"]["problem"] == problem
    assert document["gangs"]["gang:team-a/train-d"]["admitted"] == 0
    assert any(problem in line for line in document["problems"])
    lines = explain(tmp_path, objects, members(document, "train-d")[0])
    assert lines[2:4] == ["gang pods: 4 exist, and no valid minimum", f"gang problem: {problem}"]
    assert lines[-1] == f"waiting: gang team-a/train-d has no valid minimum: {problem}"


def test_a_scheduler_plugins_gang_takes_its_minimum_from_its_pod_group(tmp_path):
    workers = [worker("llama-ft", i) for i in range(4)]
    # PodGroup minMember 4: the 4 workers (2 cpu) fit team-b's 2 cpu whole
    grouped = report(tmp_path, cluster(pod_group("team-b", "llama-ft", 4), *workers))
    gang = grouped["gangs"]["podgroups.scheduling.x-k8s.io:team-b/llama-ft"]
    assert gang["source"] == (
        "PodGroup scheduling.x-k8s.io/v1alpha1, named by the pods' label "
        "scheduling.x-k8s.io/pod-group"
    )
    assert (gang["minimum"], gang["admitted"], gang["problem"]) == (4, 4, None)
    assert grouped["waiting"] == {}
    lines = explain(
        tmp_path, cluster(pod_group("team-b", "llama-ft", 4), *workers), "team-b/llama-ft-worker-0"
    )
    assert lines[2] == (
        "gang pods: 4 of its minimum 4 exist (spec.minMember of PodGroup team-b/llama-ft)"
    )
    # without its PodGroup in the dump the gang has no minimum: nothing of it is admitted
    alone = report(tmp_path, cluster(*workers))
    gang = alone["gangs"]["podgroups.scheduling.x-k8s.io:team-b/llama-ft"]
    assert (gang["minimum"], gang["admitted"]) == (None, 0)
    assert gang["waiting"] == (
        "waiting: gang team-b/llama-ft has no valid minimum: its PodGroup team-b/llama-ft "
        "(podgroups.scheduling.x-k8s.io) does not exist"
    )
    assert alone["waiting"] == {"team-b": {"pods": 4, "gangs": 1, "gangPods": 4}}


def test_a_pod_group_of_another_api_is_skipped_with_a_note(tmp_path):
    volcano = {**pod_group("team-b", "x", 2), "apiVersion": "scheduling.volcano.sh/v1beta1"}
    result = simulate("-f", dump(tmp_path, cluster(volcano)), "-o", "json")
    assert result.returncode == 0, result.stderr
    assert "ignored 1 object(s) of kind PodGroup (scheduling.volcano.sh/v1beta1)" in result.stderr
    assert json.loads(result.stdout)["gangs"] == {}


def test_the_tree_and_the_table_count_waiting_gangs_and_their_pods(tmp_path):
    single = job_pod("team-a", "lint", gates=[GATE], requests={"cpu": "500m"}, priority=-1)
    path = dump(tmp_path, cluster(*TWO_GANGS, single))
    tree = simulate("-f", path, "-o", "tree")
    assert tree.returncode == 0, tree.stderr
    assert "├─ team-a (5 waiting: 4 in 1 gang)" in tree.stdout.splitlines()
    assert max(len(line) for line in tree.stdout.splitlines()) <= 80
    table = simulate("-f", path)
    lines = table.stdout.splitlines()
    start = lines.index("Waiting (behind the admission gate; a gang waits whole):")
    assert lines[start + 1] == "  team-a: 5 pods: 4 in 1 gang"
    # the rows fit 100 columns (the footer keeps one line per entry, however long)
    assert max(len(line) for line in lines[: lines.index("")]) <= 100


def test_an_over_used_gang_is_reclaimed_whole_in_one_eviction(tmp_path):
    running = [gang_pod("train-e", i, gates=[], node="worker-1") for i in range(4)]
    objects = [
        elastic_quota("team-a", "team-a", max={"cpu": "1", "memory": "16Gi"}),
        node("worker-1", cpu="8"),
        *running,
    ]
    document = report(tmp_path, objects)
    assert sorted(document["reclaim"]["team-a"]) == members(document, "train-e")
    gang = document["gangs"]["gang:team-a/train-e"]
    assert (gang["gated"], gang["bound"]) == (0, 4)
    lines = explain(tmp_path, objects, members(document, "train-e")[0])
    assert lines[3] == (
        "gang admitted: 4 of its 4 pods are past the admission gate, 4 bound to nodes; those "
        "still behind it go as single pods"
    )
    assert lines[-1] == (
        "reclaim: 1st of 1 evictions team-a would make now with its gang team-a/train-e's 4 "
        "running pods (a gang goes whole, as one eviction; used cpu 2, memory 4Gi, runtime "
        "cpu 1, memory 4Gi)"
    )


def budgeted(*, allowed: int = 0) -> list[dict[str, Any]]:
    """team-a runs two pods of 1 cpu in a runtime of 1; a PodDisruptionBudget that allows
    `allowed` disruptions now covers the less important one, `batch`."""
    budget = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": object_metadata("PodDisruptionBudget", "team-a", "batch"),
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "batch"}}},
        "status": {"disruptionsAllowed": allowed, "currentHealthy": 1, "desiredHealthy": 1},
    }
    return [
        elastic_quota("team-a", "team-a", max={"cpu": "1"}),
        node("worker-1", cpu="8"),
        pod("team-a", "serve", requests={"cpu": "1"}, priority=10, labels={"app": "serve"}),
        pod("team-a", "batch", requests={"cpu": "1"}, labels={"app": "batch"}),
        budget,
    ]


def test_a_disruption_budget_in_the_dump_keeps_its_pod_from_reclaim(tmp_path):
    """Reclaim takes the less important `batch`, unless its budget allows no disruption now."""
    assert report(tmp_path, budgeted(allowed=1))["reclaim"] == {"team-a": ["team-a/batch"]}
    assert report(tmp_path, budgeted())["reclaim"] == {"team-a": ["team-a/serve"]}


def test_what_if_a_pod_group_is_created(tmp_path):
    """The workers wait for their PodGroup; with it applied, all four would be admitted."""
    workers = [worker("llama-ft", i) for i in range(4)]
    change = tmp_path / "change.json"
    change.write_text(json.dumps(pod_group("team-b", "llama-ft", 4)))
    result = simulate("-f", dump(tmp_path, cluster(*workers)), "--what-if", str(change))
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        f"would be admitted: team-b/llama-ft-worker-{i}" for i in range(4)
    ]


@pytest.mark.parametrize(
    ("api_version", "spec", "naming", "source"),
    [
        (
            "scheduling.sigs.k8s.io/v1alpha1",
            {"minMember": 4},
            {"labels": {"pod-group.scheduling.sigs.k8s.io": "train-g"}},
            "label pod-group.scheduling.sigs.k8s.io",
        ),
        (
            "scheduling.k8s.io/v1alpha2",
            {"schedulingPolicy": {"gang": {"minCount": 4}}},
            {"schedulingGroup": {"podGroupName": "train-g"}},
            "spec.schedulingGroup.podGroupName",
        ),
    ],
)
def test_koordinator_s_and_kubernetes_pod_groups_are_read_too(
    tmp_path, api_version, spec, naming, source
):
    group = {**pod_group("team-a", "train-g", 4), "apiVersion": api_version, "spec": spec}
    pods = [
        job_pod("team-a", "train-g", i, gates=[GATE], requests={"cpu": "500m"}, **naming)
        for i in range(4)
    ]
    document = report(tmp_path, cluster(group, *pods))
    (gang,) = document["gangs"].values()
    assert gang["source"] == f"PodGroup {api_version}, named by the pods' {source}"
    assert (gang["minimum"], gang["admitted"]) == (4, 4)
