"""Plain dict lookups for the fast paths of reading (`pods.py`, `quotas.py`).

Each reads one field of an object decoded from JSON and checks its type as the full validation
(`parsing.py`'s pydantic models) would accept it. Whatever they are not sure of (a value of
another type, a timestamp in an unusual form) raises `Unsure`: the caller then hands the whole
object to the full validation, which judges it and names the field. Nulls count as absent, as
the models prune them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime
from functools import lru_cache
from typing import Any

from .errors import QuantityError
from .parsing import MetadataFields, canonical


class Unsure(Exception):
    """A fast path met something only the full validation may judge."""


def mapping(holder: Any, key: str) -> dict[str, Any]:
    value = holder.get(key)
    if value is None:
        return {}  # a new one each time: a shared one would be one mutation from wrong everywhere
    if type(value) is not dict:
        raise Unsure
    return value


def listing(holder: Mapping[str, Any], key: str) -> list[Any]:
    value = holder.get(key)
    if value is None:
        return []
    if type(value) is not list:
        raise Unsure
    return value


def text(holder: Mapping[str, Any], key: str) -> str:
    value = holder.get(key)
    if value is None:
        return ""
    if type(value) is not str:
        raise Unsure
    return value


def strings(holder: Mapping[str, Any], key: str) -> dict[str, str]:
    """A map of text to text (labels, annotations). YAML, unlike JSON, may key it otherwise."""
    value = mapping(holder, key)
    for name, item in value.items():
        if type(name) is not str or type(item) is not str:
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
    """A resource list in canonical units (`parsing.canonical`, which never takes a bool for
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


def timestamp(holder: Mapping[str, Any], key: str) -> float | None:
    return moment(holder.get(key))


def moment(value: object) -> float | None:
    """A timestamp's seconds since the epoch; None when absent."""
    if value is None:
        return None
    if type(value) is not str:
        raise Unsure
    return _moment(value)


def metadata(raw: Any) -> MetadataFields:
    """An object's `metadata`, which must be there."""
    if type(raw) is not dict:
        raise Unsure
    meta = raw.get("metadata")
    if type(meta) is not dict:
        raise Unsure
    controller_kind: str | None = None
    for owner in listing(meta, "ownerReferences"):
        if type(owner) is not dict:
            raise Unsure
        controller = owner.get("controller")
        if controller is not None and type(controller) is not bool:
            raise Unsure
        kind = text(owner, "kind")
        if controller and controller_kind is None:
            controller_kind = kind
    return MetadataFields(
        namespace=text(meta, "namespace"),
        name=text(meta, "name"),
        generate_name=text(meta, "generateName"),
        uid=text(meta, "uid"),
        labels=strings(meta, "labels"),
        annotations=strings(meta, "annotations"),
        deleted=timestamp(meta, "deletionTimestamp"),
        created=timestamp(meta, "creationTimestamp"),
        controller_kind=controller_kind or "",
    )
