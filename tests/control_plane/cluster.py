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

from scripts.control_plane.client import Client
from tests.waiting import eventually

KUBECTL = "/usr/bin/kubectl"
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
