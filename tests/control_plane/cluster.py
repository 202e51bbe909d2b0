"""What the tests on the real control plane do with it: kubectl as a user types it, reads
through the API as the admin, and waits that say what is missing when they time out."""

from __future__ import annotations

import asyncio
import itertools
import os
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scripts.control_plane.audit import PRODUCT_ACCOUNTS, audit_events
from scripts.control_plane.client import Client
from scripts.control_plane.plane import NOT_READY_TAINT
from tests.waiting import eventually

KUBECTL = "/usr/bin/kubectl"
MERGE = "application/merge-patch+json"
_names = itertools.count()


@dataclass(frozen=True)
class Cluster:
    """One control plane as a test sees it."""

    directory: Path  # the control plane's: logs/, pki/, admin.kubeconfig
    server: str
    home: Path  # the test's own HOME and kubectl cache

    @property
    def kubeconfig(self) -> Path:
        return self.directory / "admin.kubeconfig"

    @property
    def client(self) -> Client:
        return Client(self.server, self.directory / "pki")

    def get(self, path: str) -> Any:
        return self.client.get(path)

    async def complete(self, pod: dict[str, Any]) -> None:
        """What the kubelet writes when every container of `pod` exited 0: phase Succeeded,
        each container terminated with reason Completed (`kubectl get pods` says Completed).
        kwok ends no pod by itself: its pod-complete stage would end every Job pod at once."""
        finished_at = "2026-01-01T00:01:00Z"
        containers = [
            {
                "name": c.get("name", ""),
                "image": c.get("image", ""),
                "imageID": c.get("image", ""),
                "ready": False,
                "started": False,
                "restartCount": 0,
                "state": {
                    "terminated": {"exitCode": 0, "reason": "Completed", "finishedAt": finished_at}
                },
            }
            for c in (pod.get("spec") or {}).get("containers") or ()
        ]
        patch = {"status": {"phase": "Succeeded", "containerStatuses": containers}}
        metadata = pod["metadata"]
        path = f"/api/v1/namespaces/{metadata['namespace']}/pods/{metadata['name']}/status"
        status, answer = await asyncio.to_thread(
            self.client.request, "PATCH", path, patch, content_type=MERGE
        )
        assert status < 400, f"PATCH {path}: {status} {answer}"

    async def kubectl(self, command: str, *, stdin: str | None = None) -> str:
        """`kubectl ...` as typed; its output, or an AssertionError that shows what it said."""
        words = shlex.split(command)
        assert words[0] == "kubectl", command
        process = await asyncio.create_subprocess_exec(
            KUBECTL,
            *words[1:],
            env={
                **os.environ,
                "HOME": str(self.home),
                "KUBECONFIG": str(self.kubeconfig),
                "KUBECACHEDIR": str(self.home / "kubectl-cache"),
            },
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await process.communicate(None if stdin is None else stdin.encode())
        assert process.returncode == 0, (
            f"$ {command}\n(exit {process.returncode})\n{out.decode()}{err.decode()}"
        )
        return out.decode()

    async def namespace(self, prefix: str) -> str:
        """A new namespace of the test's own, once its `default` ServiceAccount is there (the
        ServiceAccount admission plugin refuses pods without it)."""
        name = f"{prefix}-{os.getpid()}-{next(_names)}"
        await self.kubectl(f"kubectl create namespace {name}")
        await eventually(
            lambda: (
                self.client.request("GET", f"/api/v1/namespaces/{name}/serviceaccounts/default")[0]
                == 200
            ),
            timeout=30,
            what=f"the ServiceAccount {name}/default (the ServiceAccount controller)",
        )
        return name

    async def create_nodes(self, *nodes: dict[str, Any]) -> None:
        """The Nodes created, each then Ready (kwok) and rid of the not-ready taint (the node
        lifecycle controller), so that the scheduler places pods on it."""
        for node in nodes:
            status, body = self.client.request("POST", "/api/v1/nodes", node)
            assert status == 201, f"creating node {node['metadata']['name']}: {status} {body}"
        names = [node["metadata"]["name"] for node in nodes]
        await eventually(
            lambda: not self.nodes_not_ready(names),
            timeout=60,
            what=f"the nodes {names} Ready and untainted",
            explain=lambda: self.nodes_not_ready(names),
        )

    def nodes_not_ready(self, names: list[str]) -> list[str]:
        """Of the nodes `names`, those that are not Ready or still tainted not-ready, and why."""
        problems = []
        for name in names:
            node = self.get(f"/api/v1/nodes/{name}")
            ready = [c for c in node["status"].get("conditions", []) if c["type"] == "Ready"]
            if not ready or ready[0]["status"] != "True":
                problems.append(f"{name} not Ready (is kwok running?)")
            if NOT_READY_TAINT in [t["key"] for t in node["spec"].get("taints", [])]:
                problems.append(f"{name} tainted {NOT_READY_TAINT} (node lifecycle controller)")
        return problems

    def pods(self, namespace: str, selector: str = "") -> list[dict[str, Any]]:
        query = f"?labelSelector={selector}" if selector else ""
        items: list[dict[str, Any]] = self.get(f"/api/v1/namespaces/{namespace}/pods{query}")[
            "items"
        ]
        return items

    async def wait_running(
        self, namespace: str, count: int, *, selector: str = "", timeout: float = 60
    ) -> list[dict[str, Any]]:
        """`count` pods Running in `namespace`; on timeout, what holds the others."""
        found: list[dict[str, Any]] = []

        def running() -> bool:
            found[:] = [
                pod
                for pod in self.pods(namespace, selector)
                if pod["status"].get("phase") == "Running"
                and "deletionTimestamp" not in pod["metadata"]
            ]
            return len(found) >= count

        await eventually(
            running,
            timeout=timeout,
            what=f"{count} pods Running in {namespace}",
            explain=lambda: explain_pods(self.pods(namespace, selector)),
        )
        return found


def refused_to_the_product(audit_log: Path) -> list[tuple[str, str, str]]:
    """The product's requests that the API server's authorizer refused (403), by the audit log:
    (user, verb, URI) each. The log must hold requests of the product at all."""
    product = [e for e in audit_events(audit_log) if PRODUCT_ACCOUNTS in e["user"]["groups"]]
    assert product, "no request of the product's ServiceAccounts in the audit log"
    return [
        (e["user"]["username"], e["verb"], e["requestURI"])
        for e in product
        if e["responseStatus"]["code"] == 403
    ]


def kwok_node(name: str, capacity: dict[str, str], labels: dict[str, str]) -> dict[str, Any]:
    """A Node as `ControlPlane` makes its own (kwok's annotation, capacity as allocatable),
    with `labels` besides the kubelet's: for `kubectl create -f` or `Cluster.create_nodes`."""
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "annotations": {"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"},
            "labels": {
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
                **labels,
            },
        },
        "status": {"capacity": capacity, "allocatable": capacity},
    }


def explain_pods(pods: list[dict[str, Any]]) -> str:
    """Why pods are not running, in the words of the component that should have acted."""
    if not pods:
        return "no pods at all: is kube-controller-manager running (Deployment, ReplicaSet)?"
    reasons = []
    for pod in pods:
        name, phase = pod["metadata"]["name"], pod["status"].get("phase")
        if not pod["spec"].get("nodeName"):
            scheduled = [
                c for c in pod["status"].get("conditions", []) if c["type"] == "PodScheduled"
            ]
            why = (
                f"{scheduled[0].get('reason')}: {scheduled[0].get('message')}"
                if scheduled
                else "no PodScheduled condition: is kube-scheduler running?"
            )
            reasons.append(f"{name} not scheduled ({why})")
        elif phase != "Running":
            reasons.append(
                f"{name} on {pod['spec']['nodeName']} is {phase}: is kwok running (pod-ready)?"
            )
    return "; ".join(reasons) or "all running"
