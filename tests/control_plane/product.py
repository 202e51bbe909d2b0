"""The product installed into the real control plane as a user installs it, run as processes.

`helm install` runs verbatim (the repository's helm, scripts/helm.py) against the real API
server, which admits every object by its own validation; the chart's Deployments then get pods
from the real controllers, which kwok "runs" (no image is pulled). The operator and the webhook
themselves run here as processes, with the environment and arguments of the Deployments as
installed, each with a token of its own chart ServiceAccount (`kubectl create token`), so the
real authorizer enforces the chart's RBAC.

The one difference from the chart: each webhook's `clientConfig.service` becomes
`clientConfig.url: https://<service>.<namespace>.svc:<port><path>`, the port being the webhook
process's on 127.0.0.1, with that name mapped to 127.0.0.1 in /etc/hosts. The chart's
`caBundle` and its Secret's certificate (issued for the Service's names) stay as installed. A
Service's ClusterIP leads nowhere without kube-proxy, and Endpoints may not hold a loopback
address, so a Service cannot reach a process on loopback.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import shlex
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scripts import helm
from tests.chart.rendering import env
from tests.control_plane.cluster import Cluster
from tests.paths import PYTHONPATH, REPO
from tests.ports import free_port
from tests.waiting import eventually

NAMESPACE, RELEASE = "koordinator-system", "elastic-quota"
HOSTS = Path("/etc/hosts")


@dataclass
class Process:
    name: str
    popen: subprocess.Popen[bytes]
    probes: str  # http://127.0.0.1:<probe port>
    log: Path

    def ready(self) -> bool:
        assert self.popen.poll() is None, f"the {self.name} exited: {self.log.read_text()}"
        try:
            with urllib.request.urlopen(self.probes + "/readyz", timeout=2) as response:
                return bool(response.status == 200)
        except (urllib.error.URLError, OSError):
            return False

    async def stop(self) -> None:
        self.popen.send_signal(signal.SIGTERM)
        code = await asyncio.to_thread(self.popen.wait, 20)
        assert code == 0, f"the {self.name} exited with {code}: {self.log.read_text()}"


async def helm_install(cluster: Cluster, command: str) -> str:
    """`helm install ...` as typed, against the cluster; helm's output."""
    words = shlex.split(command)
    assert words[:2] == ["helm", "install"], command
    home = cluster.home / "helm"
    process = await asyncio.create_subprocess_exec(
        str(helm.helm()),
        *words[1:],
        cwd=REPO,
        env={
            **os.environ,
            "KUBECONFIG": str(cluster.kubeconfig),
            "HELM_CACHE_HOME": str(home / "cache"),
            "HELM_CONFIG_HOME": str(home / "config"),
            "HELM_DATA_HOME": str(home / "data"),
        },
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await process.communicate()
    assert process.returncode == 0, f"$ {command}\n{out.decode()}{err.decode()}"
    return out.decode()


def map_to_loopback(name: str, hosts: Path = HOSTS) -> None:
    """`name` resolves to 127.0.0.1 (the line is added once and left: it names nothing else)."""
    line = f"127.0.0.1 {name}"
    if line not in hosts.read_text().splitlines():
        with hosts.open("a") as file:
            file.write(f"{line}\n")


def webhook_configurations(cluster: Cluster) -> dict[str, list[dict[str, Any]]]:
    """The release's webhook configurations as served: kind/name -> its webhooks."""
    found = {}
    for kind in ("mutatingwebhookconfigurations", "validatingwebhookconfigurations"):
        path = f"/apis/admissionregistration.k8s.io/v1/{kind}"
        for configuration in cluster.get(path)["items"]:
            name = configuration["metadata"]["name"]
            if name.startswith(RELEASE):
                found[f"{kind}/{name}"] = configuration["webhooks"]
    return found


def _webhook_urls(cluster: Cluster, port: int) -> None:
    """Every webhook of the release: its Service as a URL on the webhook's local port."""
    for kind in ("mutatingwebhookconfigurations", "validatingwebhookconfigurations"):
        path = f"/apis/admissionregistration.k8s.io/v1/{kind}"
        for configuration in cluster.get(path)["items"]:
            if not configuration["metadata"]["name"].startswith(RELEASE):
                continue
            patch = []
            for index, webhook in enumerate(configuration["webhooks"]):
                config = webhook["clientConfig"]
                service = config.pop("service")
                host = f"{service['name']}.{service['namespace']}.svc"
                map_to_loopback(host)
                config["url"] = f"https://{host}:{port}{service.get('path', '')}"
                patch.append(
                    {"op": "replace", "path": f"/webhooks/{index}/clientConfig", "value": config}
                )
            status, body = cluster.client.request(
                "PATCH",
                f"{path}/{configuration['metadata']['name']}",
                patch,
                content_type="application/json-patch+json",
            )
            assert status == 200, (status, body)


def _kubeconfig(cluster: Cluster, path: Path, token: str) -> Path:
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": "real",
                "cluster": {
                    "server": cluster.server,
                    "certificate-authority": str(cluster.directory / "pki" / "ca.crt"),
                },
            }
        ],
        "users": [{"name": "sa", "user": {"token": token}}],
        "contexts": [{"name": "sa", "context": {"cluster": "real", "user": "sa"}}],
        "current-context": "sa",
    }
    path.write_text(json.dumps(config))
    path.chmod(0o600)
    return path


