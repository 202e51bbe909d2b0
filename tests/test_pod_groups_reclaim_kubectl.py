"""Reclaim takes a gang whole or not at all, through real kubectl against the emulated API server
with the chart installed (tests/installation.py), the Job stand-in (tests/apiserver/jobs.py)
and the scheduler stand-in.

The borrower runs `api` (1 CPU, inside its min of 1), `batch` (1 CPU) and the 4 pods of Job
`train`, a Koordinator gang of minimum 4 (500m each), on the lender's idle min. The lender takes
its 4 CPUs back: the borrower's runtime falls to 2 of the node's 6 CPUs, 2 below what it uses.
The least important candidate is the gang (its pods started last, or, at equal start, sort
last by name): while a PodDisruptionBudget allows its pods no disruption, none of them is
touched and `batch` goes instead; once the budget is gone, the gang goes, all four pods in one
round, and the Job's replacements wait behind the gate, whole.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import aiohttp

from tests.apiserver import ApiError, ApiServer, disruption_budget
from tests.apiserver.client import Client
from tests.apiserver.jobs import Jobs
from tests.apiserver.standins import Scheduler
from tests.installation import installed
from tests.kubectl import Kubectl, rows
from tests.kubectl_manifests import gang, group, job, pod, write
from tests.manifests import node
from tests.waiting import consistently, eventually

SETTINGS = (
    "operator.batchInterval=0.05",
    "operator.leaseDuration=2",
    "operator.reclaim.interval=0.1",
    "operator.reclaim.delay=0.5",
)
DELAY = 0.5


TRAIN = job("train", "borrower", parallelism=4, completions=4, annotations=gang("train", 4))
BUDGET = {
    "apiVersion": "policy/v1",
    "kind": "PodDisruptionBudget",
    "metadata": {"name": "train", "namespace": "borrower"},
    "spec": {"minAvailable": 4, "selector": {"matchLabels": {"job-name": "train"}}},
}
HELD = '{"status":{"currentHealthy":4,"desiredHealthy":4,"disruptionsAllowed":0,"expectedPods":4}}'


class Evictions:
    """The Eviction API's answers: the pods asked for, in order; a pod of `train` is refused
    while its budget exists, as kube-apiserver would refuse it."""

    def __init__(self, api: ApiServer) -> None:
        self.names: list[str] = []
        self._api = api
        api.evictions = self.react

    def react(self, pod: dict[str, Any]) -> ApiError | None:
        self.names.append(pod["metadata"]["name"])
        guarded = self._api.get("poddisruptionbudgets", "train", "borrower") is not None
        is_train = (pod["metadata"].get("labels") or {}).get("job-name") == "train"
        return disruption_budget() if guarded and is_train else None


def running(api: ApiServer, namespace: str) -> set[str]:
    return {
        p["metadata"]["name"]
        for p in api.objects("pods")
        if p["metadata"]["namespace"] == namespace
        and (p.get("status") or {}).get("phase") == "Running"
        and not p["metadata"].get("deletionTimestamp")
    }


async def test_a_gang_is_reclaimed_whole_or_not_at_all(tmp_path: Path):
    async with ApiServer() as api:
        api.seed(node("node-1", cpu="6", memory="32Gi", pods="110"))
        client = Client(api.url)
        scheduler, jobs = Scheduler(client), Jobs(client)
        kubectl = Kubectl(api, tmp_path / "user")
        evictions = Evictions(api)

        async def apply(name: str, *documents: dict[str, Any]) -> None:
            await kubectl.run(f"kubectl apply -f {write(tmp_path, name, *documents)}")

        try:
            async with installed(api, tmp_path, *SETTINGS) as processes:
                await scheduler.start()
                await jobs.start()
                await apply(
                    "groups.yaml",
                    *group("lender", min_cpu="4", max_cpu="6", memory="4Gi"),
                    *group("borrower", min_cpu="1", max_cpu="6", memory="4Gi"),
                )
                # One after the other: `api` starts first.
                await apply("api.yaml", pod("api", "borrower", "1"))
                await eventually(lambda: "api" in running(api, "borrower"), what="api runs")
                await apply("batch.yaml", pod("batch", "borrower", "1"))
                await eventually(lambda: "batch" in running(api, "borrower"), what="batch runs")
                await apply("train.yaml", TRAIN)
                await eventually(lambda: len(running(api, "borrower")) == 6, what="the gang runs")
                gang = running(api, "borrower") - {"api", "batch"}
                await apply("budget.yaml", BUDGET)
                await kubectl.run(
                    f"kubectl patch pdb train -n borrower --subresource status --type merge "
                    f"-p '{HELD}'"
                )

                # The lender comes back: `batch` goes, the budget keeps the gang whole.
                await apply("serve.yaml", pod("serve", "lender", "4"))
                await eventually(lambda: evictions.names == ["batch"], what="batch evicted")
                described = await kubectl.until(
                    "kubectl get events -n borrower --field-selector reason=ReclaimSkipped",
                    lambda r: {x["OBJECT"] for x in rows(r.out)} >= {f"pod/{p}" for p in gang},
                    what="a ReclaimSkipped Event on each of the gang's pods",
                )
                for event in rows(described.out):
                    assert (
                        "by PodDisruptionBudget borrower/train, which allows no disruption "
                        in (event["MESSAGE"])
                    ), described
                await consistently(  # two whole windows: the gang is never touched
                    lambda: evictions.names == ["batch"] and gang <= running(api, "borrower"),
                    seconds=2 * DELAY + 0.5,
                    what="the gang kept whole",
                )

                # The budget removed: the gang goes, all four in one round, and nothing else.
                await kubectl.run("kubectl delete pdb train -n borrower")
                await eventually(lambda: len(evictions.names) == 5, what="the gang evicted")
                assert set(evictions.names[1:]) == gang
                await eventually(lambda: "serve" in running(api, "lender"), what="serve runs")
                await kubectl.until(
                    "kubectl get pods -n borrower",
                    lambda r: (
                        sorted(x["STATUS"] for x in rows(r.out) if x["NAME"] not in gang)
                        == ["Running"] + ["SchedulingGated"] * 4
                    ),
                    what="api running and the gang's 4 replacements gated",
                )
                await consistently(
                    lambda: len(evictions.names) == 5, seconds=2 * DELAY, what="no more"
                )
                await kubectl.until(  # WAITING and USED: the annotations' and the status' writes
                    "kubectl get eq borrower -n borrower",
                    lambda r: (
                        rows(r.out)[0]["WAITING"] == "4 (1 gang)"
                        and '"cpu":"1"' in rows(r.out)[0]["USED"]
                    ),
                    what="the gang's 4 replacements waiting and api's cpu used",
                )
                await kubectl.until(  # Events are written on their own
                    "kubectl get events -n borrower --field-selector reason=Reclaimed",
                    lambda r: "the pod's gang borrower/train goes whole (4 pods)" in r.out,
                    what="the gang's Reclaimed Events",
                )
                _, operator = processes
                async with (
                    aiohttp.ClientSession() as session,
                    session.get(operator.probes + "/metrics") as response,
                ):
                    page = await response.text()
                assert 'elastic_quota_gang_evictions_total{group="borrower",tree=""} 1.0' in page
        finally:
            await jobs.stop()
            await scheduler.stop()
            await client.close()
