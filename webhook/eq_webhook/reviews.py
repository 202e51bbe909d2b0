"""AdmissionReview v1 in and out (pure: no I/O).

The API server POSTs `{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
"request": {...}}` and expects the same envelope back with a `response`. A body that is not a
review at all is a `BadReview` (answered with HTTP 400); an object in a review that cannot be
parsed is denied with the parse error, like any other rule.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from eq_engine.decisions import Operation

API_VERSION = "admission.k8s.io/v1"


class BadReview(ValueError):
    """A request body that is not an AdmissionReview v1."""


@dataclass(frozen=True, slots=True)
class Review:
    uid: str
    kind: str
    operation: Operation
    namespace: str
    """`request.namespace`: a new object may not carry it in its own metadata yet."""
    object: Mapping[str, Any] | None
    old_object: Mapping[str, Any] | None


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
    kind = request.get("kind")
    if not isinstance(kind, Mapping) or not isinstance(kind.get("kind"), str):
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
    new, old = request.get("object"), request.get("oldObject")
    for field, value in (("object", new), ("oldObject", old)):
        if value is not None and not isinstance(value, Mapping):
            raise BadReview(f"request.{field}: expected an object")
    needed = {  # what kube-apiserver always sends for each operation
        Operation.CREATE: ("object",),
        Operation.UPDATE: ("object", "oldObject"),
        Operation.DELETE: ("oldObject",),
    }[operation]
    for field in needed:
        if request.get(field) is None:
            raise BadReview(f"request.{field}: required for {operation}")
    return Review(
        uid=uid,
        kind=kind["kind"],
        operation=operation,
        namespace=namespace,
        object=new,
        old_object=old,
    )


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
