"""The product installed into the real control plane as a user installs it, run as processes.

`helm install` runs verbatim (the repository's helm, scripts/helm.py) against the real API
server, which admits every object by its own validation; the chart's Deployments then get pods
from the real controllers, which kwok "runs" (no image is pulled). The operator and the webhook
themselves run here as processes, with the environment and arguments of the Deployments as
installed, each with a token of its own chart ServiceAccount (`kubectl create token`), so the
real authorizer enforces the chart's RBAC.

Several operator replicas may run, each with its own identity and its own token, as the chart's
two replicas are (a replica killed with SIGKILL as a node failure would); the API server's audit
log tells their requests apart by the token's id (`Process.credential`), and the product's
requests are read out of it as `Request`s.

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
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from scripts import helm
from scripts.control_plane.audit import PRODUCT_ACCOUNTS
from scripts.control_plane.build import Built
from scripts.control_plane.plane import ControlPlane
from tests.chart.rendering import env
from tests.control_plane.cluster import Cluster
from tests.paths import PYTHONPATH, REPO
from tests.ports import free_port
from tests.waiting import eventually

NAMESPACE, RELEASE = "koordinator-system", "elastic-quota"
HOSTS = Path("/etc/hosts")
INSTALL = (
    f"helm install {RELEASE} manifests/elastic-quota --namespace {NAMESPACE} --create-namespace"
    " --set image.repository=registry.example.com/elastic-quota"
)
"""The README's `helm install`, but for its `--set operator.reclaim.delay=10`."""


@dataclass
class Process:
    name: str  # the operator's identity (its Lease holder name), or "webhook"
    popen: subprocess.Popen[bytes]
    probes: str  # http://127.0.0.1:<probe port>
    log: Path
    credential: str = ""
    """Its token's id as the audit log names it (`JTI=...`): which replica made a request."""
    command: tuple[list[str], dict[str, str]] = field(default_factory=lambda: ([], {}))
    """Its command line and environment, to start it again."""

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

    async def start_again(self) -> None:
        """The stopped process started again as it was, ready (its Service has endpoints
        again)."""
        argv, environment = self.command
        with self.log.open("ab") as output:
            self.popen = subprocess.Popen(
                argv, env=environment, stdout=output, stderr=subprocess.STDOUT
            )
        await eventually(self.ready, timeout=30, what=f"the {self.name} to be ready again")

    async def kill(self) -> None:
        """SIGKILL, as a node failure ends it: nothing is given up or cleaned."""
        self.popen.kill()
        await asyncio.to_thread(self.popen.wait, 20)

    async def metrics(self) -> str:
        """Its /metrics page (the metrics Service's target)."""

        def scrape() -> str:
            with urllib.request.urlopen(self.probes + "/metrics", timeout=10) as response:
                return str(response.read().decode())

        return await asyncio.to_thread(scrape)


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


def credential(token: str) -> str:
    """The token's id as the audit log shows it (`user.extra`'s credential-id): `JTI=<jti>`."""
    payload = token.split(".")[1]
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    return f"JTI={claims['jti']}"


async def _start(
    cluster: Cluster, component: str, tmp: Path, overrides: dict[str, str], identity: str
) -> Process:
    """The component's container as its installed Deployment says, as its ServiceAccount, with
    a token of its own."""
    deployment: dict[str, Any] = cluster.get(
        f"/apis/apps/v1/namespaces/{NAMESPACE}/deployments/{RELEASE}-{component}"
    )
    spec = deployment["spec"]["template"]["spec"]
    (container,) = spec["containers"]
    account = spec["serviceAccountName"]
    token = (
        await cluster.kubectl(f"kubectl create token {account} -n {NAMESPACE} --duration=2h")
    ).strip()
    probe_port = free_port()
    rendered = {k: v for k, v in env(deployment).items() if isinstance(v, str)}
    environment = {
        **rendered,
        "ELASTIC_QUOTA_KUBECONFIG": str(
            _kubeconfig(cluster, tmp / f"{identity}.kubeconfig", token)
        ),
        "ELASTIC_QUOTA_PROBE_PORT": str(probe_port),
        "ELASTIC_QUOTA_IDENTITY": identity,
        **overrides,
    }
    log = tmp / f"{identity}.log"
    argv = [sys.executable, "-m", "eq_cli.main", *container["args"]]
    environment = {**os.environ, "PYTHONPATH": PYTHONPATH, **environment}
    with log.open("ab") as output:
        popen = subprocess.Popen(argv, env=environment, stdout=output, stderr=subprocess.STDOUT)
    probes = f"http://127.0.0.1:{probe_port}"
    return Process(identity, popen, probes, log, credential(token), (argv, environment))


