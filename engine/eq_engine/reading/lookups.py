"""Reading fields for the fast paths (`pods.py`, `quotas.py`, `nodes.py`): plain dict lookups, and
structs of `raw.py`.

Each reads a part of an object decoded from JSON and checks its types as the full validation
(`parsing.py`'s pydantic models) would accept them: a lookup checks the value it reads, msgspec
checks a struct's fields as it decodes or converts them. Whatever they are not sure of (a value
of another type, a timestamp in an unusual form) raises `Unsure`: the caller then hands the
whole object to the full validation, which judges it and names the field. Nulls count as absent,
as the models prune them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from datetime import datetime
from functools import lru_cache
from typing import Any, TypeVar

import msgspec

from ..model import QuantityError
from .fields import MetadataFields, canonical
from .raw import RawObjectMeta


class Unsure(Exception):
    """A fast path met something only the full validation may judge."""


def mapping(holder: Any, key: str) -> dict[str, Any]:
    value = holder.get(key)
    if value is None:
        return {}  # a new one each time: a shared one would be one mutation from wrong everywhere
    if type(value) is not dict:
        raise Unsure
    return value


def quantities(holder: Mapping[str, Any], key: str) -> dict[str, Any]:
    """A resource list as written, its names text (its amounts are judged by `in_units`)."""
    value = mapping(holder, key)
    for name in value:
        if type(name) is not str:
            raise Unsure
    return value


def in_units(amounts: Mapping[str, Any]) -> dict[str, int]:
    """A resource list in canonical units (`fields.canonical`, which never takes a bool for
    the number it equals); `Unsure` where a quantity does not read, for the models to name it."""
    try:
        return canonical(amounts)
    except (QuantityError, TypeError, ValueError):
        raise Unsure from None


_RFC3339 = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,6})?(Z|[+-]\d\d:\d\d)")


@lru_cache(maxsize=4096)
def _moment(value: str) -> float:
    """Seconds since the epoch of an RFC 3339 timestamp with a zone, as the API server
    writes them."""
    if not _RFC3339.fullmatch(value):
        raise Unsure
    try:
        return datetime.fromisoformat(value).timestamp()
    except ValueError:
        raise Unsure from None


def moment(value: str | None) -> float | None:
    """A timestamp's seconds since the epoch (a struct's field: text); None when absent."""
    return None if value is None else _moment(value)


def metadata(raw: Any) -> MetadataFields:
    """An object's `metadata`, which must be there."""
    found = raw.get("metadata") if type(raw) is dict else None
    if found is None:
        raise Unsure
    meta = as_struct(found, RawObjectMeta)
    controller = next((owner for owner in meta.owner_references or () if owner.controller), None)
    return MetadataFields(
        namespace=meta.namespace or "",
        name=meta.name or "",
        generate_name=meta.generate_name or "",
        uid=meta.uid or "",
        labels=meta.labels or {},
        annotations=meta.annotations or {},
        deleted=moment(meta.deletion_timestamp),
        created=moment(meta.creation_timestamp),
        controller_kind=(controller.kind or "") if controller else "",
    )


_Struct = TypeVar("_Struct", bound=msgspec.Struct)


def as_struct(value: object, shape: type[_Struct]) -> _Struct:
    """A part of an object as the caches decode it (a struct of `raw.py`), or made of a JSON
    map (null: an empty one); `Unsure` where a field is not of its type."""
    if type(value) is shape:
        return value
    if value is None:
        return shape()
    try:
        return msgspec.convert(value, shape)
    except msgspec.ValidationError:
        raise Unsure from None


_Raw = TypeVar("_Raw")
_Read = TypeVar("_Read")


def read_fields(raw: _Raw, fast: Callable[[_Raw], _Read], full: Callable[[_Raw], _Read]) -> _Read:
    """`fast(raw)`, or where the fast path is unsure, `full(raw)`: the full validation's reading
    (`validation.py`), which judges the object and names the field it cannot read."""
    try:
        return fast(raw)
    except Unsure:
        return full(raw)
