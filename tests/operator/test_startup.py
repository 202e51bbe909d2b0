"""Start-up: a cluster of a few thousand pods that exists before the operator starts converges
(every group's numbers and every pod's label as the engine computes them; no time limit
asserted, the benchmarks measure the speed), and a replica started while the API server is
away comes up as soon as the server is back."""

from __future__ import annotations

from typing import Any

from tests.kube import LEASES, QUOTAS, store, stored
from tests.manifests import node, pod, quota
from tests.operator.conftest import eventually, start_operator
from tests.operator.test_accounting import actual, converged, differences, tree
from tests.operator.test_lifecycle import BUILTINS

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


async def test_the_first_computation_starts_when_the_lists_are_in_not_an_interval_later(
    api, tmp_path
):
    store(api, *tree())
    # A batch interval far beyond the test's patience: only the first computation (which
    # creates the built-in groups that readiness waits for) may not wait for it.
    operator = await start_operator(tmp_path, api, "--batch-interval", "600")
    try:
        await eventually(lambda: converged(api), what="convergence at once")
    finally:
        await operator.stop()


async def test_a_replica_started_while_the_api_server_is_away_comes_up_when_it_is_back(
    api, tmp_path
):
    store(api, *cluster()[:40])
    await api.go_down()
    operator = await start_operator(tmp_path, api, probe="/healthz")  # alive from the start
    try:
        status, text = await operator.get("/readyz")
        assert (status, text) == (503, "the initial listings are not loaded yet\n")
        await api.come_up()
        # Kopf would retry a failed start-up after 60 s; the caches and the Lease retry within
        # seconds, and the leader then creates the built-in groups it does not find.
        await eventually(lambda: _ready(operator), timeout=20, what="/readyz after the outage")
        assert {o["metadata"]["name"] for o in stored(api, QUOTAS)} >= BUILTINS
        assert stored(api, LEASES)[0]["spec"]["holderIdentity"] == "op"
        assert api.count("create", "elasticquotas") == 3
    finally:
        await operator.stop()


async def _ready(operator: Any) -> bool:
    status, _ = await operator.get("/readyz")
    return status == 200
