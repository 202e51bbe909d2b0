"""A cluster of a few thousand pods that exists before the operator starts converges: every
group's numbers and every pod's label as the engine computes them (no time limit asserted;
benchmarks/startup.py measures the speed)."""

from __future__ import annotations

from typing import Any

from tests.kube import store
from tests.manifests import node, pod, quota
from tests.operator.conftest import eventually, start_operator
from tests.operator.test_accounting import actual, converged, differences

DEPARTMENTS, TEAMS, PER_TEAM = 3, 10, 100  # 33 groups, 3,000 pods


def cluster() -> list[dict[str, Any]]:
    objects: list[dict[str, Any]] = [node(f"n{i}", cpu="64", memory="256Gi") for i in range(30)]
    for d in range(DEPARTMENTS):
        dept = f"dept-{d}"
        objects.append(quota(dept, is_parent=True, min={"cpu": 600}, max={"cpu": 1200}))
        for t in range(TEAMS):
            team = f"{dept}-team-{t}"
            objects.append(
                quota(team, namespace=team, parent=dept, min={"cpu": 30}, max={"cpu": 200})
            )
            for p in range(PER_TEAM):
                scheduled = p % 4 != 3
                objects.append(
                    pod(
                        f"w{p:03d}",
                        namespace=team,
                        cpu=f"{100 + 50 * ((d + t + p) % 7)}m",
                        priority=p % 3,
                        node=f"n{p % 30}" if scheduled else None,
                    )
                )
    return objects


async def test_a_cluster_of_thousands_of_pods_converges_on_start(api, tmp_path):
    store(api, *cluster())
    operator = await start_operator(tmp_path, api, "--api-qps", "0", ready_within=120)
    try:
        await eventually(
            lambda: converged(api),
            timeout=300,
            what="convergence of 3,000 pods",
            explain=lambda: differences(api)[:5],
        )
        groups, labels = actual(api)
        assert sum(1 for label in labels.values() if label is not None) == 2250  # the running
        assert groups["dept-0"]["status.used"] is not None
    finally:
        await operator.stop()
