"""Pods that may run in any of a team's node pools: the gate's choice of a pool's group.

Two pools of 10 GPUs, V100 and A100, a tree each. Team A has 5 guaranteed in each (max 10),
team B 5 in each (max 5). Team A's group `team-a` (its namespace's) lists its two pool groups,
V100 first: its pods go to the first with room within its min, else the first with room when
borrowing.
"""

from __future__ import annotations

import json
from typing import Any

from eq_engine import QuotaEngine
from eq_engine.decisions import admissions
from eq_engine.model import LabelSelector, Requirement
from eq_engine.numbers import amounts
from hypothesis import given
from hypothesis import strategies as st

from tests.manifests import OWN, P, load, node, pod, quota, run

from .limit_trees import every, manifests, trees
from .test_pools import group, in_tree

GPU = "nvidia.com/gpu"
MODEL = "nvidia.com/gpu.product"
SELECTORS = {
    "v100": LabelSelector(expressions=(Requirement(MODEL, "In", ("V100",)),)),
    "a100": LabelSelector(expressions=(Requirement(MODEL, "In", ("A100",)),)),
}


def cluster(*more: dict[str, Any], pools: list[str] | None = None) -> list[dict[str, Any]]:
    objects = [node("n", cpu=100)]
    for tree in ("v100", "a100"):
        objects += [
            in_tree(
                tree,
                quota(tree, is_parent=True, min={GPU: 10, "cpu": 100}, max={GPU: 10, "cpu": 100}),
                total={GPU: 10, "cpu": 100},
            ),
            # cpu too, as much as the pool has, guaranteed to nobody at the teams' level
            group(f"team-a-{tree}", tree, parent=tree, min={GPU: 5}, max={GPU: 10, "cpu": 100}),
            group(f"team-b-{tree}", tree, parent=tree, min={GPU: 5}, max={GPU: 5}),
        ]
    choice = quota("team-a", namespace="team-a")
    listed = pools if pools is not None else ["team-a-v100", "team-a-a100"]
    choice["metadata"]["annotations"][OWN + "pools"] = json.dumps(listed)
    return [*objects, choice, *more]


def team_a(name: str, gpus: int = 1, **fields: Any) -> dict[str, Any]:
    return pod(
        name, namespace="team-a", node=None, gated=True, nvidia_com_gpu=gpus, cpu=1, **fields
    )


def placed(engine: QuotaEngine, **given: Any) -> dict[str, str]:
    return admissions(engine.recompute(), selectors=SELECTORS, **given).placed


def test_a_pod_goes_to_the_first_pool_with_room_within_its_min_then_borrows_in_order():
    engine = run(*cluster(*(team_a(f"a{i:02}") for i in range(12))))
    chosen = placed(engine)
    # five within team-a-v100's min, five within team-a-a100's, then the first that may lend
    assert [chosen[f"team-a/a{i:02}"] for i in range(12)] == ["team-a-v100"] * 5 + [
        "team-a-a100"
    ] * 5 + ["team-a-v100"] * 2


def test_a_waiting_pod_counts_in_the_first_pool_and_a_chosen_one_where_its_label_says():
    chosen = team_a("chosen", gpus=2, labels={OWN + "pool-quota": "team-a-a100"})
    engine = run(*cluster(team_a("waits", gpus=3), chosen))
    assert engine.status("team-a-v100").request == {GPU: 3, "cpu": 1000}
    assert engine.status("team-a-a100").request == {GPU: 2, "cpu": 1000}
    assert engine.status("team-a").request == {}


def test_the_pods_own_node_selector_skips_a_pool_it_may_not_use():
    only_a100 = team_a("a100-only")
    only_a100["spec"]["nodeSelector"] = {MODEL: "A100"}
    engine = run(*cluster(only_a100, team_a("any")))
    assert placed(engine) == {"team-a/a100-only": "team-a-a100", "team-a/any": "team-a-v100"}


