"""Pods that may use any of a team's pools, through `simulate`: examples/gpu-pools/any-model's
15 gated pods of team A, both teams otherwise idle. The gate sends 5 to team-a-v100 and 5 to
team-a-a100 within team A's guarantees, then 5 to team-a-v100 borrowing team B's idle cards
(docs/node-pools.md); the numbers are worked out there, not read from the program."""

from __future__ import annotations

import json

from tests.cli.test_simulate import simulate

FILES = (
    "-f", "examples/gpu-pools/", "-f", "examples/gpu-pools/snapshot/nodes.yaml",
    "-f", "examples/gpu-pools/any-model/", "-f", "examples/gpu-pools/any-model/snapshot/",
)  # fmt: skip


def test_json_says_which_pool_the_gate_sends_each_pod_to():
    result = simulate(*FILES, "-o", "json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    chosen = {key.rsplit("-", 1)[1]: group for key, group in report["pools"].items()}
    v100, a100 = "team-a-v100", "team-a-a100"
    assert chosen == {str(i): v100 if i < 5 or i >= 10 else a100 for i in range(15)}
    # while they wait, all 15 count in the first pool's group
    assert report["groups"][v100]["request"]["nvidia.com/gpu"] == "15"
    assert report["groups"]["team-a"]["request"] == {}
    assert report["pods"]["team-a/train-any-0"]["group"] == v100


def test_explain_says_where_the_gate_sends_a_pod():
    result = simulate(*FILES, "--explain", "pod", "team-a/train-any-7", "-o", "json")
    assert result.returncode == 0, result.stderr
    lines = json.loads(result.stdout)["lines"]
    assert lines[0] == (
        "group: team-a-v100 (its group team-a lists elastic-quota.dev/pools team-a-v100, "
        "team-a-a100; counted in the first until its gate chooses)"
    )
    assert lines[2:] == [
        "waiting: behind the admission gate, for one of team-a's pools (team-a-v100, team-a-a100)",
        "it goes to team-a-a100 now: the operator narrows its node affinity to that pool and "
        "lifts the gate at its next round",
    ]


def test_the_tree_says_where_the_groups_pods_go():
    result = simulate(*FILES, "-o", "tree")
    assert result.returncode == 0, result.stderr
    assert "team-a (its pods go to team-a-v100 or team-a-a100)" in result.stdout
