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

from tests.apiserver import ApiServer
from tests.cli.test_explain import cluster
from tests.cli.test_simulate import write
from tests.manifests import pod
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
    assert done.stderr.strip().endswith("kubectl eq: error: no group nope")