def test_a_pool_whose_own_pods_wait_is_skipped():
    own = [
        pod(f"v{i}", namespace="team-a", node=None, gated=True, nvidia_com_gpu=6, priority=9)
        for i in range(2)
    ]
    for raw in own:
        raw["metadata"]["labels"][P + "name"] = "team-a-v100"  # its own, not a choice
    engine = run(*cluster(*own, team_a("a")))
    decided = admissions(engine.recompute(), selectors=SELECTORS)
    assert decided.admitted == ("team-a/v0", "team-a/a")  # v1 does not fit, and waits first
    assert decided.placed == {"team-a/a": "team-a-a100"}
    assert decided.waiting["team-a/v1"].cause.value == "waiting for quota"


def test_a_gang_goes_whole_to_one_pool():
    running = [
        pod(
            f"r{i}",
            namespace="team-a",
            nvidia_com_gpu=1,
            labels={OWN + "pool-quota": "team-a-v100"},
        )
        for i in range(2)
    ]
    gang = [team_a(f"g{i}") for i in range(4)]
    for raw in gang:
        raw["metadata"]["annotations"] = {
            "gang.scheduling.koordinator.sh/name": "train",
            "gang.scheduling.koordinator.sh/min-available": "4",
        }
    engine = run(*cluster(*running, *gang))
    # team-a-v100 has 3 left of its min: the gang of 4 goes whole to team-a-a100
    assert placed(engine) == {f"team-a/g{i}": "team-a-a100" for i in range(4)}


def test_nobody_is_admitted_twice_while_the_label_is_on_its_way():
    engine = run(*cluster(*(team_a(f"a{i}", gpus=5) for i in range(5))))
    first = admissions(engine.recompute(), selectors=SELECTORS)
    # within each min first, then borrowing team B's idle 5 in each: the fifth waits
    assert first.placed == {
        "team-a/a0": "team-a-v100",
        "team-a/a1": "team-a-a100",
        "team-a/a2": "team-a-v100",
        "team-a/a3": "team-a-a100",
    }
    # The watch shows no label yet: all five are counted in team-a-v100. The pods held count
    # where they were placed, so team-a-a100 is as full as team-a-v100.
    again = admissions(
        engine.recompute(), selectors=SELECTORS, holding=first.admitted, placed=first.placed
    )
    assert again.admitted == ()
    assert "team-a/a4" in again.waiting


def test_a_pod_of_no_pool_with_room_waits_and_says_why():
    busy = [
        pod(
            f"r{t}",
            namespace="team-a",
            nvidia_com_gpu=10,
            labels={OWN + "pool-quota": f"team-a-{t}"},
        )
        for t in ("v100", "a100")
    ]
    engine = run(*cluster(*busy, team_a("late")))
    decided = admissions(engine.recompute(), selectors=SELECTORS)
    assert decided.admitted == ()
    assert decided.waiting["team-a/late"].message == (
        "waiting for quota: no pool of team-a has room: team-a-v100 runtime nvidia.com/gpu 10, "
        "used or admitted 10, this pod 1; team-a-a100 runtime nvidia.com/gpu 10, used or "
        "admitted 10, this pod 1"
    )
    assert decided.waiting_per_group == {"team-a-v100": 1}


@given(trees(), st.data())
def test_runtime_with_more_is_the_runtime_once_a_pod_asks_it(tree, data):
    top, total = tree
    objects = manifests(top, total)
    leaves = [g.name for g in every(top) if not g.children]
    name = data.draw(st.sampled_from(leaves))
    more = data.draw(st.integers(0, 30))
    engine = run(*objects, capacity={"cpu": f"{total}m"})
    accounts = engine.recompute().accounts
    index = accounts.tree.index[name]
    guessed = accounts.runtime_with(index, amounts({"cpu": more}, accounts.names))
    load(engine, pod("more", namespace="more", quota=name, node=None, cpu=f"{more}m"))
    engine.recompute()
    assert (engine.status(name).runtime or {}).get("cpu", 0) == dict(
        zip(accounts.names, guessed.tolist(), strict=True)
    ).get("cpu", 0)
