"""The README's quick start, steps 2 to 4, on the emulated API server with the chart installed:
the webhook is called through the chart's webhook configurations as kube-apiserver calls it (a
controller's pods reach mutating admission before they have a name), a scheduler stand-in binds
pods, and a ReplicaSet stand-in plays each Deployment of the quick start's files, recreating
what is evicted with `generateName`.

Step 4's promise: one eviction, then the Deployment's replacement waits behind the gate with a
`WaitingForQuota` Event that gives the numbers, the WAITING column counts it, and it runs once
`team-a` has room again.
"""

from __future__ import annotations

import json
from typing import Any

import yaml

from tests.apiserver import ApiServer
from tests.apiserver.client import Client
from tests.apiserver.standins import ReplicaSet, Scheduler
from tests.installation import installed
from tests.manifests import node
from tests.operator.conftest import eventually
from tests.paths import REPO

P = "quota.scheduling.koordinator.sh/"
QUICKSTART = REPO / "examples" / "quickstart"
PATHS = {
    "Namespace": "/api/v1/namespaces",
    "ElasticQuota": "/apis/scheduling.sigs.k8s.io/v1alpha1/namespaces/{namespace}/elasticquotas",
}


def documents(name: str) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all((QUICKSTART / name).read_text()) if doc]


def deployment(client: Client, name: str) -> ReplicaSet:
    """The file's Deployment, played by a ReplicaSet stand-in."""
    (spec,) = documents(name)
    metadata = spec["metadata"]
    return ReplicaSet(
        client,
        metadata["name"],
        metadata["namespace"],
        spec["spec"]["replicas"],
        spec["spec"]["template"],
    )


def annotation(api: ApiServer, group: str, key: str) -> Any:
    quota = api.get("elasticquotas", group, group) or {}
    text = (quota.get("metadata", {}).get("annotations") or {}).get(P + key)
    return None if text is None else json.loads(text)


def pods(api: ApiServer, namespace: str) -> list[dict[str, Any]]:
    return [p for p in api.objects("pods") if p["metadata"]["namespace"] == namespace]


def running(api: ApiServer, namespace: str) -> int:
    return sum(1 for p in pods(api, namespace) if p["status"].get("phase") == "Running")


def gated(api: ApiServer, namespace: str) -> list[dict[str, Any]]:
    return [p for p in pods(api, namespace) if p["spec"].get("schedulingGates")]


def events(api: ApiServer, reason: str) -> list[dict[str, Any]]:
    return [e for e in api.objects("events") if e.get("reason") == reason]


async def test_step_4_one_eviction_then_the_replacement_waits_for_quota(tmp_path):
    async with ApiServer() as api:
        api.seed(node("node-1", cpu="4", memory="16Gi", pods="110"))
        client = Client(str(api.url))
        scheduler = Scheduler(client)
        team_a, team_b = deployment(client, "borrow.yaml"), deployment(client, "reclaim.yaml")
        try:
            async with installed(api, tmp_path, "operator.reclaim.delay=2"):
                for obj in documents("tree.yaml"):  # step 2, through admission
                    path = PATHS[obj["kind"]].format(namespace=obj["metadata"].get("namespace"))
                    await client.call("POST", path, obj)
                await scheduler.start()
                await team_a.start()  # step 3: team-a borrows team-b's idle guarantee
                await eventually(
                    lambda: (
                        running(api, "team-a") == 5
                        and (annotation(api, "team-a", "runtime") or {}).get("cpu") == "2500m"
                    ),
                    timeout=30,
                    what="team-a running five pods on a runtime of 2500m",
                )
                assert team_a.created == 5  # each was gated, then admitted: none evicted yet
                await team_b.start()  # step 4: team-b takes its guarantee back
                await eventually(
                    lambda: annotation(api, "team-a", "waiting-pods") == 1,
                    timeout=30,
                    what="the replacement of the evicted pod waiting behind the gate",
                    explain=lambda: [p["metadata"]["name"] for p in pods(api, "team-a")],
                )
                assert api.count("create", "pods", "eviction") == 1
                assert annotation(api, "team-a", "runtime")["cpu"] == "2"
                (waiting,) = gated(api, "team-a")
                name = waiting["metadata"]["name"]
                await eventually(
                    lambda: any(
                        e["involvedObject"]["name"] == name for e in events(api, "WaitingForQuota")
                    ),
                    what="the WaitingForQuota Event on the replacement",
                )
                (told,) = [
                    e for e in events(api, "WaitingForQuota") if e["involvedObject"]["name"] == name
                ]
                assert told["message"] == (
                    "waiting for quota: team-a runtime cpu 2, used or admitted 2, this pod 500m"
                )
                (reclaimed,) = [
                    e
                    for e in events(api, "Reclaimed")
                    if e["involvedObject"]["kind"] == "ElasticQuota"
                ]
                assert "group team-a uses cpu 2500m" in reclaimed["message"]
                await team_b.stop()  # team-b is done: team-a has room again
                for pod in pods(api, "team-b"):
                    path = f"/api/v1/namespaces/team-b/pods/{pod['metadata']['name']}"
                    await client.call("DELETE", path)
                await eventually(
                    lambda: running(api, "team-a") == 5 and not gated(api, "team-a"),
                    timeout=30,
                    what="the replacement admitted and running",
                )
                await eventually(
                    lambda: annotation(api, "team-a", "waiting-pods") is None,
                    what="the WAITING column cleared",
                )
                assert api.count("create", "pods", "eviction") == 1
                assert team_a.created == 6
        finally:
            for controller in (team_a, team_b, scheduler):
                await controller.stop()
            await client.close()
