"""Aggregated discovery (`apidiscovery.k8s.io/v2` APIGroupDiscoveryList), served from `/api`
and `/apis` when the Accept header asks for it, as kubectl 1.32 does: it decides on the answer's
Content-Type, so a plain JSON answer still gets the legacy documents (resources.Catalog)."""

from __future__ import annotations

from typing import Any

from .resources import VERBS, Catalog, Resource

JSON = dict[str, Any]
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
