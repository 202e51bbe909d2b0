"""`/openapi/v3` as kube-openapi's handler3 serves it, for `kubectl apply` (client-side, default
`--validate=strict`): the index names one document per group version, which kubectl fetches by
its `serverRelativeURL` (hash included) to learn that PATCH of the kind takes `fieldValidation`
(so it validates on the server instead of downloading `/openapi/v2`) and which patch types it
accepts (strategic merge for built-ins, so kubectl computes a strategic merge patch from the
schemas' `x-kubernetes-patch-*` extensions; merge patch for custom resources).

Each document has `components.schemas` (built-ins converted from `schemas.definitions()`: JSON
schema nullable types become plain types, `IntOrString` and `Quantity` the real document's
string formats; the CRD's `openAPIV3Schema` with `x-kubernetes-group-version-kind` and an
ObjectMeta `metadata`) and, per kind, its object paths with the operations kube-apiserver lists.
Simplified: no list kinds, no collection operations but POST, no `/status` paths, no response
schemas; `/openapi/v2` stays 404 (kubectl only reads it when v3 fails).
"""

from __future__ import annotations

import functools
import hashlib
from typing import Any

import orjson

from .resources import Catalog, Resource
from .schemas import OBJECT_META, Schemas, definitions

JSON = dict[str, Any]
_PATCH_TYPES = (
    "application/apply-patch+yaml",
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
)
_QUERY = {
    "dryRun": "When present, indicates that modifications should not be persisted.",
    "fieldManager": "fieldManager is a name associated with the actor or entity that is making "
    "these changes.",
    "fieldValidation": "fieldValidation instructs the server on how to handle objects in the "
    "request (POST/PUT/PATCH) containing unknown or duplicate fields. Valid values are: Ignore, "
    "Warn (the default), Strict.",
}