@dataclass
class Product:
    """The installed release's processes: the webhook and the operator replicas started."""

    cluster: Cluster
    tmp: Path
    webhook: Process
    operators: list[Process] = field(default_factory=list)

    async def start_operator(self, identity: str) -> Process:
        """One more replica, ready (a stand-by is ready once the leader made the built-in
        groups)."""
        operator = await _start(self.cluster, "operator", self.tmp, {}, identity)
        self.operators.append(operator)
        await eventually(operator.ready, timeout=30, what=f"the operator {identity} to be ready")
        return operator


@asynccontextmanager
async def running(cluster: Cluster, tmp: Path) -> AsyncIterator[tuple[Process, Process]]:
    """The installed release's webhook and operator, both ready; stopped at the end."""
    async with product(cluster, tmp) as started:
        yield started.webhook, started.operators[0]


@asynccontextmanager
async def product(cluster: Cluster, tmp: Path, *, operators: int = 1) -> AsyncIterator[Product]:
    """The installed release's webhook and `operators` replicas (`operator-0`, ...), all ready;
    every one still running is stopped at the end, and must exit cleanly."""
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
        "webhook",
    )
    started = Product(cluster, tmp, webhook)
    try:
        await eventually(webhook.ready, timeout=30, what="the webhook to be ready")
        for index in range(operators):
            await started.start_operator(f"operator-{index}")
        _webhook_urls(cluster, port)
        yield started
    finally:
        for process in [webhook, *started.operators]:
            if process.popen.poll() is None:
                await process.stop()


@asynccontextmanager
async def installed(
    built: Built, directory: Path, *settings: str, crds: tuple[Path, ...] = (), operators: int = 1
) -> AsyncIterator[tuple[ControlPlane, Cluster, Product]]:
    """A control plane of its own with the chart installed by `helm install` (INSTALL with a
    `--set` for each of `settings`, after the CRDs `crds`), and the product running on it; all
    stopped at the end. Its own: the chart's webhooks gate every pod of every namespace."""
    plane = ControlPlane(directory / "plane", built)
    await asyncio.to_thread(plane.start)
    try:
        cluster = Cluster(plane.directory, plane.server, directory / "user")
        for crd in crds:
            await cluster.kubectl(f"kubectl apply -f {crd}")
            await cluster.kubectl(f"kubectl wait --for condition=established -f {crd}")
        await helm_install(cluster, " ".join([INSTALL, *(f"--set {s}" for s in settings)]))
        async with product(cluster, directory / "product", operators=operators) as started:
            yield plane, cluster, started
    finally:
        await asyncio.to_thread(plane.stop)


@dataclass(frozen=True)
class Request:
    """One request of the product's as the API server's audit log has it."""

    account: str  # the ServiceAccount's name
    credential: str  # which token: `Process.credential`
    verb: str  # as RBAC names it: get, list, watch, create, patch, ...
    group: str  # the API group, "" for the core one
    resource: str  # `pods`, or with its subresource: `pods/eviction`
    namespace: str  # the object's, if it has one
    name: str  # the object's, if the request named one
    code: int
    received: str  # requestReceivedTimestamp, microseconds, UTC

    @property
    def at(self) -> float:
        """When the API server received it, in seconds since the epoch."""
        return moment(self.received)

    @property
    def grant(self) -> tuple[str, str, str]:
        """What RBAC must allow for it: (API group, resource, verb)."""
        return self.group, self.resource, self.verb


def moment(stamp: str) -> float:
    """An API timestamp (`2026-12-02T16:23:07.807240Z`) in seconds since the epoch."""
    return datetime.fromisoformat(stamp).timestamp()


def product_requests(audit_log: Path) -> list[Request]:
    """Every request of the product's ServiceAccounts to an API resource (discovery left out),
    answered or, for a watch, begun: a watch open till the end has no ResponseComplete."""
    last: dict[str, dict[str, Any]] = {}
    # The API server may be writing the last line: only whole lines are read.
    for line in audit_log.read_text().split("\n")[:-1]:
        event = json.loads(line)
        if PRODUCT_ACCOUNTS in event["user"].get("groups", []) and "objectRef" in event:
            last[event["auditID"]] = event  # ResponseStarted, then ResponseComplete
    found = []
    for event in last.values():
        reference, user = event["objectRef"], event["user"]
        subresource = reference.get("subresource")
        found.append(
            Request(
                account=user["username"].rsplit(":", 1)[-1],
                credential=(
                    user.get("extra", {}).get("authentication.kubernetes.io/credential-id") or [""]
                )[0],
                verb=event["verb"],
                group=reference.get("apiGroup", ""),
                resource=reference["resource"] + (f"/{subresource}" if subresource else ""),
                namespace=reference.get("namespace", ""),
                name=reference.get("name", ""),
                code=event["responseStatus"]["code"],
                received=event["requestReceivedTimestamp"],
            )
        )
    return found
