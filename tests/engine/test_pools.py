"""Quota trees per node pool: each tree splits its own total (Koordinator's MultiQuotaTree).

A group is in the tree its `tree-id` label names; a tree's total is its root's
`total-resource` annotation (the root: labelled `is-root`, made from an ElasticQuotaProfile);
the default tree keeps what the pools leave of the cluster. The first tests transcribe
Koordinator's (pkg/scheduler/plugins/elasticquota/quota_handler_test.go at a7a1b76) with their
numbers: cpu in cores, memory in bytes.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from eq_engine import EngineConfig
from eq_engine.decisions.reclaim import reclaims
from eq_engine.explaining import explain_group, explain_pod

from tests.manifests import P, load, node, pod, quota, run, runtime

ROOT = EngineConfig().root_name
DEFAULT = EngineConfig().default_name


def in_tree(
    tree_id: str, raw: dict[str, Any], total: dict[str, Any] | None = None
) -> dict[str, Any]:
    """`raw` labelled into tree `tree_id`; with `total`, as its root."""
    raw["metadata"]["labels"][P + "tree-id"] = tree_id
    if total is not None:
        raw["metadata"]["labels"][P + "is-root"] = "true"
        raw["metadata"]["annotations"][P + "total-resource"] = json.dumps(total)
    return raw


def group(name: str, tree_id: str, parent: str | None = None, **fields: Any) -> dict[str, Any]:
    return in_tree(tree_id, quota(name, parent=parent, **fields))


def cm(cpu: int, memory: int) -> dict[str, int]:
    """Koordinator's test `createResourceList(cpu, memory)` in canonical units."""
    return {"cpu": cpu * 1000, "memory": memory}


def res(cpu: int, memory: int) -> dict[str, Any]:
    return {"cpu": str(cpu), "memory": str(memory)}


def pool_root(tree_id: str) -> str:
    return f"{ROOT}/{tree_id}"


def test_a_group_is_in_the_tree_its_label_names():
    engine = run(
        quota("1"),
        group("3", "tree-a"),
        group("4", "tree-b"),
        capacity={"cpu": "501952056"},
    )
    trees = {s.name: s.tree for s in engine.statuses()}
    assert trees["1"] == "" and trees["3"] == "tree-a" and trees["4"] == "tree-b"
    parents = {s.name: s.parent for s in engine.statuses()}
    assert parents == {
        ROOT: None,
        engine.config.system_name: ROOT,
        DEFAULT: ROOT,
        pool_root("tree-a"): None,
        pool_root("tree-b"): None,
        "1": ROOT,
        "3": pool_root("tree-a"),
        "4": pool_root("tree-b"),
    }


def koordinator_update_and_delete_cluster() -> list[dict[str, Any]]:
    """tree-a: test1 > (test1-a > a-123, test1-b > b-123); tree-b: test2 > test2-a. Max
    [100, 200] everywhere; mins [100, 160] at the top, [50, 80] below. The tops are the
    trees' roots, each with a total of [100, 200] (Koordinator's test sets the trees' totals
    directly)."""

    def member(name: str, parent: str, tree_id: str, *, is_parent: bool) -> dict[str, Any]:
        return group(name, tree_id, parent, is_parent=is_parent, min=res(50, 80), max=res(100, 200))

    return [
        in_tree(
            "tree-a",
            quota("test1", is_parent=True, min=res(100, 160), max=res(100, 200)),
            total=res(100, 200),
        ),
        member("test1-a", "test1", "tree-a", is_parent=True),
        member("a-123", "test1-a", "tree-a", is_parent=False),
        member("test1-b", "test1", "tree-a", is_parent=True),
        member("b-123", "test1-b", "tree-a", is_parent=False),
        in_tree(
            "tree-b",
            quota("test2", is_parent=True, min=res(100, 160), max=res(100, 200)),
            total=res(100, 200),
        ),
        member("test2-a", "test2", "tree-b", is_parent=False),
        pod("pod", quota="a-123", cpu="40", memory="100"),
        pod("pod2", quota="b-123", cpu="40", memory="100"),
        pod("pod1", quota="test2-a", cpu="20", memory="40"),
    ]


def test_koordinator_update_and_delete_with_tree_ids():
    objects = koordinator_update_and_delete_cluster()
    engine = run(*objects, capacity=res(200, 400))
    for name in ("a-123", "test1-a", "b-123", "test1-b"):
        assert runtime(engine, name) == cm(40, 100), name
    assert runtime(engine, "test1") == cm(80, 200)
    assert runtime(engine, "test2-a") == runtime(engine, "test2") == cm(20, 40)

    moved = quota("b-123", parent="test1-a", min=res(50, 80), max=res(100, 200))
    load(engine, in_tree("tree-a", moved))
    engine.recompute()
    assert runtime(engine, "test1-b") == cm(0, 0)
    assert engine.status("test1-b").request == engine.status("test1-b").used == cm(0, 0)
    for name in ("test1-a", "test1"):
        status = engine.status(name)
        assert status.request == status.used == status.runtime == cm(80, 200), name
    assert engine.status("b-123").parent == "test1-a"
    assert runtime(engine, "b-123") == runtime(engine, "a-123") == cm(40, 100)

    engine.remove_quota("quotas", "b-123")  # its pod goes to the default group, default tree
    engine.recompute()
    for name in ("test1-a", "test1"):
        status = engine.status(name)
        assert status.request == status.used == status.runtime == cm(40, 100), name
    assert runtime(engine, "test2") == cm(20, 40)
    assert dict(engine.status(DEFAULT).used) == cm(40, 100)


