"""What the two readings of an object make of it, for the fast-path tests to compare."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from eq_engine import ObjectError
from eq_engine.reading.lookups import Unsure


def full_reading(read: Callable[[Any], Any], raw: Any) -> Any:
    """What `read` (the full validation's, or a build from fields) makes of `raw`: its result,
    or the error naming the field that it raises."""
    try:
        return read(raw)
    except ObjectError as error:
        return ("unreadable", str(error))


def fast_reading(read: Callable[[Any], Any], raw: Any) -> Any:
    """What a fast path's `read` makes of `raw`; None where it steps aside."""
    try:
        return read(raw)
    except Unsure:
        return None
