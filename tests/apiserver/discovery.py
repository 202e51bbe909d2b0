"""The URLs that are not resources (`serve`): legacy discovery (resources.Catalog), `/version`,
`/openapi/v3` (openapi.py), the health checks, and aggregated discovery
(`apidiscovery.k8s.io/v2` APIGroupDiscoveryList), served from `/api` and `/apis` when the
Accept header asks for it, as kubectl 1.32 does: it decides on the answer's Content-Type, so a
plain JSON answer still gets the legacy documents."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aiohttp import web

from . import responses
from .errors import ApiError
from .openapi import Documents
from .resources import VERBS, Catalog, Resource

JSON = dict[str, Any]
VERSION = {
    "major": "1",
    "minor": "32",
    "gitVersion": "v1.32.3",
    "gitCommit": "emulated",
    "gitTreeState": "clean",
    "buildDate": "2025-03-11T00:00:00Z",
    "goVersion": "go1.23.6",
    "compiler": "gc",
    "platform": "linux/amd64",
}
MEDIA_TYPE = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
_SUBRESOURCE_KINDS = {
    "eviction": ("policy", "Eviction", ["create"]),
    "binding": ("", "Binding", ["create"]),
}


def wanted(accept: str) -> bool:
    """Whether `accept` asks for v2 before plain JSON (v2beta1 is not served)."""
    for clause in accept.split(","):
        params = dict(p.strip().split("=", 1) for p in clause.split(";")[1:] if "=" in p)
        if params.get("as") == "APIGroupDiscoveryList" and params.get("v") == "v2":
            return params.get("g") == "apidiscovery.k8s.io"
        if clause.split(";")[0].strip() in ("application/json", "*/*"):
            return False
    return False


def _resource(r: Resource) -> JSON:
    entry: JSON = {
        "resource": r.plural,
        "responseKind": {"group": r.group, "version": r.version, "kind": r.kind},
        "scope": "Namespaced" if r.namespaced else "Cluster",
        "singularResource": r.kind.lower(),
        "verbs": VERBS,
    }
    if r.short_names:
        entry["shortNames"] = list(r.short_names)
    if r.categories:
        entry["categories"] = list(r.categories)
    subresources = []
    for sub in r.subresources:
        group, kind, verbs = _SUBRESOURCE_KINDS.get(
            sub, (r.group, r.kind, ["get", "patch", "update"])
        )
        version = "v1" if sub in _SUBRESOURCE_KINDS else r.version
        subresources.append(
            {
                "subresource": sub,
                "responseKind": {"group": group, "version": version, "kind": kind},
                "verbs": verbs,
            }
        )
    if subresources:
        entry["subresources"] = subresources
    return entry


def aggregated(catalog: Catalog, *, core: bool) -> JSON:
    """The document of `/api` (`core`: the core group, whose name is empty) or of `/apis`."""
    groups: dict[str, dict[str, list[Resource]]] = {}
    for r in catalog.all:
        if (r.group == "") == core:
            groups.setdefault(r.group, {}).setdefault(r.version, []).append(r)
    items = [
        {
            "metadata": {"name": group} if group else {},
            "versions": [
                {
                    "version": version,
                    "resources": [_resource(r) for r in resources],
                    "freshness": "Current",
                }
                for version, resources in versions.items()
            ],
        }
        for group, versions in groups.items()
    ]
    return {
        "kind": "APIGroupDiscoveryList",
        "apiVersion": "apidiscovery.k8s.io/v2",
        "metadata": {},
        "items": items,
    }


def serve(
    request: web.Request, parts: list[str], *, catalog: Catalog, openapi: Documents, address: str
) -> web.StreamResponse:
    """The answer to a URL that names no resource (`parts`: its path's segments); `address`:
    the server's host and port, which `/api` gives."""
    documents: dict[tuple[str, ...], Callable[[], Any]] = {
        ("api",): lambda: catalog.api_versions(address),
        ("api", "v1"): lambda: catalog.resource_list("", "v1"),
        ("apis",): catalog.api_group_list,
        ("version",): lambda: VERSION,
    }
    if parts in (["api"], ["apis"]) and wanted(request.headers.get("Accept", "")):
        response = responses.json(aggregated(catalog, core=parts == ["api"]))
        response.headers["Content-Type"] = MEDIA_TYPE
        return response
    if tuple(parts) in documents:
        return responses.json(documents[tuple(parts)]())
    if parts == ["openapi", "v3"]:
        return responses.json(openapi.index())
    if parts[:2] == ["openapi", "v3"] and "/".join(parts[2:]) in openapi.documents:
        return responses.raw(openapi.documents["/".join(parts[2:])])
    if parts[:1] == ["apis"] and len(parts) == 2:
        group = catalog.api_group(parts[1])
        if group is not None:
            return responses.json({"kind": "APIGroup", "apiVersion": "v1", **group})
    if parts[:1] == ["apis"] and len(parts) == 3:
        listed = catalog.resource_list(parts[1], parts[2])
        if listed is not None:
            return responses.json(listed)
    if parts in (["healthz"], ["readyz"], ["livez"]):
        return web.Response(text="ok")
    raise ApiError(404, "the server could not find the requested resource")
