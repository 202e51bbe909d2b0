"""`elastic-quota simulate` on a cluster with node pools (gpu_pools.py): one quota tree per
pool, each profile's root made from the Nodes in the dump, `--tree`, and the profiles'
problems."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from eq_engine.pools import tree_hash

from tests.cli import gpu_pools as pools
from tests.cli.gpu_pools import A100, GPU, NAMESPACE, V100
from tests.cli.test_simulate import SEED, simulate, write
from tests.realistic import P, elastic_quota_profile

ROOT = "koordinator-root-quota"
BUILT_IN = [ROOT, "koordinator-system-quota", "koordinator-default-quota"]
TREES = {
    "": BUILT_IN,
    A100: [f"{ROOT}/{A100}", "a100-root", "team-a-a100", "team-b-a100"],
    V100: [f"{ROOT}/{V100}", "v100-root", "team-a-v100", "team-b-v100"],
}


def dump(tmp_path: Path, *extra: dict[str, Any], with_profiles: bool = True) -> str:
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps(pools.cluster(*extra, with_profiles=with_profiles), indent=2))
    return str(path)


def run(*args: str) -> subprocess.CompletedProcess[str]:
    done = simulate(*args)
    assert done.returncode == 0, done.stderr
    return done


def report(*args: str) -> dict[str, Any]:
    found: dict[str, Any] = json.loads(run(*args, "-o", "json").stdout)
    return found


def joined(lines: list[str], start: int) -> str:
    """A wrapped head line and its continuation lines, joined back."""
    text = lines[start]
    for line in lines[start + 1 :]:
        if not line.startswith(" "):
            break
        text += " " + line.strip()
    return text


def test_each_pool_is_a_tree_of_its_own_drawn_after_the_default_one(tmp_path):
    lines = run("-f", dump(tmp_path), "-o", "tree").stdout.splitlines()
    assert [line for line in lines if len(line) > 80] == []
    tops = [line for line in lines if line.startswith(ROOT)]
    assert tops == [ROOT, f"{ROOT}/{V100}", f"{ROOT}/{A100}"]  # by tree id
    heads = [i for i, line in enumerate(lines) if line.startswith(("Default tree:", "Tree "))]
    texts = [joined(lines, i) for i in heads]
    assert texts[0].startswith("Default tree: cpu 16, ")  # worker-1: the GPU nodes are pools'
    assert ", nvidia.com/gpu 0, " in texts[0]
    assert texts[0].endswith("(what the node pools leave of the cluster)")
    assert texts[1].startswith(f"Tree {V100}: cpu 64, ")
    assert ", nvidia.com/gpu 8, " in texts[1]
    assert texts[2].startswith(f"Tree {A100}: cpu 192, ")
    assert texts[2].endswith(
        "(the total-resource of its root a100-root, made from ElasticQuotaProfile "
        "koordinator-system/a100 on 2 nodes)"
    )
    assert lines[heads[1] - 1] == lines[heads[2] - 1] == ""  # a blank line between trees
    a100 = lines[lines.index(f"{ROOT}/{A100}") :]
    a100 = a100[: a100.index("")]
    assert [line for line in a100 if "─ " in line] == [
        "└─ a100-root (parent)",
        "   ├─ team-a-a100 (1 over quota)",
        "   └─ team-b-a100",
    ]
    gpus = a100[a100.index("   ├─ team-a-a100 (1 over quota)") + 3]
    assert gpus.split() == ["│", GPU, "8", "16", "12", "12", "12"]


@pytest.mark.parametrize(("given", "tree"), [(A100, A100), (V100, V100), ("default", ""), ("", "")])
def test_tree_shows_one_tree(tmp_path, given, tree):
    path = dump(tmp_path)
    assert list(report("-f", path, "--tree", given)["groups"]) == TREES[tree]
    lines = run("-f", path, "--tree", given, "-o", "tree").stdout.splitlines()
    heads = [line for line in lines if line.startswith(("Default tree:", "Tree "))]
    assert heads == [lines[1]]
    assert heads[0].startswith(f"Tree {tree}: " if tree else "Default tree: ")
    assert [line for line in lines if line.startswith(ROOT)] == [TREES[tree][0]]


def test_json_gives_each_group_its_tree_and_the_pools_their_totals(tmp_path):
    found = report("-f", dump(tmp_path))
    assert {name: group["tree"] for name, group in found["groups"].items()} == {
        name: tree for tree, names in TREES.items() for name in names
    }
    groups = found["groups"]
    assert groups[f"{ROOT}/{A100}"]["runtime"][GPU] == "16"
    assert groups[f"{ROOT}/{V100}"]["runtime"][GPU] == "8"
    assert groups[ROOT]["runtime"][GPU] == "0"  # every GPU node is in a pool
    assert groups["team-a-a100"]["runtime"][GPU] == "12"  # 4 of team B's idle min
    assert groups["a100-root"]["min"] == {"cpu": "192", "memory": "2096952Mi", GPU: "16"}
    assert found["problems"] == []


def test_the_table_puts_each_trees_rows_under_its_head_line(tmp_path):
    lines = run("-f", dump(tmp_path)).stdout.splitlines()
    heads = [i for i, line in enumerate(lines) if line.startswith(("Default tree:", "Tree "))]
    assert [lines[i].split(":")[0] for i in heads] == ["Default tree", f"Tree {V100}", "Tree a100"]
    rows = lines[heads[2] :]
    groups = [row.split()[0] for row in rows if row.startswith(tuple(TREES[A100]))]
    assert list(dict.fromkeys(groups)) == TREES[A100]
    assert ["team-a-a100", GPU, "8", "16", "12", "12", "12"] in [row.split() for row in rows]


def test_roots_the_operator_wrote_change_nothing(tmp_path):
    """The dump holds each profile's root as the operator wrote it for these very nodes."""
    bare = run("-f", dump(tmp_path), "-o", "json").stdout
    assert run("-f", dump(tmp_path, *pools.operator_roots()), "-o", "json").stdout == bare


