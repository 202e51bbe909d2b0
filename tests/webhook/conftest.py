"""The real webhook process (`elastic-quota webhook`), served with test certificates against an
emulated API server, and a client that talks to it as the API server does."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import signal
import ssl
import subprocess
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import pytest_asyncio
import trustme

from tests.apiserver import ApiServer
from tests.kube import write_kubeconfig
from tests.manifests import node, pod, quota
from tests.paths import PYTHONPATH
from tests.ports import free_port  # the tests of this folder and of others import it from here
from tests.waiting import eventually

REVIEW = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"}
KINDS = {
    "ElasticQuota": ("scheduling.sigs.k8s.io", "v1alpha1", "elasticquotas"),
    "Pod": ("", "v1", "pods"),
    "Job": ("batch", "v1", "jobs"),
    "CronJob": ("batch", "v1", "cronjobs"),
}


def review(
    operation: str,
    *,
    new: dict[str, Any] | None = None,
    old: dict[str, Any] | None = None,
    kind: str | None = None,
    uid: str = "review-1",
    namespace: str | None = None,
) -> dict[str, Any]:
    """An AdmissionReview v1 as the API server sends it; `namespace`: the request's, for an
    object that does not carry its own."""
    subject = new if new is not None else old
    assert subject is not None
    kind = kind or subject["kind"]
    group, version, resource = KINDS.get(kind, ("apps", "v1", kind.lower() + "s"))
    return {
        **REVIEW,
        "request": {
            "uid": uid,
            "kind": {"group": group, "version": version, "kind": kind},
            "resource": {"group": group, "version": version, "resource": resource},
            "operation": operation,
            "namespace": namespace or subject["metadata"].get("namespace"),
            "name": subject["metadata"].get("name", ""),
            "userInfo": {"username": "tests"},
            "object": new,
            "oldObject": old,
            "dryRun": False,
        },
    }


@dataclass
class Certificates:
    ca: trustme.CA
    cert_file: Path
    key_file: Path

    @classmethod
    def issue(cls, directory: Path, ca: trustme.CA | None = None) -> Certificates:
        ca = ca or trustme.CA()
        issued = ca.issue_cert("127.0.0.1", "localhost")
        cert_file, key_file = directory / "tls.crt", directory / "tls.key"
        issued.cert_chain_pems[0].write_to_path(cert_file)
        issued.private_key_pem.write_to_path(key_file)
        return cls(ca, cert_file, key_file)

    def client_context(self) -> ssl.SSLContext:
        context = ssl.create_default_context()
        self.ca.configure_trust(context)
        return context


@dataclass
class Webhook:
    url: str
    probes: str
    session: aiohttp.ClientSession
    context: ssl.SSLContext
    process: subprocess.Popen[bytes]

    async def post(self, path: str, body: Any) -> aiohttp.ClientResponse:
        data = body if isinstance(body, bytes) else None
        response = await self.session.post(
            self.url + path, data=data, json=None if data is not None else body, ssl=self.context
        )
        await response.read()
        return response

    async def review(self, body: dict[str, Any], *, path: str = "") -> dict[str, Any]:
        """The `response` of an AdmissionReview, sent to `path`, by default the validating
        endpoint of its kind."""
        path = (
            path
            or {"ElasticQuota": "/validate/elasticquotas", "Pod": "/validate/pods"}[
                body["request"]["kind"]["kind"]
            ]
        )
        response = await self.post(path, body)
        assert response.status == 200, await response.text()
        answer = await response.json()
        assert answer["response"]["uid"] == body["request"]["uid"]
        return answer["response"]  # type: ignore[no-any-return]

    async def mutation(self, path: str, body: dict[str, Any]) -> list[Any]:
        """The JSON Patch a mutating endpoint answers `body` with ([]: let through unchanged);
        it never denies."""
        answer = await self.review(body, path=path)
        assert answer["allowed"] is True
        if "patch" not in answer:
            return []
        assert answer["patchType"] == "JSONPatch"
        return json.loads(base64.b64decode(answer["patch"]))  # type: ignore[no-any-return]


async def start_webhook(
    tmp: Path, api_url: str, certificates: Certificates, *extra: str, wait: float = 20.0
) -> Webhook:
    """Start `elastic-quota webhook`; wait up to `wait` seconds for it to be ready (0: only for
    it to listen)."""
    port, probe_port = free_port(), free_port()
    kubeconfig = write_kubeconfig(tmp / "kubeconfig", api_url)
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "eq_cli.main",
            "webhook",
            "--address",
            "127.0.0.1",
            "--port",
            str(port),
            "--probe-port",
            str(probe_port),
            "--kubeconfig",
            str(kubeconfig),
            "--cert-file",
            str(certificates.cert_file),
            "--key-file",
            str(certificates.key_file),
            *extra,
        ],
        env={
            **os.environ,
            "PYTHONPATH": PYTHONPATH,
        },
    )
    session = aiohttp.ClientSession()
    webhook = Webhook(
        f"https://127.0.0.1:{port}",
        f"http://127.0.0.1:{probe_port}",
        session,
        certificates.client_context(),
        process,
    )

    async def answers() -> bool:
        assert process.poll() is None, "the webhook exited while starting"
        try:
            async with session.get(webhook.probes + "/readyz") as response:
                return response.status == 200 or not wait
        except aiohttp.ClientConnectionError:
            return False

    try:
        await eventually(
            answers,
            timeout=wait or 20.0,
            what="the webhook to be ready" if wait else "the webhook to answer",
        )
    except BaseException:
        if process.poll() is None:
            await stop_webhook(webhook)
        else:
            await session.close()
        raise
    return webhook


async def stop_webhook(webhook: Webhook) -> None:
    await webhook.session.close()
    webhook.process.send_signal(signal.SIGTERM)
    code = await asyncio.to_thread(webhook.process.wait, 10)
    assert code == 0, f"the webhook exited with {code}"


def cluster_objects() -> list[dict[str, Any]]:
    """dept-a (ml, web), dept-b (nlp, shared), the leaf solo, an empty parent, pods, a node."""
    res = {"cpu": 200, "memory": "200Gi"}
    return [
        quota("dept-a", is_parent=True, min={"cpu": 100, "memory": "100Gi"}, max=res),
        quota(
            "ml", namespace="team-ml", parent="dept-a", min={"cpu": 80, "memory": "60Gi"}, max=res
        ),
        quota("web", namespace="web", parent="dept-a", min={"cpu": 10}, max=res),
        quota("dept-b", is_parent=True, min={"cpu": 50}, max=res, namespaces=["dept-b-ns"]),
        quota("nlp", namespace="nlp", parent="dept-b", min={"cpu": 20}, max=res),
        quota("shared", parent="dept-b", min={"cpu": 20}, max=res, namespaces=["shared-1"]),
        quota("solo", min={"cpu": 10}, max=res),
        quota("empty", is_parent=True, max=res),
        quota("koordinator-default-quota", namespace="koordinator-system", max=res),
        *(pod(f"solo-{i}", quota="solo", cpu="1") for i in range(5)),
        pod("tagger", namespace="nlp", cpu="1"),
        pod("trainer", namespace="team-ml", quota="ml", cpu="1"),
        node("n1", cpu="200", memory="400Gi"),
    ]


def replace_objects(api: ApiServer, objects: list[dict[str, Any]]) -> None:
    """Make `objects` the emulator's only ElasticQuotas, Pods and Nodes."""
    for plural in ("elasticquotas", "pods", "nodes"):
        resource = api.catalog.named(plural)
        for key in list(api.storage.tables[plural].items):
            api.storage.remove(resource, key)
    api.seed(*objects)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def api() -> AsyncIterator[ApiServer]:
    async with ApiServer() as emulator:
        emulator.seed(*cluster_objects())
        yield emulator


@pytest.fixture(scope="module")
def certificates(tmp_path_factory: pytest.TempPathFactory) -> Certificates:
    return Certificates.issue(tmp_path_factory.mktemp("tls"))


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def webhook(
    api: ApiServer, certificates: Certificates, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Webhook]:
    running = await start_webhook(tmp_path_factory.mktemp("webhook"), str(api.url), certificates)
    yield running
    await stop_webhook(running)
