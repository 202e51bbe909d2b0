"""Helpers of the end-to-end tests over the emulated API server (tests/apiserver): objects in
and out, a kubeconfig, and a client that changes objects as kubectl does."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import aiohttp

if TYPE_CHECKING:
    from tests.apiserver import ApiServer


QUOTAS = "scheduling.sigs.k8s.io/v1alpha1/elasticquotas"
PODS = "v1/pods"
NODES = "v1/nodes"
EVENTS = "v1/events"
PROFILES = "quota.koordinator.sh/v1alpha1/elasticquotaprofiles"
LEASES = "coordination.k8s.io/v1/leases"
_PATHS = {
    "ElasticQuota": "/apis/scheduling.sigs.k8s.io/v1alpha1/namespaces/{namespace}/elasticquotas",
    "Pod": "/api/v1/namespaces/{namespace}/pods",
    "Node": "/api/v1/nodes",
    "ElasticQuotaProfile": (
        "/apis/quota.koordinator.sh/v1alpha1/namespaces/{namespace}/elasticquotaprofiles"
    ),
}


def store(api: ApiServer, *objects: dict[str, Any]) -> None:
    """Put objects in the emulator's storage (as a create would, without admission)."""
    api.seed(*objects)


def write_kubeconfig(path: Path, server: str) -> Path:
    path.write_text(
        "apiVersion: v1\nkind: Config\n"
        f"clusters: [{{name: emulated, cluster: {{server: '{server}'}}}}]\n"
        "users: [{name: tests, user: {token: not-checked}}]\n"
        "contexts: [{name: tests, context: {cluster: emulated, user: tests}}]\n"
        "current-context: tests\n"
    )
    return path


def stored(api: ApiServer, resource: str) -> list[dict[str, Any]]:
    """The emulator's current objects of `resource` (`v1/pods`, ...)."""
    return api.objects(plural(resource))


def plural(resource: str) -> str:
    """What the emulator keys `resource`'s table by: `v1/pods`, `pods`."""
    return resource.rsplit("/", 1)[1]


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

    async def patch(
        self, obj: dict[str, Any], changes: dict[str, Any], *, subresource: str = ""
    ) -> None:
        """A merge patch; `subresource="status"` for status changes, which the main resource
        ignores (as the API server does)."""
        headers = {"Content-Type": "application/merge-patch+json"}
        path = self._path(obj, named=True) + (f"/{subresource}" if subresource else "")
        async with self.session.patch(path, json=changes, headers=headers) as response:
            assert response.status == 200, await response.text()

    async def delete(self, obj: dict[str, Any]) -> None:
        async with self.session.delete(self._path(obj, named=True)) as response:
            assert response.status == 200, await response.text()

    async def close(self) -> None:
        await self.session.close()