def test_a_root_written_before_a_node_joined_is_made_again_from_the_dumps_nodes(tmp_path):
    """The A100 root in the dump says 8 GPUs (one node); the dump holds two A100 nodes, so the
    tree splits 16. The root's other labels stay (the user's `ignore-default-tree`: the A100
    pool is not taken from the default tree). Without the profiles, the root is as written."""
    stale = pools.stale_root("a100", A100, gpus=8, cpu="96")
    made = report("-f", dump(tmp_path, stale))["groups"]
    assert made[f"{ROOT}/{A100}"]["runtime"][GPU] == "16"
    assert made[ROOT]["runtime"][GPU] == "16"  # 24 less the V100 pool's 8
    as_written = report("-f", dump(tmp_path, stale, with_profiles=False))["groups"]
    assert as_written[f"{ROOT}/{A100}"]["runtime"][GPU] == "8"
    assert f"{ROOT}/{V100}" in as_written  # its groups are there, its root is not
    assert set(as_written[f"{ROOT}/{V100}"]["runtime"].values()) == {"0"}


def test_the_profiles_problems_are_listed_with_the_others(tmp_path):
    keys = pools.KEYS
    h100 = elastic_quota_profile(
        "h100",
        NAMESPACE,
        quota_name="h100-root",
        node_selector={"matchLabels": {pools.PRODUCT: "NVIDIA-H100-80GB-HBM3"}},
        resource_keys=keys,
    )
    every_gpu = elastic_quota_profile(
        "every-gpu",
        NAMESPACE,
        quota_name="gpu-root",
        node_selector={"matchExpressions": [{"key": pools.PRODUCT, "operator": "Exists"}]},
        resource_keys=keys,
        ratio="1.5",
        created="2025-06-02T09:00:00Z",
    )
    problems = report("-f", dump(tmp_path, h100, every_gpu))["problems"]
    profile = f"ElasticQuotaProfile {NAMESPACE}"
    assert f"{profile}/h100: spec.nodeSelector: matches no node: its tree's total is 0" in problems
    assert (
        f"{profile}/every-gpu: spec.resourceRatio: '1.5' is not a number greater than 0 and "
        "at most 1: the pool's whole total is used (ratio 1), as Koordinator does; expected "
        'e.g. "0.9"'
    ) in problems
    overlaps = sorted(p for p in problems if p.startswith(f"{profile}/every-gpu: spec.nodeSel"))
    assert len(overlaps) == 2
    for model, overlap in zip(
        ("a100", "v100"), overlaps, strict=True
    ):  # the words are the engine's
        assert f"nodes gpu-{model}-1, gpu-{model}-2 are " in overlap
        assert f"older ElasticQuotaProfile {NAMESPACE}/{model}" in overlap
    tree = run("-f", dump(tmp_path, h100, every_gpu), "-o", "tree").stdout
    assert f"  {profile}/h100: spec.nodeSelector: matches no" in tree.splitlines()
    assert f"Tree {tree_hash(NAMESPACE, 'h100')}: nothing (the total-resource" in tree


