"""The two servers the emulator's HTTP tests run against: the emulator and kube-apiserver.

A test of what the emulator copies from kube-apiserver (storage, LIST, WATCH, writes,
patches, subresources) takes the `server` fixture and runs once on each: the emulator (a
server of its own) and the real control plane that tests/control_plane starts for the run
(shared by every test, so each test gets namespaces of its own, `server.apps` and
`server.quotas`). A test that needs what only the emulator does on demand (faults, compaction,
a small watch window) takes `api` instead. docs/development.md lists what differs.
"""

from __future__ import annotations

import itertools
import os
import ssl
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from scripts.control_plane.client import Client as AdminClient
from tests.apiserver.client import Client
from tests.apiserver.resources import (
    BUILTINS,
    CRD_FILE,
    PROFILE_CRD_FILE,
    Catalog,
    from_crd,
    load_crd,
)
from tests.apiserver.server import ApiServer
from tests.waiting import eventually

_names = itertools.count()
JSON = dict[str, Any]


@dataclass
class Server:
    """What a test asks of either server. `apps` and `quotas` are the test's namespaces for
    pods and ElasticQuotas: `apps` and `quotas` on the emulator, fresh ones on the real server."""

    name: str  # "emulator" or "kube-apiserver"
    client: Client
    apps: str
    quotas: str
    catalog: Catalog
    emulator: ApiServer | None = None
    admin: AdminClient | None = None

    @property
    def real(self) -> bool:
        return self.emulator is None

    @property
    def pods(self) -> str:
        return f"/api/v1/namespaces/{self.apps}/pods"

    @property
    def quota_path(self) -> str:
        return f"/apis/scheduling.sigs.k8s.io/v1alpha1/namespaces/{self.quotas}/elasticquotas"

    def path(self, key: str, namespace: str | None = None, name: str = "") -> str:
        prefix = self.catalog.named(key).prefix(namespace)
        return f"{prefix}/{name}" if name else prefix

    async def seed(self, *objects: JSON) -> list[JSON]:
        """The objects stored as created, their status as given (the emulator stores them so
        directly; the real server is sent a create, then the status)."""
        if self.emulator is not None:
            return self.emulator.seed(*objects)
        stored = []
        for obj in objects:
            resource = self.catalog.by_kind[obj["apiVersion"], obj["kind"]]
            namespace = obj["metadata"].get("namespace")
            created = await self.client.call("POST", resource.prefix(namespace), _unscheduled(obj))
            if obj.get("status") and resource.has_status:
                created = await self.client.call(
                    "PATCH",
                    f"{resource.prefix(namespace)}/{created['metadata']['name']}/status",
                    {"status": obj["status"]},
                    content_type="application/merge-patch+json",
                )
            stored.append(created)
        return stored

    async def get(self, key: str, name: str, namespace: str | None = None) -> JSON | None:
        if self.emulator is not None:
            return self.emulator.get(key, name, namespace)
        status, body, _ = await self.client.request("GET", self.path(key, namespace, name))
        assert status in (200, 404), (status, body)
        return body if status == 200 else None

    async def version(self) -> int:
        """The store's resourceVersion now: a later write gets a greater one."""
        if self.emulator is not None:
            return self.emulator.storage.rv
        return int((await self.client.call("GET", self.pods))["metadata"]["resourceVersion"])


def _unscheduled(obj: JSON) -> JSON:
    """A pod seeded unbound stays so: the real control plane's kube-scheduler would bind it,
    the emulator has none. A scheduler name no scheduler answers to keeps it Pending."""
    if obj["kind"] != "Pod" or obj["spec"].get("nodeName"):
        return obj
    return {**obj, "spec": {**obj["spec"], "schedulerName": "none"}}


def emulated(api: ApiServer) -> Server:
    return Server("emulator", Client(api.url), "apps", "quotas", api.catalog, emulator=api)


def tls(pki: Path) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=str(pki / "ca.crt"))
    context.load_cert_chain(pki / "admin.crt", pki / "admin.key")
    return context


async def real(server: str, pki: Path) -> Server:
    """The real server as its admin, with the chart's CRDs and two new namespaces."""
    profiles = load_crd(PROFILE_CRD_FILE)
    catalog = Catalog((*BUILTINS, from_crd(load_crd()), from_crd(profiles, qualified=True)))
    admin = AdminClient(server, pki)
    for crd in (CRD_FILE, PROFILE_CRD_FILE):
        await _install_crd(admin, crd)
    suffix = f"{os.getpid()}-{next(_names)}"
    apps, quotas = f"apps-{suffix}", f"quotas-{suffix}"
    for namespace in (apps, quotas):
        body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}
        status, answer = admin.request("POST", "/api/v1/namespaces", body)
        assert status == 201, (status, answer)
    # The ServiceAccount admission plugin refuses pods until the namespace's `default` exists.
    for namespace in (apps, quotas):
        await eventually(
            _account_made(admin, namespace),
            timeout=30,
            what=f"the ServiceAccount {namespace}/default",
        )
    client = Client(server, token=None, tls=tls(pki))
    return Server("kube-apiserver", client, apps, quotas, catalog, admin=admin)


def _account_made(admin: AdminClient, namespace: str) -> Callable[[], bool]:
    path = f"/api/v1/namespaces/{namespace}/serviceaccounts/default"
    return lambda: admin.request("GET", path)[0] == 200


async def _install_crd(admin: AdminClient, file: Path) -> None:
    """One of the chart's CRDs, once for the whole run (any worker may be first)."""
    crd = yaml.safe_load(file.read_text())
    path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
    status, body = admin.request("POST", path, crd)
    assert status in (201, 409), (status, body)

    def established() -> bool:
        found = admin.get(f"{path}/{crd['metadata']['name']}")
        return any(
            c["type"] == "Established" and c["status"] == "True"
            for c in (found.get("status") or {}).get("conditions") or []
        )

    await eventually(established, timeout=30, what="the ElasticQuota CRD established")
