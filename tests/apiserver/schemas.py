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

A custom resource's nulls where its schema allows none (no `nullable`, no `default`) are dropped
as the decoder drops them; `validate` checks it against its CRD's schema as the custom resource
strategy does, with kube-openapi's and apiextensions' messages: type (int-or-string, nullable),
`required`, `enum`, `pattern`. Not checked: formats, bounds (lengths, items, properties,
numbers), anyOf/oneOf/allOf/not, `x-kubernetes-validations` (CEL) and list types.
"""

from __future__ import annotations

import copy
import functools
import importlib.util
import json
import re
from pathlib import Path
from typing import Any

import orjson

from .errors import ApiError, invalid
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
    """The schema of every served kind, for pruning and validation."""

    def __init__(self, resources: tuple[Resource, ...], crds: dict[str, JSON]) -> None:
        self.crds = crds  # resource key -> the served version's openAPIV3Schema
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
        name = definition_of(resource)
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
        if resource.key in self.crds and not patch:  # a merge patch's nulls remove keys
            pruned = _drop_nulls(pruned, self.crds[resource.key])
        if mode == "Ignore" or not unknown:
            return pruned, []
        texts = [f'unknown field "{path}"' for path in unknown]
        if mode == "Strict" and patch:
            # The real server decodes the patched object and words it as an invalid patch.
            value = f"Invalid value: {json.dumps(json.dumps(obj))}: strict decoding error: "
            value += ", ".join(texts)
            raise ApiError(
                422,
                f' "" is invalid: patch: {value}',
                reason="Invalid",
                details={
                    "causes": [{"reason": "FieldValueInvalid", "message": value, "field": "patch"}]
                },
            )
        if mode == "Strict":
            raise ApiError(
                400,
                f'{resource.kind} in version "{resource.version}" cannot be handled as a '
                f"{resource.kind}: strict decoding error: " + ", ".join(texts),
                reason="BadRequest",
            )
        return pruned, texts

    def validate(self, resource: Resource, obj: JSON, old: JSON | None = None) -> None:
        """ApiError 422 Invalid when the custom resource `obj` does not fit its CRD's schema,
        naming each field (`spec.quotaName: Required value`); nothing for built-ins. On update,
        an error the stored object `old` had too is let be (CRD validation ratcheting)."""
        schema = self.crds.get(resource.key)
        if schema is None:
            return
        errors = _validate(obj, schema, "", _UNSET if old is None else old)
        if old is not None and errors:
            before = set(_validate(old, schema, ""))
            errors = [error for error in errors if error not in before]
        if errors:
            raise invalid(
                resource.kind,
                obj["metadata"].get("name", ""),
                [text for text, _ in errors],
                group=resource.group,
                reasons=[reason for _, reason in errors],
            )


FieldError = tuple[str, str]
"""A field error as its Error() reads (`spec.quotaName: Required value`), and its type."""

_UNSET: Any = object()
"""No stored value at this path (a create, or a field the update adds)."""


def _child(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _field_schema(schema: JSON | None, key: str) -> JSON | None:
    """The schema of the object's field `key`: its property's, else `additionalProperties`."""
    if schema is None:
        return None
    properties = schema.get("properties") or {}
    if key in properties:
        found: JSON = properties[key]
        return found
    extra = schema.get("additionalProperties")
    return extra if isinstance(extra, dict) else None


def _drop_nulls(value: Any, schema: JSON | None) -> Any:
    """apiextensions' PruneNonNullableNullsWithoutDefaults: a field that is null where its schema
    is neither nullable nor defaulted is dropped, at any depth."""
    if isinstance(value, dict):
        kept = {}
        for key, item in value.items():
            sub = _field_schema(schema, key)
            if item is None and sub is not None and not (sub.get("nullable") or "default" in sub):
                continue
            kept[key] = _drop_nulls(item, sub)
        return kept
    if isinstance(value, list):
        items = (schema or {}).get("items")
        return [_drop_nulls(item, items if isinstance(items, dict) else None) for item in value]
    return value


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _quoted(value: Any) -> str:
    """A bad value as field.Error prints it: strings quoted (%q), other scalars plain (%v)."""
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value) if isinstance(value, int | float) else json.dumps(value)


def _validate(value: Any, schema: JSON, path: str, old: Any = _UNSET) -> list[FieldError]:
    """kube-openapi's validation of `value` at `path` (`spec.nodeSelector.matchExpressions[0]`),
    as apiextensions turns its errors into field errors. A value that is the stored object's
    own at that path (`old`: patches and updates share what they leave alone) is not walked:
    any error in it the stored object had too, and ratcheting lets those be."""
    if value is old:
        return []
    types = ["integer", "string"] if schema.get("x-kubernetes-int-or-string") else []
    if not types and schema.get("type"):
        types = [schema["type"]]
    found = "null" if value is None else _json_type(value)
    fits = (
        found in types
        or (found == "null" and bool(schema.get("nullable")))
        or (found == "integer" and "number" in types)
        or (found == "number" and "integer" in types and float(value).is_integer())
    )
    if types and not fits:
        detail = f'{path} in body must be of type {",".join(types)}: "{found}"'
        return [(f'{path}: Invalid value: "{found}": {detail}', "FieldValueTypeInvalid")]
    if value is None:
        return []
    errors: list[FieldError] = []
    if "enum" in schema and json.dumps(value) not in {json.dumps(v) for v in schema["enum"]}:
        allowed = ", ".join(
            json.dumps(v if isinstance(v, str) else json.dumps(v)) for v in schema["enum"]
        )
        body = f"Unsupported value: {_quoted(value)}: supported values: {allowed}"
        errors.append((f"{path}: {body}", "FieldValueNotSupported"))
    pattern = schema.get("pattern")
    if isinstance(value, str) and isinstance(pattern, str):
        try:
            matched = re.search(pattern, value) is not None
        except re.error:  # RE2 syntax Python lacks: not checked
            matched = True
        if not matched:
            detail = f"{path} in body should match '{pattern}'"
            errors.append((f"{path}: Invalid value: {_quoted(value)}: {detail}", ""))
    items = schema.get("items")
    if isinstance(value, list) and isinstance(items, dict):
        before = old if isinstance(old, list) else ()
        for i, item in enumerate(value):
            was = before[i] if i < len(before) else _UNSET
            errors += _validate(item, items, f"{path}[{i}]", was)
    if isinstance(value, dict):
        stored = old if isinstance(old, dict) else {}
        properties = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        for key, item in value.items():
            if key not in properties and isinstance(extra, dict):
                errors += _validate(item, extra, _child(path, key), stored.get(key, _UNSET))
        for key, sub in properties.items():
            if key in value:
                errors += _validate(value[key], sub, _child(path, key), stored.get(key, _UNSET))
        for key in schema.get("required") or ():
            if key not in value:
                errors.append((f"{_child(path, key)}: Required value", "FieldValueRequired"))
    return errors


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
