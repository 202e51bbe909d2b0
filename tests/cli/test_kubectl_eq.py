"""`kubectl eq` through real kubectl (which runs `kubectl-eq` from PATH) against the emulated
API server holding test_explain's cluster: the same answers as `simulate` on the files."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.apiserver import ApiServer, pod_group_crds
from tests.cli import test_gangs as gangs
from tests.cli.test_explain import cluster
from tests.cli.test_simulate import write
from tests.manifests import pod, quota
from tests.paths import PYTHONPATH

BIN = str(Path(sys.executable).parent)  # where the package installed kubectl-eq


async def kubectl(api: ApiServer, tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    kubeconfig = api.write_kubeconfig(tmp / "kubeconfig")
    environment = {
        **os.environ,
        "KUBECONFIG": str(kubeconfig),
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": PYTHONPATH,
    }
    return await asyncio.to_thread(
        subprocess.run,
        ["kubectl", "eq", *args],
        capture_output=True,
        text=True,
        env=environment,
        timeout=60,
    )


@pytest.fixture()
async def api():
    async with ApiServer() as server:
        server.seed(*cluster())
        yield server


async def test_the_tree_of_one_department(api, tmp_path):
    done = await kubectl(api, tmp_path, "tree", "research", "-o", "json")
    assert done.returncode == 0, done.stderr
    groups = json.loads(done.stdout)["groups"]
    assert sorted(groups) == ["research", "team-a", "team-b"]
    assert groups["team-a"]["runtime"] == {"cpu": "2"}  # worked out in test_explain
    text = await kubectl(api, tmp_path, "tree")
    assert text.returncode == 0 and "team-a" in text.stdout
    assert max(len(line) for line in text.stdout.splitlines()) <= 80


async def test_explain_a_pod_and_a_group_live(api, tmp_path):
    done = await kubectl(api, tmp_path, "explain", "pod", "team-a/a4", "-o", "json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["lines"][2] == (
        "reclaim: 1st of 1 pods team-a would lose now (used cpu 2500m, runtime cpu 2)"
    )
    group = await kubectl(api, tmp_path, "explain", "group", "team-a")
    assert "using above its min (borrowed) under research: it (cpu 1500m)" in group.stdout


async def test_what_if_against_the_live_cluster(api, tmp_path):
    change = write(tmp_path, "change.yaml", pod("b2", namespace="team-b", cpu="1", priority=1))
    done = await kubectl(api, tmp_path, "what-if", "-f", change)
    assert done.returncode == 0, done.stderr
    assert "runtime: team-a cpu: 2 -> 1500m" in done.stdout.splitlines()


async def test_an_unknown_group_is_one_line(api, tmp_path):
    done = await kubectl(api, tmp_path, "tree", "nope")
    assert done.returncode == 1
    assert done.stderr.strip() == "error: no group nope"


async def test_gangs_live_where_the_cluster_serves_no_pod_group_api(tmp_path):
    """test_gangs' two gangs in room for one, listed from the API server; it serves none of the
    PodGroup APIs, and a 404 on their LISTs means none."""
    async with ApiServer() as server:
        server.seed(*gangs.cluster(*gangs.TWO_GANGS))
        tree = await kubectl(server, tmp_path, "tree", "team-a")
        assert tree.returncode == 0, tree.stderr
        assert "team-a (4 waiting in 1 gang)" in tree.stdout.splitlines()
        assert tree.stderr == ""
        listed = json.loads((await kubectl(server, tmp_path, "tree", "-o", "json")).stdout)
        waiting = listed["gangs"]["gang:team-a/train-b"]
        assert (waiting["pods"], waiting["admitted"]) == (4, 0)
        key = gangs.members(listed, "train-b")[0]
        done = await kubectl(server, tmp_path, "explain", "pod", key)
        assert done.returncode == 0, done.stderr
        assert "  gang: team-a/train-b, from annotation gang.scheduling.koordinator.sh/name" in (
            done.stdout
        )
        assert "room in team-a: cpu 0" in done.stdout


async def test_pod_groups_are_read_where_the_cluster_serves_their_api(tmp_path):
    """scheduler-plugins' PodGroup API served, with the PodGroup of 4 workers in team-b: they
    are admitted whole. Koordinator's PodGroup API is served too but forbidden to the reader:
    a note, and the answer without them."""
    serving = pod_group_crds("scheduling.x-k8s.io", "scheduling.sigs.k8s.io")
    async with ApiServer(serving=serving) as server:
        workers = [gangs.worker("llama-ft", i) for i in range(4)]
        server.seed(*gangs.cluster(gangs.pod_group("team-b", "llama-ft", 4), *workers))
        server.fault("GET", "podgroups.scheduling.sigs.k8s.io", status=403, message="forbidden")
        done = await kubectl(server, tmp_path, "tree", "team-b", "-o", "json")
        assert done.returncode == 0, done.stderr
        assert "kubectl eq: note: cannot list podgroups.scheduling.sigs.k8s.io (403" in (
            done.stderr
        )
        gang = json.loads(done.stdout)["gangs"]["podgroups.scheduling.x-k8s.io:team-b/llama-ft"]
        assert (gang["minimum"], gang["admitted"]) == (4, 4)


async def test_a_disruption_budget_live_keeps_its_pod_from_reclaim(tmp_path):
    """test_gangs' budget case: `batch` would be reclaimed, but its budget allows no
    disruption now, so `serve` would go instead."""
    async with ApiServer() as server:
        server.seed(*gangs.budgeted())
        done = await kubectl(server, tmp_path, "tree", "team-a", "-o", "json")
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["reclaim"] == {"team-a": ["team-a/serve"]}
        server.fault("GET", "poddisruptionbudgets", status=403, message="forbidden")
        done = await kubectl(server, tmp_path, "tree", "team-a", "-o", "json")
        assert done.returncode == 0, done.stderr
        assert "note: cannot list poddisruptionbudgets.policy (403" in done.stderr
        assert json.loads(done.stdout)["reclaim"] == {"team-a": ["team-a/batch"]}


async def test_the_built_in_groups_namespace_is_where_the_cluster_holds_them(tmp_path):
    """Installed into `quota-system`: its pods are the system group's, as the operator there
    takes them, unless --quota-namespace says otherwise."""
    async with ApiServer() as server:
        server.seed(
            quota("koordinator-root-quota", namespace="quota-system", is_parent=True),
            pod("operator-x", namespace="quota-system", cpu="100m"),
        )
        found = await kubectl(
            server, tmp_path, "explain", "pod", "operator-x", "-n", "quota-system"
        )
        assert found.returncode == 0, found.stderr
        assert found.stdout.splitlines()[1].startswith("  group: koordinator-system-quota (")
        told = await kubectl(
            server,
            tmp_path,
            "explain",
            "pod",
            "operator-x",
            "-n",
            "quota-system",
            "--quota-namespace",
            "elsewhere",
        )
        assert told.returncode == 0, told.stderr
        assert told.stdout.splitlines()[1].startswith("  group: koordinator-default-quota (")
