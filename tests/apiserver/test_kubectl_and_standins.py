"""kubectl reads the emulator (discovery, lists), and the stand-in scheduler and ReplicaSet
controller keep the cluster moving by reacting to watch events."""

from __future__ import annotations

import asyncio

from tests.apiserver.conftest import PODS
from tests.apiserver.standins import ReplicaSet, Scheduler
from tests.manifests import node, pod, quota
from tests.operator.conftest import eventually

KUBECTL = "/usr/bin/kubectl"


async def kubectl(api, tmp_path, *args: str) -> str:
    config = api.write_kubeconfig(tmp_path / "kubeconfig")
    process = await asyncio.create_subprocess_exec(
        KUBECTL,
        "--kubeconfig",
        str(config),
        "--cache-dir",
        str(tmp_path / "cache"),
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await process.communicate()
    assert process.returncode == 0, err.decode()
    return out.decode()


async def test_kubectl_lists_pods_nodes_and_quotas(api, tmp_path):
    api.seed(node("n1", cpu="4"), pod("web-1"), pod("db-1", namespace="data"), quota("team"))
    pods = await kubectl(api, tmp_path, "get", "pods", "-A")
    assert "web-1" in pods and "db-1" in pods and "NAMESPACE" in pods
    assert "n1" in await kubectl(api, tmp_path, "get", "nodes")
    assert "team" in await kubectl(api, tmp_path, "get", "eq", "-n", "quotas")


async def test_the_scheduler_binds_what_fits_and_not_gated_pods(api, client):
    api.seed(node("n1", cpu="2", pods="10"), node("n2", cpu="1", pods="10"))
    scheduler = Scheduler(client)
    await scheduler.start()
    try:
        for name, cpu in (("a", "2"), ("b", "1"), ("c", "1")):
            await client.call("POST", PODS, pod(name, node=None, cpu=cpu))
        await client.call("POST", PODS, pod("gated", node=None, cpu="1", gated=True))

        def placed():
            return {p["metadata"]["name"]: p["spec"].get("nodeName") for p in api.objects("pods")}

        await eventually(lambda: placed()["b"] is not None, what="b to be bound", explain=placed)
        assert placed() == {"a": "n1", "b": "n2", "c": None, "gated": None}
        assert api.get("pods", "a", "apps")["status"]["phase"] == "Running"
        await client.call("DELETE", PODS + "/a")
        await eventually(lambda: placed()["c"] == "n1", what="c to take a's room", explain=placed)
        assert api.count("create", "pods", "binding") == 3
    finally:
        await scheduler.stop()


async def test_the_replicaset_keeps_its_pods_alive(api, client):
    template = {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c"}]}}
    controller = ReplicaSet(client, "web", "apps", 3, template)
    await controller.start()
    try:
        await eventually(lambda: len(api.objects("pods")) == 3, what="three replicas")
        first = api.objects("pods")[0]
        assert first["metadata"]["generateName"] == "web-"
        (owner,) = first["metadata"]["ownerReferences"]
        assert owner["kind"] == "ReplicaSet" and owner["controller"] is True
        evicted = first["metadata"]["name"]
        eviction = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": evicted}}
        await client.call("POST", f"{PODS}/{evicted}/eviction", eviction)
        await eventually(lambda: controller.created == 4, what="a replacement")
        names = {p["metadata"]["name"] for p in api.objects("pods")}
        assert len(names) == 3 and evicted not in names
    finally:
        await controller.stop()
