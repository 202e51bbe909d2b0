"""The README's "Any of a team's pools" walkthrough on the real control plane.

Two A100 and two V100 kwok Nodes of 5 cards each, the chart installed by the README's
`helm install`, the pools and teams of examples/gpu-pools applied as the "Node pools" section
does; then the section's kubectl commands, read out of README.md and played verbatim through
real kubectl. Team A's Job of 15 one-card pods names its group that lists its V100 and A100
groups: the real Job controller makes the pods, the product's webhook gates them, the operator
chooses a pool for each and narrows its node affinity to it as it lifts the gate (the real API
server's rules for a gated pod's affinity), and the real kube-scheduler places each on a node of
that pool. Team B's V100 Job takes back what team A borrowed there, through reclaim and the real
Eviction API, and the Job's replacements go to the A100 pool; the Job counts no failure.

It runs on a control plane of its own: the chart's webhooks gate the pods of every namespace.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path
from typing import Any

from scripts.control_plane.audit import audited
from scripts.control_plane.build import Built
from scripts.control_plane.plane import ControlPlane
from tests.control_plane.cluster import Cluster, refused_to_the_product
from tests.control_plane.node_pools import A100, PRODUCT, PRODUCTS, V100, by_name, gpus
from tests.control_plane.product import helm_install, running
from tests.control_plane.quickstart import commands
from tests.control_plane.test_node_pools import gpu_node
from tests.control_plane.test_quickstart import RealKubectl
from tests.kubectl import Result, rows
from tests.manifests import OWN
from tests.readme import blocks

SECTION = "## Any of a team's pools"
CHOSEN = OWN + "pool-quota"
MODEL = {"team-a-v100": V100, "team-a-a100": A100}
SETTLE = 120.0
"""Seconds for a step that waits on reclaim (its delay) and the Job controller."""


class AnyPool:
    """The section's kubectl commands, each played verbatim and judged."""

    def __init__(self, kubectl: RealKubectl) -> None:
        self.kubectl = kubectl
        self.looks = 0
        self.checks = {
            "kubectl apply -f examples/gpu-pools/any-model/team-a.yaml": self.team_a,
            f"kubectl get pods -n team-a -L {CHOSEN}": self.placed,
            "kubectl apply -f examples/gpu-pools/team-b.yaml": self.team_b,
        }

    async def play(self, command: str) -> None:
        check = self.checks.get(command.split("#")[0].strip())
        assert check is not None, f"no claim checked for the README command {command!r}"
        await check(command)

    async def team_a(self, command: str) -> None:
        out = (await self.kubectl.run(command)).out
        assert "elasticquota.scheduling.sigs.k8s.io/team-a created" in out, out
        assert "job.batch/train-any created" in out, out

    async def placed(self, command: str) -> None:
        """First 10 in team-a-v100 and 5 in team-a-a100, then (once team B took its V100 cards
        back) 5 and 10: each Running on a node of its pool, with that pool's affinity."""
        self.looks += 1
        wanted = {"team-a-v100": 10, "team-a-a100": 5}
        if self.looks == 2:
            wanted = {"team-a-v100": 5, "team-a-a100": 10}

        def settled(result: Result) -> bool:
            running = [r for r in rows(result.out) if r["STATUS"] == "Running"]
            return len(rows(result.out)) == 15 and Counter(
                r["POOL-QUOTA"]
                for r in running  # kubectl -L: the key's name part
            ) == Counter(wanted)

        await self.kubectl.until(
            command, settled, what=f"team A's pods running as {wanted}", timeout=SETTLE
        )
        pods = json.loads((await self.kubectl.run("kubectl get pods -n team-a -o json")).out)
        nodes = {
            n["metadata"]["name"]: n["metadata"]["labels"][PRODUCT]
            for n in json.loads((await self.kubectl.run("kubectl get nodes -o json")).out)["items"]
        }
        for pod in pods["items"]:
            group = pod["metadata"]["labels"][CHOSEN]
            assert nodes[pod["spec"]["nodeName"]] == MODEL[group], pod["metadata"]["name"]
            terms = pod["spec"]["affinity"]["nodeAffinity"][
                "requiredDuringSchedulingIgnoredDuringExecution"
            ]["nodeSelectorTerms"]
            pool = {"key": PRODUCT, "operator": "In", "values": [MODEL[group]]}
            assert terms == [{"matchExpressions": [pool]}], pod["metadata"]["name"]
        used = {name: str(count) for name, count in wanted.items()}
        await self.kubectl.until(
            "kubectl get eq -n team-a",
            lambda r: {name: gpus(by_name(r)[name]["USED"]) for name in wanted} == used,
            what=f"the pool groups' USED at {used}",
        )
        job = json.loads(
            (await self.kubectl.run("kubectl get job train-any -n team-a -o json")).out
        )
        assert job["status"].get("failed", 0) == 0, job["status"]

    async def team_b(self, command: str) -> None:
        assert "job.batch/eval created" in (await self.kubectl.run(command)).out


async def pools_and_teams(kubectl: RealKubectl) -> None:
    """What the "Node pools" section applies first: the profiles, and once their roots are
    made, the teams' groups."""
    await kubectl.run("kubectl apply -f examples/gpu-pools/pools.yaml")
    await kubectl.until(
        "kubectl get eq -n koordinator-system",
        lambda r: all(gpus(by_name(r).get(p, {}).get("MIN", "")) == "10" for p, _ in PRODUCTS),
        what="the roots a100 and v100 at their pools' 10 cards",
    )
    await kubectl.run("kubectl apply -f examples/gpu-pools/teams.yaml")


def gpu_nodes() -> list[dict[str, Any]]:
    return [gpu_node(f"{pool}-{i}", product) for pool, product in PRODUCTS for i in (1, 2)]


async def test_the_readme_any_pool_walkthrough_on_the_real_control_plane(
    built: Built, tmp_path: Path
) -> None:
    helm = next(c for c in commands() if c.startswith("helm "))
    (walkthrough,) = blocks(SECTION)[1:]
    plane = ControlPlane(tmp_path / "plane", built, nodes=0)
    await asyncio.to_thread(plane.start)
    try:
        cluster = Cluster(plane.directory, plane.server, tmp_path / "user")
        await cluster.create_nodes(*gpu_nodes())
        await helm_install(cluster, helm)
        async with running(cluster, tmp_path / "product"):
            kubectl = RealKubectl(cluster)
            await pools_and_teams(kubectl)
            story = AnyPool(kubectl)
            for command in walkthrough:
                await story.play(command)
            # Team B's 5 V100 pods took back the 5 cards team A borrowed there.
            assert audited(plane.audit_log, "create", "pods", "eviction", code=201) == 5
            team_b = rows((await kubectl.run("kubectl get pods -n team-b -o wide")).out)
            assert (
                sorted(r["NODE"][:4] for r in team_b if r["STATUS"] == "Running") == ["v100"] * 5
            ), team_b
        assert refused_to_the_product(plane.audit_log) == [], "the chart's RBAC refused"
    finally:
        await asyncio.to_thread(plane.stop)