def _converted(schema: Any) -> Any:
    """A bundled JSON schema as an OpenAPI v3 schema."""
    if isinstance(schema, list):
        return [_converted(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    alternatives = schema.get("oneOf")
    if alternatives and all(isinstance(a, dict) and "type" in a for a in alternatives):
        kinds = {t for a in alternatives for t in _types(a)}
        if kinds == {"string", "integer"}:
            return {"type": "string", "format": "int-or-string", "x-kubernetes-int-or-string": True}
        if kinds == {"string", "number"}:
            return {"type": "string", "format": "quantity"}
    out: JSON = {}
    for key, value in schema.items():
        if key == "$ref" and isinstance(value, str):
            out[key] = "#/components/schemas/" + value.removeprefix("#/$defs/")
        elif key == "type" and isinstance(value, list):
            (out[key],) = [t for t in value if t != "null"] or ["object"]
        elif key == "additionalProperties" and value is False:
            continue  # the strict variant's closing: real documents leave it out
        elif key in ("properties", "patternProperties"):
            out[key] = {name: _converted(sub) for name, sub in value.items()}
        else:
            out[key] = _converted(value)
    return out


def _types(schema: JSON) -> list[str]:
    kinds = schema["type"]
    return [t for t in ([kinds] if isinstance(kinds, str) else kinds) if t != "null"]


def _closure(names: list[str]) -> dict[str, JSON]:
    """The definitions `names` need, each once, converted."""
    found: dict[str, JSON] = {}
    todo = list(names)
    while todo:
        name = todo.pop()
        if name in found or name not in definitions():
            continue
        found[name] = _converted(definitions()[name])
        todo.extend(_refs(definitions()[name]))
    return dict(sorted(found.items()))


def _refs(schema: Any) -> list[str]:
    if isinstance(schema, list):
        return [ref for item in schema for ref in _refs(item)]
    if not isinstance(schema, dict):
        return []
    ref = schema.get("$ref")  # JSONSchemaProps has a *property* named $ref: a dict there
    own = [ref.removeprefix("#/$defs/")] if isinstance(ref, str) else []
    return own + [ref for value in schema.values() for ref in _refs(value)]


def _parameter(name: str, where: str = "query") -> JSON:
    return {
        "name": name,
        "in": where,
        "description": _QUERY.get(name, name),
        "required": where == "path",
        "schema": {"type": "string", "uniqueItems": True},
    }


def _paths(resource: Resource, schema_name: str) -> JSON:
    ref = {"$ref": f"#/components/schemas/{schema_name}"}
    gvk = {"group": resource.group, "version": resource.version, "kind": resource.kind}
    root = f"/api/{resource.version}" if not resource.group else resource.prefix().rsplit("/", 1)[0]
    scope = "/namespaces/{namespace}" if resource.namespaced else ""
    collection = f"{root}{scope}/{resource.plural}"
    where = [_parameter("namespace", "path")] if resource.namespaced else []
    writes = [_parameter(p) for p in ("dryRun", "fieldManager", "fieldValidation")]
    body = {"content": {"application/json": {"schema": ref}}, "required": True}

    def operation(action: str, *, params: list[JSON], request: JSON | None = None) -> JSON:
        op: JSON = {
            "operationId": f"{action}{resource.kind}",
            "parameters": params,
            "responses": {"200": {"description": "OK"}},
            "x-kubernetes-action": action,
            "x-kubernetes-group-version-kind": gvk,
        }
        if request is not None:
            op["requestBody"] = request
        return op

    named = [*where, _parameter("name", "path")]
    patch_types = (
        _PATCH_TYPES
        if not resource.custom
        else tuple(t for t in _PATCH_TYPES if "strategic" not in t)
    )
    patch_body = {
        "content": {t: {"schema": {"type": "object"}} for t in patch_types},
        "required": True,
    }
    return {
        collection: {"post": operation("post", params=[*where, *writes], request=body)},
        collection + "/{name}": {
            "get": operation("get", params=named),
            "put": operation("put", params=[*named, *writes], request=body),
            "patch": operation("patch", params=[*named, *writes], request=patch_body),
            "delete": operation("delete", params=named),
        },
    }


class Documents:
    """The index and the per-group-version documents, built once per server."""

    def __init__(self, catalog: Catalog, schemas: Schemas) -> None:
        self._catalog, self._schemas = catalog, schemas

    @staticmethod
    def key(resource: Resource) -> str:
        return f"apis/{resource.group}/{resource.version}" if resource.group else "api/v1"

    @functools.cached_property
    def documents(self) -> dict[str, bytes]:
        by_key: dict[str, list[Resource]] = {}
        for resource in self._catalog.all:
            by_key.setdefault(self.key(resource), []).append(resource)
        return {key: orjson.dumps(self._document(key, rs)) for key, rs in by_key.items()}

    def index(self) -> JSON:
        return {
            "paths": {
                key: {
                    "serverRelativeURL": f"/openapi/v3/{key}?hash="
                    + hashlib.sha512(raw).hexdigest().upper()
                }
                for key, raw in sorted(self.documents.items())
            }
        }

    def _document(self, key: str, resources: list[Resource]) -> JSON:
        schemas: dict[str, JSON] = {}
        paths: JSON = {}
        gvk_names = []
        for resource in resources:
            gvk = {"group": resource.group, "version": resource.version, "kind": resource.kind}
            if resource.key in self._schemas.crds:
                name = _crd_schema_name(resource)
                schema = dict(_converted(self._schemas.crds[resource.key]))
                schema["properties"] = {
                    **schema.get("properties", {}),
                    "metadata": {"$ref": f"#/components/schemas/{OBJECT_META}"},
                }
                schema["x-kubernetes-group-version-kind"] = [gvk]
                schemas[name] = schema
                gvk_names.append(OBJECT_META)
            else:
                found = self._schemas.builtin.get(resource.key)
                name = found or resource.kind
                if found:
                    gvk_names.append(found)
                else:  # no bundled definitions: permissive
                    schemas[name] = {
                        "type": "object",
                        "x-kubernetes-preserve-unknown-fields": True,
                        "x-kubernetes-group-version-kind": [gvk],
                    }
            paths.update(_paths(resource, name))
        schemas = {**_closure(gvk_names), **schemas}
        return {
            "openapi": "3.0.0",
            "info": {"title": "Kubernetes", "version": "v1.32.3"},
            "paths": paths,
            "components": {"schemas": schemas},
        }


def _crd_schema_name(resource: Resource) -> str:
    """`scheduling.sigs.k8s.io` -> `io.k8s.sigs.scheduling.v1alpha1.ElasticQuota`."""
    group = ".".join(reversed(resource.group.split(".")))
    return f"{group}.{resource.version}.{resource.kind}"
