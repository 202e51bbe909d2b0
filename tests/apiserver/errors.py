"""`Status` objects as kube-apiserver answers errors with them (apimachinery api/errors), and the
exception the emulator raises to send one."""

from __future__ import annotations

from typing import Any

# HTTP code -> the Status `reason` the real server pairs with it.
REASONS = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    405: "MethodNotAllowed",
    409: "Conflict",
    410: "Expired",
    413: "RequestEntityTooLarge",
    415: "UnsupportedMediaType",
    422: "Invalid",
    429: "TooManyRequests",
    500: "InternalError",
    503: "ServiceUnavailable",
    504: "Timeout",
}
OPTIMISTIC_LOCK = (
    "the object has been modified; please apply your changes to the latest version and try again"
)


def status(
    code: int,
    message: str,
    *,
    reason: str | None = None,
    details: dict[str, Any] | None = None,
    success: bool = False,
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success" if success else "Failure",
        "code": code,
    }
    if not success:
        body["message"] = message
        body["reason"] = REASONS.get(code, "") if reason is None else reason
    if details is not None:
        body["details"] = details
    return body


class ApiError(Exception):
    """A request refused with a Status; `headers` go with it (Retry-After, Warning)."""

    def __init__(
        self,
        code: int,
        message: str,
        *,
        reason: str | None = None,
        details: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.body = status(code, message, reason=reason, details=details)
        self.code = code
        self.headers = dict(headers or {})
        retry = (details or {}).get("retryAfterSeconds")
        if retry:
            self.headers.setdefault("Retry-After", str(retry))

    def with_metadata(self, metadata: dict[str, Any]) -> ApiError:
        """Set the Status's list metadata (a 410's fresh continue token)."""
        self.body["metadata"] = metadata
        return self


def _details(resource: str, group: str, name: str) -> dict[str, Any]:
    # The real server omits an empty group (omitempty).
    return {"name": name, "kind": resource} | ({"group": group} if group else {})


def _qualified(resource: str, group: str) -> str:
    return f"{resource}.{group}" if group else resource


def not_found(resource: str, group: str, name: str) -> ApiError:
    return ApiError(
        404,
        f'{_qualified(resource, group)} "{name}" not found',
        details=_details(resource, group, name),
    )


def conflict(resource: str, group: str, name: str, why: str = OPTIMISTIC_LOCK) -> ApiError:
    return ApiError(
        409,
        f'Operation cannot be fulfilled on {_qualified(resource, group)} "{name}": {why}',
        details=_details(resource, group, name),
    )


def already_exists(resource: str, group: str, name: str) -> ApiError:
    return ApiError(
        409,
        f'{_qualified(resource, group)} "{name}" already exists',
        reason="AlreadyExists",
        details=_details(resource, group, name),
    )


# A field error's type (its StatusCause reason) by the text its body starts with.
_CAUSE_REASONS = {
    "Required value": "FieldValueRequired",
    "Invalid value": "FieldValueInvalid",
    "Unsupported value": "FieldValueNotSupported",
    "Forbidden": "FieldValueForbidden",
    "Duplicate value": "FieldValueDuplicate",
    "Not found": "FieldValueNotFound",
    "Too long": "FieldValueTooLong",
    "Too many": "FieldValueTooMany",
    "Internal error": "InternalError",
}


def cause(error: str, reason: str = "") -> dict[str, str]:
    """The StatusCause of a field error as its Error() reads (`spec.quotaName: Required value`):
    its field, its body and its type, read off the body unless given (`FieldValueTypeInvalid`
    reads `Invalid value` too)."""
    field, _, body = error.partition(": ")
    if not reason:
        reason = next((r for text, r in _CAUSE_REASONS.items() if body.startswith(text)), "")
    return {"reason": reason, "message": body, "field": field}


def invalid(
    kind: str, name: str, causes: list[str], *, group: str = "", reasons: list[str] | None = None
) -> ApiError:
    """422 Invalid as apimachinery's NewInvalid builds it: `Kind.group "name" is invalid: ` and the
    field errors (`[a, b]` when more than one, repeats once), one StatusCause each (kubectl prints
    those, a line each); `reasons`: the causes' types when their bodies do not say them."""
    qualified = f"{kind}.{group}" if group else kind
    unique = list(dict.fromkeys(causes))
    listed = unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"
    details: dict[str, Any] = {"name": name, "kind": kind} | ({"group": group} if group else {})
    details["causes"] = [
        cause(error, reason)
        for error, reason in zip(causes, reasons or [""] * len(causes), strict=True)
    ]
    return ApiError(422, f'{qualified} "{name}" is invalid: {listed}', details=details)


def internal(message: str) -> ApiError:
    return ApiError(500, f"Internal error occurred: {message}", details={"causes": []})


def disruption_budget(pdb: str = "budget", *, needs: int = 1, has: int = 1) -> ApiError:
    """The 429 an eviction blocked by a PodDisruptionBudget gets (no Retry-After)."""
    return ApiError(
        429,
        "Cannot evict pod as it would violate the pod's disruption budget.",
        details={
            "causes": [
                {
                    "reason": "DisruptionBudget",
                    "message": f"The disruption budget {pdb} needs {needs} healthy pods and "
                    f"has {has} currently",
                }
            ]
        },
    )