async def _start(cluster: Cluster, component: str, tmp: Path, overrides: dict[str, str]) -> Process:
    """The component's container as its installed Deployment says, as its ServiceAccount."""
    deployment: dict[str, Any] = cluster.get(
        f"/apis/apps/v1/namespaces/{NAMESPACE}/deployments/{RELEASE}-{component}"
    )
    spec = deployment["spec"]["template"]["spec"]
    (container,) = spec["containers"]
    account = spec["serviceAccountName"]
    token = await cluster.kubectl(f"kubectl create token {account} -n {NAMESPACE} --duration=2h")
    probe_port = free_port()
    rendered = {k: v for k, v in env(deployment).items() if isinstance(v, str)}
    environment = {
        **rendered,
        "ELASTIC_QUOTA_KUBECONFIG": str(
            _kubeconfig(cluster, tmp / f"{component}.kubeconfig", token.strip())
        ),
        "ELASTIC_QUOTA_PROBE_PORT": str(probe_port),
        "ELASTIC_QUOTA_IDENTITY": f"{component}-0",
        **overrides,
    }
    log = tmp / f"{component}.log"
    with log.open("ab") as output:
        popen = subprocess.Popen(
            [sys.executable, "-m", "eq_cli.main", *container["args"]],
            env={**os.environ, "PYTHONPATH": PYTHONPATH, **environment},
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    return Process(component, popen, f"http://127.0.0.1:{probe_port}", log)


@asynccontextmanager
async def running(cluster: Cluster, tmp: Path) -> AsyncIterator[tuple[Process, Process]]:
    """The installed release's webhook and operator, both ready; stopped at the end."""
    tmp.mkdir(parents=True, exist_ok=True)
    secret = cluster.get(f"/api/v1/namespaces/{NAMESPACE}/secrets/{RELEASE}-webhook-tls")
    files = {}
    for key in ("tls.crt", "tls.key"):
        files[key] = tmp / key
        files[key].write_bytes(base64.b64decode(secret["data"][key]))
    port = free_port()
    webhook = await _start(
        cluster,
        "webhook",
        tmp,
        {
            "ELASTIC_QUOTA_ADDRESS": "127.0.0.1",
            "ELASTIC_QUOTA_PORT": str(port),
            "ELASTIC_QUOTA_CERT_FILE": str(files["tls.crt"]),
            "ELASTIC_QUOTA_KEY_FILE": str(files["tls.key"]),
        },
    )
    processes = [webhook]
    try:
        processes.append(await _start(cluster, "operator", tmp, {}))
        for process in processes:
            await eventually(process.ready, timeout=30, what=f"the {process.name} to be ready")
        _webhook_urls(cluster, port)
        yield webhook, processes[1]
    finally:
        for process in processes:
            if process.popen.poll() is None:
                await process.stop()
