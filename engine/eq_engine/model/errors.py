"""Errors the engine raises, each naming the text, object and field at fault.

    QuotaError                  any input the engine cannot use
    ├── QuantityError           a text that is not a Kubernetes quantity
    └── ObjectError             a Kubernetes object with a malformed known field

Configuration that is well-formed but wrong (a missing parent, a cycle) is not an error: the
engine still computes and reports it as a `Problem` (see `problems.py`).
"""

from __future__ import annotations


class QuotaError(Exception):
    """Base class of every error raised by the engine."""


class QuantityError(QuotaError, ValueError):
    """A text that does not parse as a Kubernetes quantity."""

    def __init__(self, text: object, reason: str = "not a Kubernetes quantity") -> None:
        self.text = text
        self.reason = reason
        super().__init__(f"{text!r}: {reason}")


class ObjectError(QuotaError, ValueError):
    """A Kubernetes object whose known field is malformed, e.g. `spec.min.cpu: "lots"`."""

    def __init__(self, kind: str, ref: str, field: str, message: str) -> None:
        self.kind = kind
        self.ref = ref
        self.field = field
        self.message = message
        where = f"{kind} {ref}" if ref else kind
        super().__init__(f"{where}: {field}: {message}" if field else f"{where}: {message}")