def test_koordinator_root_quota_add_and_update():
    root = in_tree(
        "tree-cn-hangzhou-a",
        quota("cn-hangzhou-a", is_parent=True, min=res(100, 200), max=res(100, 200)),
        total=res(100, 200),
    )

    def leaf(name: str) -> dict[str, Any]:
        return group(
            name, "tree-cn-hangzhou-a", "cn-hangzhou-a", min=res(40, 80), max=res(100, 200)
        )

    engine = run(root, leaf("test1-a"), leaf("test1-b"), capacity=res(1000, 10000))
    assert runtime(engine, pool_root("tree-cn-hangzhou-a")) == cm(100, 200)

    load(engine, pod("pod1", quota="test1-a", cpu="40", memory="100"))
    engine.recompute()
    for name in ("test1-a", "cn-hangzhou-a"):
        status = engine.status(name)
        assert status.request == status.used == status.runtime == cm(40, 100), name

    load(engine, pod("pod2", quota="test1-b", cpu="50", memory="90"))
    engine.recompute()
    assert runtime(engine, "test1-b") == cm(50, 90)
    status = engine.status("cn-hangzhou-a")
    assert status.request == status.used == status.runtime == cm(90, 190)

    root["metadata"]["annotations"][P + "total-resource"] = json.dumps(res(200, 400))
    load(engine, root)
    engine.recompute()
    assert runtime(engine, pool_root("tree-cn-hangzhou-a")) == cm(200, 400)


def test_koordinator_handler_quota_when_root():
    """The pools' totals come off the default tree's: three nodes of [100, 1000]; a pool of
    [200, 2000] leaves it [100, 1000], of [250, 2500] [50, 500]; its root deleted, all."""
    nodes = [node(f"node{i}", cpu="100", memory="1000") for i in (1, 2, 3)]
    engine = run(*nodes)
    assert runtime(engine, ROOT) == cm(300, 3000)

    root = in_tree(
        "tree-cn-hangzhou-a",
        quota("cn-hangzhou-a", is_parent=True, min=res(200, 2000), max=res(200, 2000)),
        total=res(200, 2000),
    )
    load(engine, root)
    engine.recompute()
    assert runtime(engine, pool_root("tree-cn-hangzhou-a")) == cm(200, 2000)
    assert runtime(engine, ROOT) == cm(100, 1000)

    root["metadata"]["annotations"][P + "total-resource"] = json.dumps(res(250, 2500))
    load(engine, root)
    engine.recompute()
    assert runtime(engine, pool_root("tree-cn-hangzhou-a")) == cm(250, 2500)
    assert runtime(engine, ROOT) == cm(50, 500)

    engine.remove_quota("quotas", "cn-hangzhou-a")
    engine.recompute()
    assert runtime(engine, ROOT) == cm(300, 3000)


def test_a_root_that_ignores_the_default_tree_takes_nothing_from_it():
    root = in_tree("spare", quota("spare", is_parent=True, max=res(10, 10)), total=res(10, 10))
    root["metadata"]["labels"][P + "ignore-default-tree"] = "true"
    engine = run(root, node("n", cpu="100", memory="1000"))
    assert runtime(engine, ROOT) == cm(100, 1000)
    assert runtime(engine, pool_root("spare")) == cm(10, 10)


def gpu_pools() -> list[dict[str, Any]]:
    """The seed's example in small: 10 A100s and 10 V100s; team B wants 5 of each, team A
    runs on both."""
    gpu = "nvidia.com/gpu"
    roots = [
        in_tree(
            model,
            quota(model, is_parent=True, min={gpu: "10"}, max={gpu: "1000"}),
            total={gpu: "10"},
        )
        for model in ("a100", "v100")
    ]
    teams = [
        group(f"{team}-{model}", model, model, min={gpu: share}, max={gpu: "10"})
        for model in ("a100", "v100")
        for team, share in (("a", "5"), ("b", "5"))
    ]
    return [*roots, *teams]


