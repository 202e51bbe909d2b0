"""Lending and borrowing limits as `simulate` shows them: the tree's notes, `-o json`'s lendable,
lent and borrowed, and `--explain group`, on a cluster whose numbers are worked out here.

One node of 10 cpu. owner (min 6, max 10, lending limit 2) runs nothing; burst (min 2, max 10,
borrowing limit 1) asks 4 and runs 3; free (no min, max 10) asks 6 and runs 3.
- owner keeps 6 - 2 = 4 whatever it asks: its request is 4, and it lends 2.
- burst's request is clipped to 2 + 1 = 3 in the split.
- The root's 10: owner 4, burst its min 2, free 0; the 4 left by weight (max, 10 each) 2 and 2;
  burst takes 1 of its 2 (it asks 3), the other goes to free: owner 4, burst 3, free 3.
- burst's b0 fills its min (in quota), b1 is over quota; free's three running pods are.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.test_simulate import simulate, write
from tests.manifests import BORROWING_LIMIT, node, pod, quota

TEN = {"cpu": "10"}


def cluster(tmp_path: Path) -> str:
    return write(
        tmp_path,
        "cluster.yaml",
        quota("owner", namespace="owner", min={"cpu": "6"}, max=TEN, lending_limit={"cpu": "2"}),
        quota("burst", namespace="burst", min={"cpu": "2"}, max=TEN, borrowing_limit={"cpu": "1"}),
        quota("free", namespace="free", max=TEN),
        pod("b0", namespace="burst", cpu="2"),
        pod("b1", namespace="burst", cpu="1"),
        pod("b2", namespace="burst", cpu="1", node=None),
        *(
            pod(f"f{i}", namespace="free", cpu="1", node="node-1" if i < 3 else None)
            for i in range(6)
        ),
        node("node-1", cpu="10"),
    )


def test_json_says_what_each_group_may_lend_lends_and_borrows(tmp_path):
    result = simulate("-f", cluster(tmp_path), "-o", "json")
    assert result.returncode == 0, result.stderr
    groups = json.loads(result.stdout)["groups"]
    numbers = {
        name: {
            key: groups[name][key] for key in ("request", "runtime", "lendable", "lent", "borrowed")
        }
        for name in ("owner", "burst", "free")
    }
    assert numbers == {
        "owner": {
            "request": {"cpu": "4"},
            "runtime": {"cpu": "4"},
            "lendable": {"cpu": "2"},
            "lent": {"cpu": "2"},
            "borrowed": {},
        },
        "burst": {
            "request": {"cpu": "4"},
            "runtime": {"cpu": "3"},
            "lendable": {"cpu": "2"},
            "lent": {},
            "borrowed": {"cpu": "1"},
        },
        "free": {
            "request": {"cpu": "6"},
            "runtime": {"cpu": "3"},
            "lendable": {},
            "lent": {},
            "borrowed": {"cpu": "3"},
        },
    }
    assert groups["burst"]["borrowingLimit"] == {"cpu": "1"}
    assert groups["owner"]["borrowingLimit"] is None


def test_the_tree_notes_the_limits(tmp_path):
    result = simulate("-f", cluster(tmp_path), "-o", "tree")
    assert result.returncode == 0, result.stderr
    heads = [
        line
        for line in result.stdout.splitlines()
        if line.lstrip("├└─│ ").startswith(("owner", "burst", "free"))
    ]
    assert [h.lstrip("├└─│ ") for h in heads] == [
        "burst (borrows at most cpu 1, 1 over quota)",
        "free (3 over quota)",
        "owner (lends at most cpu 2)",
    ]


def test_explain_group_says_what_the_limits_hold_back(tmp_path):
    def lines(name: str) -> list[str]:
        result = simulate("-f", cluster(tmp_path), "--explain", "group", name, "-o", "json")
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout)["lines"]

    owner = lines("owner")
    assert "keeps cpu 4 of its min whether it asks for it or not: it lends at most cpu 2" in owner
    assert "runtime cpu 4: it asks 4, less than its min 6, and lends the rest" in owner
    burst = lines("burst")
    assert f"borrows at most cpu 1 above its min ({BORROWING_LIMIT})" in burst
    assert (
        "runtime cpu 3 = its min 2 + 1 of what its parent had left after the mins, "
        "shared by weight (its min plus its borrowing limit)"
    ) in burst
