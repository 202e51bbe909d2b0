"""`simulate --explain` and `--what-if` on a hand-built cluster whose numbers are worked out
here from the semantics (README, "The numbers"), not copied from the program's output.

research (min cpu 2, max 3) has team-a and team-b (min 1, max 3 each); one node of 4 cpu.
team-a runs five pods of 500m (a0 most important ... a4 least), team-b two.
- research asks 2500m + 1 = 3500m, clipped to its max: runtime 3 (the root has 4).
- Its children first get their mins (1 each); the 1 left goes to team-a, the only one asking
  for more: team-a's runtime is 2, team-b's 1.
- team-a's labels: a0 and a1 fill its min of 1 (in-quota), a2..a4 are over-quota.
- team-a uses 2500m over a runtime of 2: reclaim takes a4 (500m), and then it fits.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
import yaml

from tests.cli.test_simulate import simulate, write
from tests.manifests import node, pod, quota

CPU3 = {"cpu": "3"}


def cluster() -> list[dict]:
    return [
        quota("research", namespace="research", is_parent=True, min={"cpu": "2"}, max=CPU3),
        quota("team-a", namespace="team-a", parent="research", min={"cpu": "1"}, max=CPU3),
        quota("team-b", namespace="team-b", parent="research", min={"cpu": "1"}, max=CPU3),
        *(pod(f"a{i}", namespace="team-a", cpu="500m", priority=10 - i) for i in range(5)),
        *(pod(f"b{i}", namespace="team-b", cpu="500m", priority=10 - i) for i in range(2)),
        node("n1", cpu="4"),
    ]


def explain(tmp_path: Path, *what: str, objects: list[dict] | None = None) -> list[str]:
    path = write(tmp_path, "cluster.yaml", *(objects or cluster()))
    result = simulate("-f", path, "--explain", *what, "-o", "json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)["lines"]


def test_an_over_quota_pod_says_how_far_beyond_the_min_and_its_place_in_reclaim(tmp_path):
    lines = explain(tmp_path, "pod", "team-a/a4")
    assert lines[0] == "group: team-a (the ElasticQuota team-a is named like its namespace)"
    assert lines[1] == (
        "over-quota: with the 4 more important pods of team-a it needs cpu 2500m; "
        "the group's min is cpu 1, cpu 1500m beyond it"
    )
    assert (
        lines[2] == "reclaim: 1st of 1 pods team-a would lose now (used cpu 2500m, runtime cpu 2)"
    )


def test_an_in_quota_pod_fits_the_min_with_the_pods_before_it(tmp_path):
    lines = explain(tmp_path, "pod", "team-a/a1")
    assert lines[1] == (
        "in-quota: with the 1 more important pods of team-a it needs cpu 1; "
        "the group's min is cpu 1"
    )
    assert len(lines) == 2  # not a reclaim candidate


def test_a_waiting_pod_knows_its_place_what_blocks_it_and_what_would_admit_it(tmp_path):
    waiting = pod("a5", namespace="team-a", node=None, gated=True, cpu="500m")
    lines = explain(tmp_path, "pod", "team-a/a5", objects=[*cluster(), waiting])
    assert lines[1] == "waiting: 1st of 1 behind the admission gate of team-a"
    assert (
        lines[2] == "waiting for quota: team-a runtime cpu 2, used or admitted 2500m, this pod 500m"
    )
    # 2500m used + 500m for it against a runtime of 2: 1 cpu short.
    assert lines[3].startswith(
        "to be admitted: team-a's runtime must grow, or its pods must free, cpu 1"
    )


def test_a_group_says_how_its_runtime_is_reached_and_who_lends_and_borrows(tmp_path):
    lines = explain(tmp_path, "group", "team-a")
    assert "parent: research" in lines
    assert (
        "runtime cpu 2 = its min 1 + 1 of what its parent had left after the mins, shared by "
        "weight; it asks 2500m: the rest is its siblings' share or their min"
    ) in lines
    assert "lending idle min under research: nobody" in lines
    assert "using above its min (borrowed) under research: it (cpu 1500m)" in lines  # 2500m - 1


def test_what_if_team_b_asks_for_more(tmp_path):
    """team-b adds a 1-cpu pod: it asks 2, team-a 2500m; research still gives 3. After the mins,
    the 1 left is shared by weight (3 and 3): 500m each. team-a: runtime 1500m, so reclaim also
    takes a3; team-b: runtime 1500m for 2 used, and its new pod (over its min) is the victim."""
    change = write(tmp_path, "change.yaml", pod("b2", namespace="team-b", cpu="1", priority=1))
    result = simulate(
        "-f", write(tmp_path, "cluster.yaml", *cluster()), "--what-if", change, "-o", "json"
    )
    assert result.returncode == 0, result.stderr
    lines = json.loads(result.stdout)["lines"]
    assert "runtime: team-a cpu: 2 -> 1500m" in lines
    assert "runtime: team-b cpu: 1 -> 1500m" in lines
    assert "capacity label: team-b/b2: none -> over-quota" in lines
    assert [line for line in lines if line.startswith("would be evicted")] == [
        "would be evicted: team-a/a3",
        "would be evicted: team-b/b2",
    ]


def test_what_if_says_what_the_webhook_would_answer(tmp_path):
    raised = quota("team-b", namespace="team-b", parent="research", min={"cpu": "2"}, max=CPU3)
    change = write(tmp_path, "change.yaml", raised)
    result = simulate("-f", write(tmp_path, "c.yaml", *cluster()), "--what-if", change)
    assert result.returncode == 0, result.stderr
    assert (
        "admission: UPDATE team-b/team-b denied: ElasticQuota team-b/team-b: spec.min.cpu: "
        "2 + siblings' 1 exceeds parent research's min 2"
    ) in result.stdout.splitlines()


def test_the_tree_notes_what_the_numbers_do_not_show(tmp_path):
    objects = [
        *(o for o in cluster() if o["metadata"]["name"] != "team-b"),
        quota(
            "team-b", namespace="team-b", parent="research", min={"cpu": "1"}, max=CPU3, lend=False
        ),
        pod("a5", namespace="team-a", node=None, gated=True, cpu="500m"),
        # a pod's problem (its label names no group) is no problem of a group of its name
        pod("team-b", namespace="team-a", cpu="100m", quota="nope"),
    ]
    result = simulate("-f", write(tmp_path, "cluster.yaml", *objects), "-o", "tree")
    assert result.returncode == 0, result.stderr
    names = [line.split("─ ", 1)[1] for line in result.stdout.splitlines() if "─ " in line]
    assert "research (parent)" in names
    # a2, a3 and a4 run beyond team-a's min of 1 (a0 and a1 fill it); a5 waits at the gate
    assert "team-a (1 waiting, 3 over quota)" in names
    assert "team-b (does not lend)" in names


def test_a_waiting_pod_names_the_pods_it_would_take_the_place_of_and_they_name_it(tmp_path):
    team = quota("team", namespace="team", min={"cpu": "2"}, max={"cpu": "2"})
    objects = [
        team,
        pod("low-0", namespace="team", cpu="1", priority=1, start="2026-01-01T00:00:00Z"),
        pod("low-1", namespace="team", cpu="1", priority=1, start="2026-01-01T00:01:00Z"),
        pod("urgent", namespace="team", cpu="1", priority=10, node=None, gated=True),
        node("n1", cpu="4"),
    ]
    urgent = explain(tmp_path, "pod", "team/urgent", objects=objects)
    assert urgent[-1] == (
        "preemption: team/low-1 of lower priority would be evicted now to make room in team for "
        "pod team/urgent of priority 10, in this order"
    )
    low = explain(tmp_path, "pod", "team/low-1", objects=objects)
    assert low[-1] == (
        "preemption: 1st of 1 pods evicted to make room in team for pod team/urgent of priority 10"
    )
    assert not any(
        line.startswith("preemption")
        for line in explain(tmp_path, "pod", "team/low-0", objects=objects)
    )


def test_a_requeued_gang_says_how_many_times_and_until_when(tmp_path):
    """As the operator records it on the group (`requeued-gangs`), kubectl eq explains it."""
    team = quota("team", namespace="team", min={"cpu": "4"}, max={"cpu": "4"})
    record = {"gang:team/train": {"times": 2, "until": "2099-01-01T00:00:00Z"}}
    team["metadata"]["annotations"] = {
        "quota.scheduling.koordinator.sh/requeued-gangs": json.dumps(record)
    }
    gang = {
        "gang.scheduling.koordinator.sh/name": "train",
        "gang.scheduling.koordinator.sh/min-available": "2",
    }
    members = [
        pod(f"train-{i}", namespace="team", cpu="1", node=None, gated=True) for i in range(2)
    ]
    for member in members:
        member["metadata"]["annotations"] = gang
    lines = explain(tmp_path, "pod", "team/train-0", objects=[team, *members, node("n1", cpu="8")])
    assert lines[-1] == (
        "waiting, with no place in team's queue meanwhile: requeued: gang team/train, 2 times "
        "for not starting in time: not admitted again before 2099-01-01T00:00:00Z"
    )


@pytest.mark.parametrize(
    ("hard", "said"),
    [
        (
            [],
            "young: it has run {}s of the minimum run time 600s: reclaim and preemption take it "
            "only after every older candidate of team-a",
        ),
        (
            ["--reclaim-min-runtime-hard"],
            "protected: it has run {}s of the minimum run time 600s: reclaim and preemption never "
            "take it before then",
        ),
    ],
)
def test_a_young_pod_says_what_the_minimum_run_time_does_for_it(tmp_path, hard, said):
    started = time.time() - 60
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started))
    objects = [*cluster(), pod("young", namespace="team-a", cpu="500m", start=stamp)]
    path = write(tmp_path, "cluster.yaml", *objects)
    result = simulate(
        "-f",
        path,
        "--reclaim-min-runtime",
        "600",
        *hard,
        "--explain",
        "pod",
        "team-a/young",
        "-o",
        "json",
    )
    assert result.returncode == 0, result.stderr
    lines = json.loads(result.stdout)["lines"]
    pattern = re.escape(said).replace(re.escape("{}"), r"(\d+)")
    (ran,) = [int(m[1]) for line in lines if (m := re.fullmatch(pattern, line))]
    assert 60 <= ran < 600, lines  # from its start to the command's own clock


@pytest.mark.parametrize(
    "words",
    [
        ("pod", "a4", "-n", "team-a"),
        ("pod/a4", "--namespace", "team-a"),
        ("team-a/a4",),
        ("pods", "team-a/a4"),
    ],
)
def test_a_pod_is_named_as_kubectl_names_it(tmp_path, words):
    assert explain(tmp_path, *words) == explain(tmp_path, "pod", "team-a/a4")


def test_a_pod_named_without_a_namespace_is_in_default(tmp_path):
    path = write(tmp_path, "cluster.yaml", *cluster())
    result = simulate("-f", path, "--explain", "pod", "a4")
    assert result.returncode == 1
    assert result.stderr == "elastic-quota: error: no pod default/a4 (or it has finished)\n"


def test_yaml_is_the_json_document(tmp_path):
    path = write(tmp_path, "cluster.yaml", *cluster())
    for what in (["--explain", "group", "team-a"], []):
        as_json = simulate("-f", path, *what, "-o", "json")
        as_yaml = simulate("-f", path, *what, "-o", "yaml")
        assert as_json.returncode == as_yaml.returncode == 0, as_yaml.stderr
        assert yaml.safe_load(as_yaml.stdout) == json.loads(as_json.stdout)