def test_each_pool_is_split_on_its_own_total():
    """Team A fills the V100s while B is idle; B's V100 pods then come: A is over its V100
    runtime and reclaim takes A's pods there, not on the A100s."""
    a_pods = [pod(f"a-v{i}", quota="a-v100", nvidia_com_gpu="1") for i in range(10)]
    a100_pods = [pod(f"a-a{i}", quota="a-a100", nvidia_com_gpu="1") for i in range(5)]
    engine = run(*gpu_pools(), *a_pods, *a100_pods, capacity={"nvidia.com/gpu": "20"})
    assert runtime(engine, "a-v100") == {"nvidia.com/gpu": 10}
    assert engine.status("a-v100").tree == "v100"

    load(engine, *(pod(f"b-v{i}", quota="b-v100", nvidia_com_gpu="1", node=None) for i in range(5)))
    engine.recompute()
    assert runtime(engine, "a-v100") == runtime(engine, "b-v100") == {"nvidia.com/gpu": 5}
    assert runtime(engine, "a-a100") == {"nvidia.com/gpu": 5}  # the A100s are another pool
    plans = reclaims(engine.recompute())
    assert set(plans) == {"a-v100"}
    assert len(plans["a-v100"].victims()) == 5


def test_min_scaling_is_per_tree():
    """A pool of 8 GPUs under two busy groups with mins of 8 scales them to 4 each; the
    default tree's min, within its own total (16 - 8), stays."""
    gpu = "nvidia.com/gpu"
    engine = run(
        in_tree(
            "p", quota("p", is_parent=True, min={gpu: "8"}, max={gpu: "100"}), total={gpu: "8"}
        ),
        group("x", "p", "p", min={gpu: "8"}, max={gpu: "8"}),
        group("y", "p", "p", min={gpu: "8"}, max={gpu: "8"}),
        quota("z", min={gpu: "4"}, max={gpu: "4"}),
        pod("x1", quota="x", nvidia_com_gpu="8"),
        pod("y1", quota="y", nvidia_com_gpu="8"),
        capacity={gpu: "16"},
    )
    assert engine.status("x").effective_min == engine.status("y").effective_min == {gpu: 4}
    assert engine.status("z").effective_min == {gpu: 4}  # the default tree keeps 16 - 8


def test_a_tree_without_a_root_has_nothing_and_says_so():
    engine = run(group("lost", "gone", min=res(1, 1), max=res(4, 4)), capacity=res(10, 10))
    assert runtime(engine, "lost") == cm(0, 0)
    assert [str(p) for p in engine.problems] == [
        f"ElasticQuota quotas/lost: metadata.labels[{P}tree-id]: tree 'gone' has no root (an "
        f'ElasticQuota labelled {P}is-root: "true" with a {P}total-resource annotation, made '
        "from an ElasticQuotaProfile): its total is 0"
    ]


STRAYS = [
    (
        "a pool's group under another pool's",
        group("stray", "a100", "v100"),
        f"{ROOT}/a100",
        "tree id is 'a100', parent v100's is 'v100': a group is in its parent's tree; the group "
        "is placed under the root of tree 'a100'",
    ),
    (
        "a default-tree group under a pool's",
        quota("stray", parent="a-v100"),
        ROOT,
        "tree id is unset, parent a-v100's is 'v100': a group is in its parent's tree; the "
        "group is placed under the root",
    ),
]


@pytest.mark.parametrize(("case", "stray", "placed", "message"), STRAYS, ids=[c[0] for c in STRAYS])
def test_a_parent_in_another_tree_is_not_followed(case, stray, placed, message):
    """Reported once (by the tree, which says what it did), and not summed with the parent's
    children."""
    stray["spec"] = {"min": {"nvidia.com/gpu": "1"}, "max": {"nvidia.com/gpu": "1"}}
    engine = run(*gpu_pools(), stray, capacity={"nvidia.com/gpu": "20"})
    assert engine.status("stray").parent == placed
    assert [str(p) for p in engine.problems] == [
        f"ElasticQuota quotas/stray: metadata.labels[{P}tree-id]: {message}"
    ]


def test_explain_says_which_tree_and_its_total():
    engine = run(
        *gpu_pools(),
        quota("cpu-team", max=res(10, 10)),
        pod("train", namespace="b", quota="b-v100", nvidia_com_gpu="1"),
        capacity={"nvidia.com/gpu": "20", "cpu": "8"},
    )
    assert str(explain_pod(engine.recompute(), "b/train")).splitlines()[1:3] == [
        f"  group: b-v100 (its label {P}name names it)",
        "  tree: 'v100', a node pool's: nvidia.com/gpu 10 (the total-resource of its root v100)",
    ]
    assert str(explain_group(engine.recompute(), "cpu-team")).splitlines()[2] == (
        "  tree: the default one, on what the node pools leave of the cluster less what the "
        "system and default groups use: cpu 8, memory 0, nvidia.com/gpu 0"
    )


def test_two_roots_of_one_tree_add_up_and_say_so():
    gpu = "nvidia.com/gpu"
    roots = [
        in_tree("p", quota(name, is_parent=True, max={gpu: "100"}), total={gpu: "4"})
        for name in ("p-east", "p-west")
    ]
    engine = run(*roots, capacity={gpu: "16"})
    assert runtime(engine, pool_root("p")) == {gpu: 8}
    assert [str(p) for p in engine.problems] == [
        f"ElasticQuota quotas/p-west: metadata.labels[{P}is-root]: tree 'p' has 2 roots "
        "(p-east, p-west): its total is the sum of theirs; one ElasticQuotaProfile per tree id "
        "makes one root"
    ]
