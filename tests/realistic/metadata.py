"""Metadata as the API server stores it (uid, resourceVersion, managedFields, ownerReferences),
and every value a cluster would make up (uids, hashes, IPs, container ids), derived from the
object's identity so that the objects are the same on every run."""

from __future__ import annotations

import hashlib
import json
import uuid
from typing import Any

KUBERNETES = "v1.31.4"
CREATED = "2025-06-02T08:15:00Z"
STARTED = "2025-06-02T08:15:03Z"
FINISHED = "2025-06-02T08:21:40Z"
DELETING = "2025-06-02T09:00:30Z"
_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # what the API server's generateName draws from


def digest(*parts: object) -> bytes:
    return hashlib.sha256("/".join(map(str, parts)).encode()).digest()


def uid(*parts: object) -> str:
    return str(uuid.UUID(bytes=digest("uid", *parts)[:16], version=4))


def _version(*parts: object) -> str:
    return str(100000 + int.from_bytes(digest("rv", *parts)[:3], "big"))


def name_suffix(length: int, *parts: object) -> str:
    """Like the suffixes of generated names and pod-template-hash values."""
    return "".join(_ALPHABET[b % len(_ALPHABET)] for b in digest(*parts)[:length])


def ip(prefix: str, *parts: object) -> str:
    hashed = digest("ip", *parts)
    return f"{prefix}.{hashed[0] % 250 + 2}.{hashed[1] % 250 + 2}"


# managedFields


def _key(item: dict[str, Any]) -> str:
    """How server-side apply keys an item of an associative list."""
    if "containerPort" in item:
        fields = {"containerPort": item["containerPort"], "protocol": item.get("protocol", "TCP")}
    else:
        name = next(k for k in ("uid", "type", "name", "mountPath") if k in item)
        fields = {name: item[name]}
    return "k:" + json.dumps(fields, separators=(",", ":"))


def _keyed(items: list[Any]) -> bool:
    keys = ("uid", "type", "name", "mountPath", "containerPort")
    return all(isinstance(i, dict) and any(k in i for k in keys) for i in items)


def _fields(value: Any, depth: int = 0) -> dict[str, Any]:
    """The FieldsV1 set of what a manager wrote (`value`): maps by `f:` (from the third level
    on, with `.` for the map itself), keyed lists by `k:`, other lists (tolerations, finalizers)
    as a whole, as the API server records them."""
    if isinstance(value, dict) and value:
        nested = {f"f:{k}": _fields(v, depth + 1) for k, v in value.items()}
        return nested if depth < 2 else {".": {}, **nested}
    if isinstance(value, list) and value and _keyed(value):
        return {_key(item): _fields(item, depth + 1) for item in value}
    return {}


def managed_entry(
    manager: str, operation: str, api_version: str, wrote: dict[str, Any], *, status: bool = False
) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "apiVersion": api_version,
        "fieldsType": "FieldsV1",
        "fieldsV1": _fields(wrote),
        "manager": manager,
        "operation": operation,
    }
    if status:
        entry["subresource"] = "status"
    entry["time"] = STARTED if status else CREATED
    return entry


def owner_reference(
    api_version: str, kind: str, name: str, *, node: bool = False
) -> dict[str, Any]:
    owner: dict[str, Any] = {"apiVersion": api_version, "kind": kind, "name": name}
    if not node:
        owner["blockOwnerDeletion"] = True
    owner["controller"] = True
    owner["uid"] = uid(kind, name)
    return owner


def object_metadata(kind: str, namespace: str | None, name: str, **fields: Any) -> dict[str, Any]:
    """Metadata as the API server stores it: what the writer sent (`fields`) plus the server's."""
    metadata: dict[str, Any] = {"creationTimestamp": CREATED, **fields, "name": name}
    if namespace is not None:
        metadata["namespace"] = namespace
    metadata["resourceVersion"] = _version(kind, namespace, name)
    metadata["uid"] = uid(kind, namespace, name)
    return dict(sorted(metadata.items()))
