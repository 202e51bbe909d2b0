"""AdmissionReview v1 in and out (pure: no I/O).

The API server POSTs `{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
"request": {...}}` and expects the same envelope back with a `response`. A body that is not a
review at all is a `BadReview` (answered with HTTP 400); an object in a review that cannot be
parsed is denied with the parse error, like any other rule.

A review has one of the three shapes kube-apiserver sends: a CREATE carries the new object
(`object`), an UPDATE the new one and the stored one (`oldObject`), a DELETE the stored one; the
field an operation lacks is null. `parse_review` refuses any other shape (a BadReview naming the
field), so each type holds exactly the objects of its operation and its readers check nothing.
CONNECT, never registered, is refused too.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, TypeAlias

from eq_engine.decisions import Operation

API_VERSION = "admission.k8s.io/v1"


class BadReview(ValueError):
    """A request body that is not an AdmissionReview v1."""


@dataclass(frozen=True, slots=True)
class _Request:
    """What every review carries."""

    uid: str
    kind: str
    """`request.kind.kind`: the kind of the object under review."""
    namespace: str
    """`request.namespace`: a new object may not carry it in its own metadata yet."""


@dataclass(frozen=True, slots=True)
class CreateReview(_Request):
    operation: ClassVar[Operation] = Operation.CREATE
    object: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class UpdateReview(_Request):
    operation: ClassVar[Operation] = Operation.UPDATE
    object: Mapping[str, Any]
    old_object: Mapping[str, Any]
    """The object as stored before this change."""


@dataclass(frozen=True, slots=True)
class DeleteReview(_Request):
    operation: ClassVar[Operation] = Operation.DELETE
    old_object: Mapping[str, Any]
    """The object being deleted, as stored."""


Review: TypeAlias = CreateReview | UpdateReview | DeleteReview


def parse_review(body: object) -> Review:
    if not isinstance(body, Mapping):
        raise BadReview("expected a JSON object (an AdmissionReview)")
    if body.get("apiVersion") != API_VERSION or body.get("kind") != "AdmissionReview":
        raise BadReview(f"expected apiVersion {API_VERSION} and kind AdmissionReview")
    request = body.get("request")
    if not isinstance(request, Mapping):
        raise BadReview("request: expected an object")
    uid = request.get("uid")
    if not isinstance(uid, str) or not uid:
        raise BadReview("request.uid: expected a non-empty string")
    gvk = request.get("kind")
    if not isinstance(gvk, Mapping) or not isinstance(gvk.get("kind"), str):
        raise BadReview("request.kind.kind: expected a string")
    try:
        operation = Operation(str(request.get("operation")))
    except ValueError:
        got = request.get("operation")
        raise BadReview(
            f"request.operation: expected CREATE, UPDATE or DELETE, got {got!r}"
        ) from None
    namespace = request.get("namespace") or ""
    if not isinstance(namespace, str):
        raise BadReview("request.namespace: expected a string")
    kind: str = gvk["kind"]
    match operation:
        case Operation.CREATE:
            _null(request, "oldObject", operation)
            return CreateReview(uid, kind, namespace, object=_object(request, "object", operation))
        case Operation.UPDATE:
            new = _object(request, "object", operation)
            old = _object(request, "oldObject", operation)
            return UpdateReview(uid, kind, namespace, object=new, old_object=old)
        case Operation.DELETE:
            _null(request, "object", operation)
            old = _object(request, "oldObject", operation)
            return DeleteReview(uid, kind, namespace, old_object=old)


def _object(request: Mapping[str, Any], field: str, operation: Operation) -> Mapping[str, Any]:
    value = request.get(field)
    if not isinstance(value, Mapping):
        raise BadReview(f"request.{field}: expected an object for {operation}")
    return value


def _null(request: Mapping[str, Any], field: str, operation: Operation) -> None:
    if request.get(field) is not None:
        raise BadReview(f"request.{field}: expected null for {operation}")


def response(
    uid: str,
    *,
    allowed: bool,
    message: str = "",
    warnings: Sequence[str] = (),
    patch: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """The AdmissionReview answer; a denial carries HTTP-style status 403 and the message, a
    mutation its JSON Patch (base64, as the API server expects)."""
    answer: dict[str, Any] = {"uid": uid, "allowed": allowed}
    if patch:
        answer["patchType"] = "JSONPatch"
        answer["patch"] = base64.b64encode(json.dumps(list(patch)).encode()).decode()
    if not allowed:
        answer["status"] = {"code": 403, "reason": "Forbidden", "message": message}
    if warnings:
        answer["warnings"] = list(warnings)
    return {"apiVersion": API_VERSION, "kind": "AdmissionReview", "response": answer}
