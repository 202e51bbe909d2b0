"""The README's "Node pools" walkthrough (examples/gpu-pools) on the real control plane.

The commands are read out of README.md and judged by `Walkthrough` (node_pools.py), played
here through real kubectl: two
A100 and two V100 kwok Nodes of 5 cards each, labelled with `nvidia.com/gpu.product`, the
chart installed by the README's `helm install` (the quick start's), the Jobs' pods made by the
real Job controller, gated by the product's webhook, lifted by the operator, placed by the real
kube-scheduler (its node affinity filter deciding on the V100 pool's affinity the webhook adds)
and taken back by reclaim through the real Eviction API.

What the emulator shows with hooks, the real cluster shows as a user sees it: that team B's
pods waited for cards and not behind the gate, by the scheduler's FailedScheduling Events
(only pods past the gate are tried); that no pod of either team was ever bound to an A100 node,
and team B's only after the first eviction, by its Scheduled Events; the evictions by the
audit log.

Team A's Job replaces the 5 pods reclaim takes within 30 s, behind the gate, and counts none
of them as a failure (the operator takes each out of its Job's count first), and completes once
the V100 pool has grown.

It runs on a control plane of its own: the chart's webhooks would gate the pods of every other
test on the shared one.
"""

from __future__ import annotations

import asyncio
import json
import re
from datetime import datetime
from pathlib import Path
from typing import Any

from scripts.control_plane.audit import audit_events, audited
from scripts.control_plane.build import Built
from scripts.control_plane.plane import ControlPlane
from tests.control_plane.cluster import Cluster, kwok_node, refused_to_the_product
from tests.control_plane.node_pools import (
    CARDS,
    CPU,
    GPU,
    MEMORY_GI,
    PRODUCT,
    PRODUCTS,
    SECTION,
    V100_NODES,
    Walkthrough,
)
from tests.control_plane.product import helm_install, running
from tests.control_plane.quickstart import commands
from tests.control_plane.test_quickstart import RealKubectl
from tests.readme import blocks

ASSIGNED = re.compile(r"Successfully assigned (\S+)/(\S+) to (\S+)")


def gpu_node(name: str, product: str) -> dict[str, Any]:
    """A kwok GPU Node of `CARDS` cards, in the pool of `product`."""
    capacity = {"cpu": CPU, "memory": f"{MEMORY_GI}Gi", "pods": "110", GPU: CARDS}
    return kwok_node(name, capacity, {PRODUCT: product})


def stamp(text: str) -> datetime:
    return datetime.fromisoformat(text)


async def scheduled(cluster: Cluster) -> list[tuple[str, str, datetime]]:
    """Every binding the scheduler told of, in the teams' namespaces: (namespace, node, when)."""
    found = []
    for namespace in ("team-a", "team-b"):
        listed = await cluster.kubectl(
            f"kubectl get events -n {namespace} --field-selector reason=Scheduled -o json"
        )
        for event in json.loads(listed)["items"]:
            match = ASSIGNED.search(event["message"])
            assert match and match[1] == namespace, event["message"]
            when = event.get("eventTime") or event["firstTimestamp"]
            found.append((namespace, match[3], stamp(when)))
    return found


async def test_the_readme_node_pools_walkthrough_on_the_real_control_plane(
    built: Built, tmp_path: Path
) -> None:
    helm = next(c for c in commands() if c.startswith("helm "))
    _, walkthrough = blocks(SECTION)
    plane = ControlPlane(tmp_path / "plane", built, nodes=0)
    await asyncio.to_thread(plane.start)
    try:
        cluster = Cluster(plane.directory, plane.server, tmp_path / "user")
        await cluster.create_nodes(
            *(gpu_node(f"{pool}-{i}", product) for pool, product in PRODUCTS for i in (1, 2))
        )
        await helm_install(cluster, helm)
        async with running(cluster, tmp_path / "product"):
            story = Walkthrough(
                RealKubectl(cluster), tmp_path, node=gpu_node, complete=cluster.complete
            )
            for command in walkthrough:
                await story.play(command)
            await story.a_node_joins_the_v100_pool()
            await story.team_a_completes()
            evicted = [
                stamp(e["stageTimestamp"])
                for e in audit_events(plane.audit_log)
                if e.get("objectRef", {}).get("subresource") == "eviction"
            ]
            assert audited(plane.audit_log, "create", "pods", "eviction", code=201) == 5
            bindings = await scheduled(cluster)
            # No pod of either team was ever bound to an A100 node; team B's only once reclaim
            # had begun to free cards.
            assert {node for _, node, _ in bindings} == {*V100_NODES, "v100-3"}, bindings
            assert [n for n, _, _ in bindings].count("team-a") == 15, bindings
            team_b = [when for namespace, _, when in bindings if namespace == "team-b"]
            assert len(team_b) == 5 and min(team_b) >= min(evicted), (team_b, evicted)
        assert refused_to_the_product(plane.audit_log) == [], "the chart's RBAC refused"
    finally:
        await asyncio.to_thread(plane.stop)
