"""An emulated Kubernetes API (kmock) for the end-to-end tests, and a kubeconfig for it."""

from __future__ import annotations

import collections
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import aiohttp.web
import kmock

from tests.access import ACCESS

QUOTAS = "scheduling.sigs.k8s.io/v1alpha1/elasticquotas"
PODS = "v1/pods"
NODES = "v1/nodes"
EVENTS = "v1/events"
LEASES = "coordination.k8s.io/v1/leases"
_READS = {kmock.action.LIST: "list", kmock.action.WATCH: "watch", kmock.action.FETCH: "get"}
_WRITES = {"POST": "create", "PATCH": "patch", "PUT": "update", "DELETE": "delete"}
_PATHS = {
    "ElasticQuota": "/apis/scheduling.sigs.k8s.io/v1alpha1/namespaces/{namespace}/elasticquotas",
    "Pod": "/api/v1/namespaces/{namespace}/pods",
    "Node": "/api/v1/nodes",
}


class Emulator(kmock.KubernetesEmulator):
    """kmock's emulator, closer to the API server in the two ways the product relies on:
    boolean query flags in any case (kubernetes-asyncio sends `watch=True`, which kmock would
    serve as a plain list), and `generateName` (Kopf's Events use it; kmock would refuse the
    second Event of an object as a conflict).

    `history=False` keeps no past requests (kmock matches each request against all earlier ones,
    which is quadratic over a benchmark's thousands); `writes` still counts them by resource.
    """

    def __init__(self, *args: Any, history: bool = True, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._history = history
        self.writes: collections.Counter[str] = collections.Counter()

    async def __call__(self, raw_request: aiohttp.web.BaseRequest) -> aiohttp.web.StreamResponse:
        watch = raw_request.query.get("watch")
        if watch is not None and watch != "true" and watch.lower() == "true":
            raw_request = raw_request.clone(rel_url=raw_request.rel_url.update_query(watch="true"))
        return await super().__call__(raw_request)

    async def _handle(self, request: kmock.Request) -> aiohttp.web.StreamResponse:
        ACCESS.update(_access(request))
        if request.method != kmock.method.GET and request.resource is not None:
            self.writes[f"{request.method.value} {request.resource.plural}"] += 1
        if not self._history:
            del self._requests[:-1]
        data = request.data
        if request.action == kmock.action.CREATE and isinstance(data, dict):
            metadata = data.get("metadata") or {}
            if not metadata.get("name") and metadata.get("generateName"):
                name = metadata["generateName"] + uuid.uuid4().hex[:8]
                # The request is frozen; its payload is what the emulator stores.
                named = {**data, "metadata": {**metadata, "name": name}}
                object.__setattr__(request, "data", named)
        return await super()._handle(request)


def _access(request: kmock.Request) -> Iterator[tuple[str, str, str, str]]:
    """The request as an RBAC rule names it, when one of the product's processes sent it: Kopf
    (the operator's watches) or the kubernetes-asyncio client that names its component."""
    agent = request.headers.get("User-Agent", "")
    if agent.startswith("kopf/"):
        component = "operator"
    elif agent.startswith("elastic-quota/"):
        component = agent.rsplit("(", 1)[-1].rstrip(")")
    else:
        return  # the test itself, acting as a user
    if request.resource is None or request.resource.plural is None:
        return  # discovery: open to every authenticated user
    resource = request.resource.plural
    if request.subresource:
        resource += "/" + request.subresource
    method = str(request.method.value).upper()
    verb = _READS[request.action] if method == "GET" else _WRITES[method]
    yield component, request.resource.group or "", resource, verb


def _resource(kind: str, *, namespaced: bool, subresources: tuple[str, ...] = ()) -> Any:
    return {
        "namespaced": namespaced,
        "kind": kind,
        "singular": kind.lower(),
        "verbs": ["get", "list", "watch", "create", "patch", "delete"],
        "shortnames": [],
        "categories": [],
        "subresources": list(subresources),
    }


def declare_resources(api: Any) -> None:
    """The resources the product uses, for the emulator's discovery endpoints."""
    api.resources[QUOTAS] = _resource("ElasticQuota", namespaced=True, subresources=("status",))
    api.resources[PODS] = _resource("Pod", namespaced=True, subresources=("eviction", "status"))
    api.resources[NODES] = _resource("Node", namespaced=False)
    api.resources[EVENTS] = _resource("Event", namespaced=True)
    # Kopf's backbone: it waits for these to be discoverable before it watches anything.
    api.resources["v1/namespaces"] = _resource("Namespace", namespaced=False)
    api.resources["apiextensions.k8s.io/v1/customresourcedefinitions"] = _resource(
        "CustomResourceDefinition", namespaced=False
    )
    api.resources[LEASES] = _resource("Lease", namespaced=True)


def store(api: Any, *objects: dict[str, Any]) -> None:
    """Put objects in the emulator's storage before anything watches it."""
    for raw in objects:
        metadata = raw["metadata"]
        kinds = {"ElasticQuota": QUOTAS, "Pod": PODS, "Node": NODES, "Lease": LEASES}
        resource = kinds[raw["kind"]]
        api.objects[resource, metadata.get("namespace"), metadata["name"]] = raw


def write_kubeconfig(path: Path, server: str) -> Path:
    path.write_text(
        "apiVersion: v1\nkind: Config\n"
        f"clusters: [{{name: emulated, cluster: {{server: '{server}'}}}}]\n"
        "users: [{name: tests, user: {token: not-checked}}]\n"
        "contexts: [{name: tests, context: {cluster: emulated, user: tests}}]\n"
        "current-context: tests\n"
    )
    return path


def stored(api: Any, resource: str) -> list[dict[str, Any]]:
    """The emulator's current (not deleted) objects of `resource`."""
    return [
        obj.raw
        for (res, _, _), obj in api.objects.items()
        if res == kmock.resource(resource) and not obj.deleted
    ]


class Client:
    """Changes made the way kubectl makes them: over HTTP, so that watchers see them."""

    def __init__(self, api: Any) -> None:
        self.url = str(api.url).rstrip("/")
        self.session = aiohttp.ClientSession()

    def _path(self, obj: dict[str, Any], *, named: bool) -> str:
        metadata = obj["metadata"]
        path = _PATHS[obj["kind"]].format(namespace=metadata.get("namespace", ""))
        return self.url + path + (f"/{metadata['name']}" if named else "")

    async def create(self, obj: dict[str, Any]) -> None:
        async with self.session.post(self._path(obj, named=False), json=obj) as response:
            assert response.status in (200, 201), await response.text()

    async def patch(self, obj: dict[str, Any], changes: dict[str, Any]) -> None:
        headers = {"Content-Type": "application/merge-patch+json"}
        async with self.session.patch(
            self._path(obj, named=True), json=changes, headers=headers
        ) as response:
            assert response.status == 200, await response.text()

    async def delete(self, obj: dict[str, Any]) -> None:
        async with self.session.delete(self._path(obj, named=True)) as response:
            assert response.status == 200, await response.text()

    async def close(self) -> None:
        await self.session.close()
