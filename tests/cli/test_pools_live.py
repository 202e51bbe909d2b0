"""`kubectl eq tree` on gpu_pools' cluster in the emulated API server: the trees from the roots
the operator wrote (not made again from the profiles, as `simulate` makes them), `--tree`, and a
cluster without the ElasticQuotaProfile CRD."""

from __future__ import annotations

import json
from typing import Any

from tests.apiserver import ApiServer, Config
from tests.cli import gpu_pools as pools
from tests.cli.gpu_pools import A100, GPU, V100
from tests.cli.test_kubectl_eq import kubectl

ROOT = "koordinator-root-quota"


def live(*, with_profiles: bool = True) -> list[dict[str, Any]]:
    """The cluster with the V100 root as the operator wrote it and the A100 root as it wrote
    it before the second A100 node joined (8 GPUs): the operator has not caught up yet."""
    (_, v100_root) = pools.operator_roots()
    stale = pools.stale_root("a100", A100, gpus=8, cpu="96")
    stale["metadata"]["labels"].pop(pools.P + "ignore-default-tree")
    items: list[dict[str, Any]] = pools.cluster(v100_root, stale, with_profiles=with_profiles)[
        "items"
    ]
    return [item for item in items if item["kind"] != "Namespace"]


async def test_the_trees_live_are_those_of_the_roots_the_operator_wrote(tmp_path):
    async with ApiServer() as server:
        server.seed(*live())
        done = await kubectl(server, tmp_path, "tree", "--tree", A100)
        assert done.returncode == 0, done.stderr
        lines = done.stdout.splitlines()
        head = " ".join(line.strip() for line in lines[1 : lines.index(f"{ROOT}/{A100}")])
        assert head == (
            f"Tree {A100}: cpu 96, memory 1Ti, {GPU} 8 (the total-resource of its root "
            "a100-root, made from ElasticQuotaProfile koordinator-system/a100)"
        )
        assert max(len(line) for line in lines) <= 80
        listed = await kubectl(server, tmp_path, "tree", "--tree", V100, "-o", "json")
        groups = json.loads(listed.stdout)["groups"]
        assert {group["tree"] for group in groups.values()} == {V100}
        assert groups[f"{ROOT}/{V100}"]["runtime"][GPU] == "8"
        (problem,) = json.loads(listed.stdout)["problems"]  # the A100 root is behind its nodes
        assert problem.startswith("ElasticQuota koordinator-system/a100-root: spec.min.")
        assert "is below its children's min" in problem


async def test_a_group_of_another_tree_and_an_unknown_tree_are_one_line(tmp_path):
    async with ApiServer() as server:
        server.seed(*live())
        other = await kubectl(server, tmp_path, "tree", "team-a-a100", "--tree", V100)
        assert other.returncode == 1
        assert other.stderr.strip() == (f"error: group team-a-a100 is in tree {A100}, not {V100}")
        unknown = await kubectl(server, tmp_path, "tree", "--tree", "h100")
        assert unknown.returncode == 1
        assert unknown.stderr.strip() == (
            f"error: no tree 'h100': the trees are default (or \"\"), {V100}, {A100}"
        )
        subtree = await kubectl(server, tmp_path, "tree", "team-a-a100", "--tree", A100)
        assert subtree.returncode == 0, subtree.stderr
        lines = subtree.stdout.splitlines()
        assert lines[1].startswith(f"Tree {A100}: cpu 96, ")
        assert "team-a-a100 (2 over quota)" in lines  # 4 GPUs of the 8 the root says
        assert "Reclaim (evicted in this order):" in lines


async def test_a_cluster_without_the_profile_crd_shows_the_roots_it_has(tmp_path):
    """The LIST of ElasticQuotaProfiles is answered 404: none, and no note."""
    async with ApiServer(Config(profiles=False)) as server:
        server.seed(*live(with_profiles=False))
        done = await kubectl(server, tmp_path, "tree", "--tree", A100)
        assert done.returncode == 0, done.stderr
        assert done.stderr == ""
        assert done.stdout.splitlines()[1] == (
            f"Tree {A100}: cpu 96, memory 1Ti, {GPU} 8 (the total-resource of its root"
        )


async def test_profiles_it_may_not_list_are_a_note(tmp_path):
    """The trees are the roots' all the same; only the profile's name is missing."""
    async with ApiServer() as server:
        server.seed(*live())
        server.fault(
            "GET", "elasticquotaprofiles.quota.koordinator.sh", status=403, message="forbidden"
        )
        done = await kubectl(server, tmp_path, "tree", "--tree", V100)
        assert done.returncode == 0, done.stderr
        assert "note: cannot list elasticquotaprofiles.quota.koordinator.sh (403" in done.stderr
        lines = done.stdout.splitlines()
        assert lines[3].endswith("pods 220 (the total-resource of its root v100-root)")
