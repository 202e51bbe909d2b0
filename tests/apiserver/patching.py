"""PATCH bodies applied as kube-apiserver applies them.

- `application/merge-patch+json`: RFC 7386 (null deletes a key, lists are replaced whole).
- `application/json-patch+json`: RFC 6902 through the `jsonpatch` library; a failed `test` or a
  missing path is 422 with the generic message, as handlers/patch.go answers.
- `application/strategic-merge-patch+json`, built-in kinds only (CRs get 415): a documented
  simplification of the real strategic merge: a merge patch, except that lists of objects whose
  items all carry a merge key (`name` for containers, volumes, env, ports...; `type` for
  conditions) are merged item by item on that key, and `$patch: delete` inside such an item removes
  it; `metadata.finalizers` (a list of strings with the merge strategy) is merged as a set, and
  `$deleteFromPrimitiveList/finalizers` takes names out of it (what the Job controller and the
  operator send). Directives like `$setElementOrder` and `$retainKeys` are not understood; no kind
  this product writes needs them.
"""

from __future__ import annotations

import copy
from typing import Any

import jsonpatch

from .errors import ApiError

MERGE = "application/merge-patch+json"
JSON = "application/json-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"
APPLY = "application/apply-patch+yaml"
MAX_JSON_PATCH_OPERATIONS = 10000
_MERGE_KEYS = ("name", "type")
_DELETE_FINALIZERS = "$deleteFromPrimitiveList/finalizers"


def media_type(content_type: str) -> str:
    return content_type.split(";", 1)[0].strip().lower()


def unsupported(custom: bool) -> ApiError:
    accepted = [JSON, MERGE, APPLY] if custom else [JSON, MERGE, STRATEGIC, APPLY]
    return ApiError(
        415,
        "the body of the request was in an unknown format - accepted media types include: "
        + ", ".join(accepted),
    )


def merge(target: Any, patch: Any) -> Any:
    """RFC 7386: merge(`{"a": 1, "b": 2}`, `{"b": null, "c": 3}`) == `{"a": 1, "c": 3}`."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge(result.get(key), value)
    return result


def strategic(target: Any, patch: Any) -> Any:
    """The simplification the module docstring describes."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if key == _DELETE_FINALIZERS and isinstance(value, list):
            kept = [name for name in result.get("finalizers") or () if name not in value]
            result["finalizers"] = kept
            continue
        if key.startswith("$"):
            continue
        if key == "finalizers" and isinstance(value, list):
            result[key] = [
                *(result.get(key) or ()),
                *(v for v in value if v not in (result.get(key) or ())),
            ]
            continue
        if value is None:
            result.pop(key, None)
        elif isinstance(value, list) and (merge_key := _merge_key(result.get(key), value)):
            result[key] = _merge_list(result[key], value, merge_key)
        else:
            result[key] = strategic(result.get(key), value)
    return result


def _merge_key(old: Any, new: list[Any]) -> str | None:
    if not isinstance(old, list) or not new:
        return None
    items = [*old, *new]
    for key in _MERGE_KEYS:
        if all(isinstance(i, dict) and key in i for i in items):
            return key
    return None


def _merge_list(old: list[Any], new: list[Any], key: str) -> list[Any]:
    merged = {item[key]: item for item in old}
    for item in new:
        if item.get("$patch") == "delete":
            merged.pop(item[key], None)
        else:
            merged[item[key]] = strategic(merged.get(item[key]), item)
    return list(merged.values())


def apply(kind: str, obj: dict[str, Any], body: Any, *, custom: bool) -> dict[str, Any]:
    """`obj` with the patch `body` of media type `kind` applied (a new object)."""
    if kind == MERGE:
        if not isinstance(body, dict):
            raise ApiError(400, "couldn't get version/kind; json parse error")
        result = merge(obj, body)
    elif kind == STRATEGIC and not custom:
        if not isinstance(body, dict):
            raise ApiError(400, "couldn't get version/kind; json parse error")
        result = strategic(obj, body)
    elif kind == JSON:
        if not isinstance(body, list):
            raise ApiError(
                400, "json: cannot unmarshal object into Go value of type jsonpatch.Patch"
            )
        if len(body) > MAX_JSON_PATCH_OPERATIONS:
            raise ApiError(
                413,
                "Request entity too large: The allowed maximum operations in a JSON patch is "
                f"{MAX_JSON_PATCH_OPERATIONS}, got {len(body)}",
            )
        try:
            result = jsonpatch.apply_patch(obj, body)
        except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException) as error:
            raise ApiError(
                422, "the server rejected our request due to an error in our request"
            ) from error
    else:
        raise unsupported(custom)
    if not isinstance(result, dict):
        raise ApiError(422, "the server rejected our request due to an error in our request")
    return result