def test_an_unknown_tree_is_one_line_naming_the_trees(tmp_path):
    done = simulate("-f", dump(tmp_path), "--tree", "h100")
    assert done.returncode == 1
    assert done.stderr.splitlines()[-1] == (
        f"elastic-quota: error: --tree: no tree 'h100': the trees are default (or \"\"), {V100}, "
        "a100"
    )
    seed = write(tmp_path, "seed.yaml", *SEED)
    done = simulate("-f", seed, "--tree", "a100")
    assert done.returncode == 1
    assert done.stderr.strip() == (
        "elastic-quota: error: --tree: no tree 'a100': there is only the default tree (no "
        "ElasticQuota is in a node pool's tree)"
    )
    explaining = simulate("-f", seed, "--tree", "a100", "--explain", "group", "a")
    assert explaining.returncode == 2
    assert "--tree: shows one tree of the report, not with --explain" in explaining.stderr


@pytest.mark.parametrize("output", ["table", "tree", "json"])
def test_without_pools_the_default_tree_is_everything_as_before(tmp_path, output):
    seed = write(tmp_path, "seed.yaml", *SEED)
    shown = run("-f", seed, "-o", output).stdout
    assert run("-f", seed, "-o", output, "--tree", "default").stdout == shown
    assert "tree" not in shown.lower()


def test_what_if_a_node_joins_a_pool(tmp_path):
    """The operator would make the A100 root again; its write is not the user's change, so the
    webhook's answer to it is not listed."""
    joining = pools.gpu_node("gpu-a100-3", pools.A100_PRODUCT, 8, "96", 1024)
    done = run("-f", dump(tmp_path), "--what-if", write(tmp_path, "node.yaml", joining))
    lines = done.stdout.splitlines()
    assert f"runtime: {ROOT}/{A100} nvidia.com/gpu: 16 -> 24" in lines
    assert [line for line in lines if line.startswith("admission:")] == []
    assert [line for line in lines if "v100" in line or V100 in line] == []


def test_a_profile_without_the_tree_id_label_is_in_the_tree_of_its_hash():
    profile = pools.profiles()[1]
    assert P + "tree-id" not in (profile["metadata"].get("labels") or {})
    assert V100 == "10919809796999718739"


def test_a_pool_whose_tree_id_is_default_and_the_default_tree(tmp_path):
    """`--tree default` names a pool's tree of that id; `--tree ""` the default tree still."""
    spare = pools.stale_root("spare", "default", gpus=2, cpu="8")
    path = dump(tmp_path, spare)
    assert list(report("-f", path, "--tree", "default")["groups"]) == [
        f"{ROOT}/default",
        "spare-root",
    ]
    assert list(report("-f", path, "--tree", "")["groups"]) == BUILT_IN


def test_a_profile_without_its_quota_name_is_an_error_naming_the_file(tmp_path):
    broken = pools.profiles()[0]
    del broken["spec"]["quotaName"]
    path = dump(tmp_path, broken, with_profiles=False)
    done = simulate("-f", path)
    assert done.returncode == 1
    assert done.stderr.strip() == (
        f"elastic-quota: error: {path}: ElasticQuotaProfile {NAMESPACE}/a100: spec.quotaName: "
        "required: the name of the tree's root ElasticQuota"
    )
