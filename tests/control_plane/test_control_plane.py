"""The real control plane does what the product's tests will rely on: kwok nodes Ready, pods
made by the real controllers and placed by the real scheduler, deleted pods ending as a
kubelet ends them, ServiceAccount tokens under the real authorizer; and a part missing is a
failure that says which, not a hang."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest

from scripts.control_plane.build import BINARIES, Built, versions
from scripts.control_plane.plane import ControlPlane
from scripts.control_plane.processes import ControlPlaneError
from tests.control_plane.cluster import Cluster
from tests.waiting import eventually

IMAGE = "registry.example.com/web:1"  # never pulled: kwok runs no containers


def held_pod(name: str) -> str:
    return json.dumps(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "finalizers": ["example.com/hold"]},
            "spec": {"containers": [{"name": "main", "image": IMAGE}]},
        }
    )


async def test_kubectl_sees_four_ready_kwok_nodes_of_the_pinned_release(cluster: Cluster) -> None:
    nodes = json.loads(await cluster.kubectl("kubectl get nodes -o json"))["items"]
    assert sorted(n["metadata"]["name"] for n in nodes) == [f"kwok-node-{i}" for i in range(4)]
    for node in nodes:
        (ready,) = [c for c in node["status"]["conditions"] if c["type"] == "Ready"]
        assert ready["status"] == "True", node["metadata"]["name"]
    table = await cluster.kubectl("kubectl get nodes --no-headers")
    assert [line.split()[1] for line in table.splitlines()] == ["Ready"] * 4
    version = json.loads(await cluster.kubectl("kubectl version -o json"))
    assert version["serverVersion"]["gitVersion"] == versions().kubernetes


async def test_a_deployments_pods_run_on_kwok_nodes(cluster: Cluster) -> None:
    namespace = await cluster.namespace("deployment")
    await cluster.kubectl(
        f"kubectl create deployment web --image={IMAGE} --replicas=3 -n {namespace}"
    )
    pods = await cluster.wait_running(namespace, 3, selector="app=web")
    assert {pod["spec"]["nodeName"] for pod in pods} <= {f"kwok-node-{i}" for i in range(4)}
    assert all(pod["status"]["podIP"].startswith("10.244.") for pod in pods)
    await eventually(
        lambda: (
            cluster.get(f"/apis/apps/v1/namespaces/{namespace}/deployments/web")["status"].get(
                "availableReplicas"
            )
            == 3
        ),
        timeout=30,
        what="the Deployment's 3 replicas available",
    )


async def test_a_deleted_pod_ends_as_a_kubelet_would(cluster: Cluster) -> None:
    namespace = await cluster.namespace("deleted")
    # A finalizer holds it: it is Failed, its container killed (137), until the finalizer goes.
    await cluster.kubectl(f"kubectl apply -n {namespace} -f -", stdin=held_pod("held"))
    await cluster.wait_running(namespace, 1)
    await cluster.kubectl(f"kubectl delete pod held -n {namespace} --wait=false")
    path = f"/api/v1/namespaces/{namespace}/pods/held"

    def terminated() -> bool:
        pod = cluster.get(path)
        statuses = pod["status"].get("containerStatuses", [])
        return (
            pod["status"]["phase"] == "Failed"
            and bool(statuses)
            and statuses[0]["state"].get("terminated", {}).get("exitCode") == 137
        )

    await eventually(terminated, timeout=30, what="the held pod Failed with exit code 137")
    assert "deletionTimestamp" in cluster.get(path)["metadata"]
    await cluster.kubectl(
        f"kubectl patch pod held -n {namespace} --type=json "
        """-p '[{"op": "remove", "path": "/metadata/finalizers"}]'"""
    )
    await eventually(
        lambda: cluster.client.request("GET", path)[0] == 404,
        timeout=30,
        what="the pod gone once no finalizer holds it",
    )

    # Without a finalizer a deleted pod is gone at once, and its ReplicaSet replaces it.
    await cluster.kubectl(f"kubectl create deployment web --image={IMAGE} -n {namespace}")
    (first,) = await cluster.wait_running(namespace, 1, selector="app=web")
    name = first["metadata"]["name"]
    await cluster.kubectl(f"kubectl delete pod {name} -n {namespace}")  # waits until gone
    (second,) = await cluster.wait_running(namespace, 1, selector="app=web")
    assert second["metadata"]["name"] != name


async def test_a_service_account_token_meets_the_real_authorizer(cluster: Cluster) -> None:
    namespace = await cluster.namespace("token")
    await cluster.kubectl(f"kubectl create serviceaccount robot -n {namespace}")
    token = (await cluster.kubectl(f"kubectl create token robot -n {namespace}")).strip()
    as_robot = (
        f"kubectl --kubeconfig=/dev/null --server={cluster.server} "
        f"--certificate-authority={cluster.directory / 'pki' / 'ca.crt'} --token={token}"
    )
    whoami = json.loads(await cluster.kubectl(f"{as_robot} auth whoami -o json"))
    assert whoami["status"]["userInfo"]["username"] == f"system:serviceaccount:{namespace}:robot"
    with pytest.raises(AssertionError, match="Forbidden"):
        await cluster.kubectl(f"{as_robot} get pods -n {namespace}")
    await cluster.kubectl(
        f"kubectl create rolebinding robot --clusterrole=view "
        f"--serviceaccount={namespace}:robot -n {namespace}"
    )

    async def can_list() -> bool:
        try:
            return (
                await cluster.kubectl(f"{as_robot} auth can-i list pods -n {namespace}")
            ).strip() == "yes"
        except AssertionError:  # "no" exits 1
            return False

    await eventually(can_list, timeout=10, what="the RoleBinding in force")
    await cluster.kubectl(f"{as_robot} get pods -n {namespace}")


async def test_without_a_scheduler_pods_stay_unscheduled_and_the_wait_says_so(
    built: Built, tmp_path: Path
) -> None:
    plane = ControlPlane(
        tmp_path / "plane",
        built,
        nodes=1,
        components=("etcd", "kube-apiserver", "kube-controller-manager", "kwok"),
    )
    await asyncio.to_thread(plane.start)
    try:
        cluster = Cluster(plane.directory, plane.server, tmp_path / "home")
        namespace = await cluster.namespace("unscheduled")
        await cluster.kubectl(
            f"kubectl create deployment web --image={IMAGE} --replicas=2 -n {namespace}"
        )
        await eventually(
            lambda: len(cluster.pods(namespace)) == 2,
            timeout=30,
            what="the ReplicaSet's 2 pods",
        )
        with pytest.raises(AssertionError) as failed:
            await cluster.wait_running(namespace, 2, timeout=3)
        message = str(failed.value)
        assert message.startswith(f"timed out waiting for 2 pods Running in {namespace}: ")
        assert message.count("not scheduled (no PodScheduled condition: is kube-scheduler") == 2
    finally:
        await asyncio.to_thread(plane.stop)
    assert all(code is not None for code in plane.running().values())


async def test_a_component_that_cannot_start_fails_the_start_with_its_log(
    built: Built, tmp_path: Path
) -> None:
    broken = Built(tmp_path / "built")
    broken.bin.mkdir(parents=True)
    shutil.copytree(built.stages, broken.stages)
    for name in BINARIES:
        (broken.bin / name).symlink_to(built.binary(name))
    (broken.bin / "kube-scheduler").unlink()
    (broken.bin / "kube-scheduler").write_text("#!/bin/sh\necho 'E0101 cannot start' >&2\nexit 3\n")
    (broken.bin / "kube-scheduler").chmod(0o755)
    plane = ControlPlane(
        tmp_path / "plane", broken, components=("etcd", "kube-apiserver", "kube-scheduler")
    )
    with pytest.raises(ControlPlaneError) as failed:
        await asyncio.to_thread(plane.start)
    assert "kube-scheduler exited with 3 while starting" in str(failed.value)
    assert "E0101 cannot start" in str(failed.value)
    assert all(code is not None for code in plane.running().values()), "all stopped again"
