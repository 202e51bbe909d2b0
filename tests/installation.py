"""The chart installed on the emulated API server, as `helm install` would leave a cluster.

`helm template` renders the chart with the caller's `--set` values; the webhook configurations
go to the emulator's admission chain as rendered (rules, selectors, match conditions, failure
policies, the service path and the `caBundle`); the operator and the webhook run as processes
with the environment and arguments their Deployments render, and the webhook serves the
certificate of the rendered Secret, which the emulator checks against that `caBundle` under the
service's DNS name. Only what a pod gets from its node differs: ports on loopback, files in a
temporary directory, a kubeconfig instead of the service account's mounted token.
"""

from __future__ import annotations

import asyncio
import base64
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import yaml

from tests.apiserver import ApiServer, User
from tests.chart.rendering import IMAGE, env, find, helm
from tests.paths import PYTHONPATH
from tests.webhook.conftest import free_port

NAMESPACE, RELEASE = "koordinator-system", "elastic-quota"


@dataclass
class Process:
    name: str
    popen: subprocess.Popen[bytes]
    probes: str

    async def ready(self) -> bool:
        assert self.popen.poll() is None, f"the {self.name} exited"
        try:
            async with (
                aiohttp.ClientSession() as session,
                session.get(self.probes + "/readyz") as response,
            ):
                return response.status == 200
        except aiohttp.ClientConnectionError:
            return False

    async def stop(self) -> None:
        self.popen.send_signal(signal.SIGTERM)
        code = await asyncio.to_thread(self.popen.wait, 20)
        assert code == 0, f"the {self.name} exited with {code}"


def render(*settings: str) -> list[dict[str, Any]]:
    flags = [part for setting in (IMAGE, *settings) for part in ("--set", setting)]
    text = helm.template("--namespace", NAMESPACE, *flags, release=RELEASE)
    return [doc for doc in yaml.safe_load_all(text) if doc]


def _service_account(objects: list[dict[str, Any]], component: str) -> User:
    deployment = find(tuple(objects), "Deployment", f"{RELEASE}-{component}")
    account = deployment["spec"]["template"]["spec"]["serviceAccountName"]
    return User(f"system:serviceaccount:{NAMESPACE}:{account}", ("system:serviceaccounts",))


def _start(
    objects: list[dict[str, Any]],
    component: str,
    api: ApiServer,
    tmp: Path,
    overrides: dict[str, str],
) -> Process:
    """The component's container as its Deployment renders it, on loopback ports."""
    deployment = find(tuple(objects), "Deployment", f"{RELEASE}-{component}")
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    token = f"{component}-token"
    api.users[token] = _service_account(objects, component)
    probe_port = free_port()
    rendered = {k: v for k, v in env(deployment).items() if isinstance(v, str)}
    environment = {
        **rendered,
        "ELASTIC_QUOTA_KUBECONFIG": str(
            api.write_kubeconfig(tmp / f"{component}.kubeconfig", token)
        ),
        "ELASTIC_QUOTA_PROBE_PORT": str(probe_port),
        "ELASTIC_QUOTA_IDENTITY": f"{component}-0",
        **overrides,
    }
    popen = subprocess.Popen(
        [sys.executable, "-m", "eq_cli.main", *container["args"]],
        env={**os.environ, "PYTHONPATH": PYTHONPATH, **environment},
    )
    return Process(component, popen, f"http://127.0.0.1:{probe_port}")


@asynccontextmanager
async def installed(api: ApiServer, tmp: Path, *settings: str) -> AsyncIterator[list[Process]]:
    """The chart installed with `settings`; yields the webhook and the operator, both ready."""
    objects = render(*settings)
    secret = find(tuple(objects), "Secret", f"{RELEASE}-webhook-tls")
    files = {}
    for key in ("tls.crt", "tls.key"):
        files[key] = tmp / key
        files[key].write_bytes(base64.b64decode(secret["data"][key]))
    port = free_port()
    service = find(tuple(objects), "Service", f"{RELEASE}-webhook")
    service_port = service["spec"]["ports"][0]["port"]
    configurations = [o for o in objects if o["kind"].endswith("WebhookConfiguration")]
    api.admission.configure(
        configurations, {(NAMESPACE, f"{RELEASE}-webhook", service_port): f"127.0.0.1:{port}"}
    )
    webhook = _start(
        objects,
        "webhook",
        api,
        tmp,
        {
            "ELASTIC_QUOTA_ADDRESS": "127.0.0.1",
            "ELASTIC_QUOTA_PORT": str(port),
            "ELASTIC_QUOTA_CERT_FILE": str(files["tls.crt"]),
            "ELASTIC_QUOTA_KEY_FILE": str(files["tls.key"]),
        },
    )
    operator = _start(objects, "operator", api, tmp, {})
    processes = [webhook, operator]
    try:
        from tests.operator.conftest import eventually

        for process in processes:
            await eventually(process.ready, timeout=30, what=f"the {process.name} to be ready")
        yield processes
    finally:
        for process in processes:
            if process.popen.poll() is None:
                await process.stop()
