"""Reading an ElasticQuota: the full validation (`parsing.py`'s models, the rule) or a fast path
for the shapes the API server serves, which gives the same fields or steps aside; then its
annotations and labels, read in one place for both.

A cluster holds thousands of groups, each read at start-up and again on every write the operator
makes of it (`quota_reader.py` keeps most of those). Through the models a group costs about
four times what the fast path's lookups cost (`lookups.py`).
"""

from __future__ import annotations

import json
from typing import Any, Final

from ..model import (
    ObjectError,
    QuantityError,
    Quota,
    ResourceList,
    keys,
    queue_policy,
    queues,
    resource_list,
)
from . import validation
from .fields import READ_METADATA, ElasticQuotaFields
from .lookups import in_units, mapping, metadata, quantities, read_fields
from .raw import RawElasticQuota


def parse_quota(raw: RawElasticQuota) -> Quota:
    """An ElasticQuota from its Kubernetes dict. Raises `ObjectError` naming the field when it
    cannot be read."""
    return _build(read_fields(raw, fast_quota_fields, validation.quota_fields))


def fast_quota_fields(raw: RawElasticQuota) -> ElasticQuotaFields:
    """The fields `parsing.quota_fields` reads, by the lookups of `lookups.py`; `Unsure` when in
    doubt."""
    meta = metadata(raw)
    spec = mapping(raw, "spec")
    return ElasticQuotaFields(
        meta, in_units(quantities(spec, "min")), in_units(quantities(spec, "max")), _used(raw)
    )


def read_used(raw: RawElasticQuota) -> ResourceList | None:
    """`status.used` as `parse_quota` reads it; None if it cannot be read (`parse_quota` then
    says why)."""
    return read_fields(raw, _used, validation.status_used)


def _used(raw: RawElasticQuota) -> ResourceList:
    return in_units(quantities(mapping(raw, "status"), "used"))


def _build(fields: ElasticQuotaFields) -> Quota:
    meta = fields.meta
    if not meta.name:
        raise ObjectError("ElasticQuota", f"{meta.namespace}/", "metadata.name", "required")
    labels = meta.labels
    namespaces = _json_annotation(fields, keys.NAMESPACES) or []
    if not isinstance(namespaces, list) or not all(isinstance(n, str) for n in namespaces):
        raise _annotation_error(fields, keys.NAMESPACES, "expected a JSON list of namespace names")
    strict_keys = _json_annotation(fields, keys.STRICT_MAX_KEYS) or []
    if not isinstance(strict_keys, list) or not all(isinstance(k, str) for k in strict_keys):
        raise _annotation_error(fields, keys.STRICT_MAX_KEYS, "expected a JSON list of resources")
    pools = _json_annotation(fields, keys.POOLS) or []
    if not isinstance(pools, list) or not all(isinstance(n, str) for n in pools):
        raise _annotation_error(fields, keys.POOLS, "expected a JSON list of ElasticQuota names")
    parent_labels = (labels.get(keys.PARENT), labels.get(keys.PARENT_SEED))
    return Quota(
        name=meta.name,
        namespace=meta.namespace,
        parent=parent_labels[0] or parent_labels[1] or "",
        parent_labels=parent_labels,
        is_parent=labels.get(keys.IS_PARENT) == "true",
        allow_lent=labels.get(keys.ALLOW_LENT) != "false",
        min=fields.min,
        max=fields.max,
        shared_weight=_resource_list_annotation(fields, keys.SHARED_WEIGHT),
        namespaces=tuple(namespaces),
        force_update=labels.get(keys.FORCE_UPDATE) == "true",
        strict_keys=tuple(strict_keys),
        used=fields.used,
        tree_id=labels.get(keys.TREE_ID, ""),
        is_root=labels.get(keys.IS_ROOT) == "true",
        total_resource=_resource_list_annotation(fields, keys.TOTAL_RESOURCE),
        ignore_default_tree=labels.get(keys.IGNORE_DEFAULT_TREE) == "true",
        queue=queue_policy(labels, meta.annotations),
        lending_limit=_resource_list_annotation(fields, keys.LENDING_LIMIT),
        borrowing_limit=_resource_list_annotation(fields, keys.BORROWING_LIMIT),
        pools=tuple(pools),
    )


_READ_ANNOTATIONS: Final = (
    keys.NAMESPACES,
    keys.STRICT_MAX_KEYS,
    keys.SHARED_WEIGHT,
    keys.TOTAL_RESOURCE,
    keys.LENDING_LIMIT,
    keys.BORROWING_LIMIT,
    keys.POOLS,
    queues.WAIT_FOR_PODS_RUNNING,
    queues.PREEMPTION,
    queues.MAX_DEPTH,
)
"""The annotations `parse_quota` reads: any other (the operator's own) leaves a group as it is."""


def _json_annotation(fields: ElasticQuotaFields, key: str) -> Any:
    text = fields.meta.annotations.get(key)
    if text is None or not text.strip():
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise _annotation_error(fields, key, f"not valid JSON ({error.msg})") from None
    except (ValueError, RecursionError) as error:  # a number of 5,000 digits, 50,000 brackets
        raise _annotation_error(fields, key, f"not valid JSON ({error})") from None


def _annotation_error(fields: ElasticQuotaFields, key: str, message: str) -> ObjectError:
    ref = f"{fields.meta.namespace}/{fields.meta.name}"
    return ObjectError("ElasticQuota", ref, f"metadata.annotations[{key}]", message)


def _resource_list_annotation(fields: ElasticQuotaFields, key: str) -> ResourceList | None:
    """A JSON resource list annotation in canonical units; None when absent."""
    value = _json_annotation(fields, key)
    if value is None:
        return None
    if not isinstance(value, dict):
        raise _annotation_error(fields, key, "expected a JSON resource list")
    try:
        return resource_list(value)
    except QuantityError as error:
        raise _annotation_error(fields, key, str(error)) from None


_OTHER_METADATA: Final = tuple(key for key in READ_METADATA if key not in ("namespace", "name"))
"""What `quota_settings` takes of `metadata` beside its namespace and name, which come first."""


def quota_settings(raw: RawElasticQuota) -> tuple[Any, ...] | None:
    """What `parse_quota` reads of `raw` but its status, its namespace and name first; None
    when not plainly shaped (only `parse_quota` may judge it)."""
    meta = raw.get("metadata") if isinstance(raw, dict) else None
    if not isinstance(meta, dict):
        return None
    namespace, name = meta.get("namespace"), meta.get("name")
    annotations = meta.get("annotations")
    annotations = {} if annotations is None else annotations
    if type(namespace) is not str or type(name) is not str or not isinstance(annotations, dict):
        return None
    if any(type(value) is not str for value in annotations.values()):
        return None
    return (
        namespace,
        name,
        *(meta.get(key) for key in _OTHER_METADATA),
        *(annotations.get(key) for key in _READ_ANNOTATIONS),
        raw.get("spec"),
    )
