"""Object schemas: kube-apiserver 1.32's built-in definitions (the JSON schemas the
`kubernetes-validate` package bundles, generated from the real server's OpenAPI) and the CRD's
`openAPIV3Schema`; and what the server does with fields a schema does not know.

Decoding drops unknown fields (Go structs for built-ins, structural pruning for custom
resources); `fieldValidation` says what the client hears: `Ignore` nothing, `Warn` (the default)
one `unknown field "<path>"` warning each, `Strict` a 400 `<Kind> in version "<v>" cannot be
handled as a <Kind>: strict decoding error: unknown field "<path>", ...`. Duplicate fields (a
JSON object with a key twice) are not detected: the body is decoded before this runs.

Without the bundled definitions, built-ins are permissive (`x-kubernetes-preserve-unknown-fields`)
and only custom resources are pruned.
"""

from __future__ import annotations

import copy
import functools
import importlib.util
from pathlib import Path
from typing import Any

import orjson

from .errors import ApiError
from .resources import Resource

JSON = dict[str, Any]
KUBERNETES_VERSION = "v1.32.0"
OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
_REF = "#/$defs/"


@functools.cache
def definitions() -> dict[str, JSON]:
    """Built-in definitions by name (`io.k8s.api.core.v1.Pod`), `$ref`s as `#/$defs/NAME`;
    empty when kubernetes-validate is not installed."""
    spec = importlib.util.find_spec("kubernetes_validate")
    if spec is None or spec.origin is None:
        return {}
    path = (
        Path(spec.origin).parent
        / "kubernetes-json-schema"
        / f"{KUBERNETES_VERSION}-local-strict"
        / "_definitions.json"
    )
    if not path.exists():
        return {}
    found: dict[str, JSON] = orjson.loads(path.read_bytes())["$defs"]
    return found


def definition_of(resource: Resource) -> str | None:
    """The name of the resource's kind among `definitions()`."""
    wanted = {"group": resource.group, "version": resource.version, "kind": resource.kind}
    for name, schema in definitions().items():
        if wanted in (schema.get("x-kubernetes-group-version-kind") or ()):
            return name
    return None


class Schemas:
    """The schema of every served kind, for pruning and for the OpenAPI documents."""

    def __init__(self, resources: tuple[Resource, ...], crds: dict[str, JSON]) -> None:
        self.crds = crds  # resource key -> the served version's openAPIV3Schema
        self.builtin = {r.key: definition_of(r) for r in resources if r.key not in crds}
        self._roots = {r.key: self._root(r) for r in resources}

    def add(self, resource: Resource, schema: JSON) -> None:
        """The schema of a CRD installed while the server runs."""
        self.crds[resource.key] = schema
        self._roots[resource.key] = self._root(resource)

    def _root(self, resource: Resource) -> tuple[JSON, bool] | None:
        """(schema, structural) for the kind; None when nothing is known about it."""
        if resource.key in self.crds:
            schema = copy.deepcopy(self.crds[resource.key])
            schema.setdefault("properties", {})["metadata"] = {"$ref": _REF + OBJECT_META}
            return schema, True
        name = self.builtin.get(resource.key)
        return ({"$ref": _REF + name}, False) if name else None

    def prune(
        self, resource: Resource, obj: JSON, mode: str, *, patch: bool = False
    ) -> tuple[JSON, list[str]]:
        """`obj` without the fields its schema lacks, and the warnings `mode` (the request's
        `fieldValidation`) asks for; ApiError 400 when `mode` is Strict and some were found.
        `patch`: `obj` is a merge patch, whose nulls remove keys and so are no fields."""
        if mode not in ("", "Ignore", "Warn", "Strict"):
            raise ApiError(
                400,
                f'fieldValidation: Unsupported value: "{mode}": supported values: "Ignore", '
                '"Strict", "Warn"',
            )
        found = self._roots.get(resource.key)
        if found is None:
            return obj, []
        schema, structural = found
        unknown: list[str] = []
        pruned = _prune(obj, schema, "", structural, unknown, patch)
        if mode == "Ignore" or not unknown:
            return pruned, []
        texts = [f'unknown field "{path}"' for path in unknown]
        if mode == "Strict":
            raise ApiError(
                400,
                f'{resource.kind} in version "{resource.version}" cannot be handled as a '
                f"{resource.kind}: strict decoding error: " + ", ".join(texts),
                reason="BadRequest",
            )
        return pruned, texts


def _resolve(schema: JSON) -> JSON:
    while "$ref" in schema:
        schema = definitions()[schema["$ref"].removeprefix(_REF)]
    return schema


def _prune(
    value: Any, schema: JSON, path: str, structural: bool, unknown: list[str], patch: bool
) -> Any:
    schema = _resolve(schema)
    if schema.get("x-kubernetes-preserve-unknown-fields"):
        return value
    if isinstance(value, list):
        items = schema.get("items")
        if not isinstance(items, dict):
            return value
        return [
            _prune(item, items, f"{path}[{i}]", structural, unknown, patch)
            for i, item in enumerate(value)
        ]
    if not isinstance(value, dict):
        return value
    properties = schema.get("properties")
    extra = schema.get("additionalProperties")
    if properties is None and extra is None and not structural:
        return value  # a free-form object of a built-in (FieldsV1, RawExtension)
    kept = {}
    for key, item in value.items():
        where = f"{path}.{key}" if path else key
        if properties is not None and key in properties:
            kept[key] = _prune(item, properties[key], where, structural, unknown, patch)
        elif isinstance(extra, dict):
            kept[key] = _prune(item, extra, where, structural, unknown, patch)
        elif extra is True:
            kept[key] = item
        elif not (patch and item is None):
            unknown.append(where)
    return kept
