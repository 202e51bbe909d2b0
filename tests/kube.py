"""An emulated Kubernetes API (kmock) for the end-to-end tests, and a kubeconfig for it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import aiohttp.web
import kmock

QUOTAS = "scheduling.sigs.k8s.io/v1alpha1/elasticquotas"
PODS = "v1/pods"
NODES = "v1/nodes"


class Emulator(kmock.KubernetesEmulator):
    """kmock's emulator, reading boolean query flags as the API server does (in any case):
    kubernetes-asyncio sends `watch=True`, which kmock would serve as a plain list."""

    async def __call__(self, raw_request: aiohttp.web.BaseRequest) -> aiohttp.web.StreamResponse:
        watch = raw_request.query.get("watch")
        if watch is not None and watch != "true" and watch.lower() == "true":
            raw_request = raw_request.clone(rel_url=raw_request.rel_url.update_query(watch="true"))
        return await super().__call__(raw_request)


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


def store(api: Any, *objects: dict[str, Any]) -> None:
    """Put objects in the emulator's storage before anything watches it."""
    for raw in objects:
        metadata = raw["metadata"]
        resource = {"ElasticQuota": QUOTAS, "Pod": PODS, "Node": NODES}[raw["kind"]]
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
