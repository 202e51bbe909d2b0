"""The patches the operator sends, and what their answers hold of our keys.

Each patch names only keys the operator owns: a JSON merge patch sets what it holds, removes
what it sets to `null`, and leaves everything else of the object alone. So a key of ours no
longer wanted is written as `null`, also inside `status.used`, where the patch merges into the
resources already there. Pure: it builds and reads dicts, and sends nothing (`writing` does).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson
from eq_engine import Pod
from eq_engine.model import keys
from eq_kit.kube import pointer

from .view import OWNED_ANNOTATIONS, QuotaFields

Patch = dict[str, Any]
"""A JSON merge patch (`eq_kit.kube.MERGE`)."""


def owned_annotations(wanted: QuotaFields) -> Patch:
    """Our annotations on an ElasticQuota as wanted, those not wanted removed.

    With only `runtime` and `used` wanted: `{"metadata": {"annotations": {RUNTIME: '{"cpu":"4"}',
    REQUEST: None, USED: '{"cpu":"2"}', WAITING: None}}}`."""
    owned = dict(zip(OWNED_ANNOTATIONS, wanted.annotations, strict=True))
    return {"metadata": {"annotations": owned}}


def status_used(wanted: QuotaFields, seen: QuotaFields) -> Patch:
    """`status.used` as wanted, the resources seen but no longer used removed.

    Seen `{"cpu": "4", "memory": "1Gi"}`, wanted `{"cpu": "2"}`: `{"status": {"used": {"cpu":
    "2", "memory": None}}}`; nothing wanted: `{"status": {"used": None}}`."""
    used = _loads(wanted.status_used) or {}
    dropped = {name: None for name in _loads(seen.status_used) or {} if name not in used}
    return {"status": {"used": {**used, **dropped} if wanted.status_used else None}}


def capacity_label(label: str | None) -> Patch:
    """A pod's `capacity` label set to `label` (None: removed)."""
    return {"metadata": {"labels": {keys.CAPACITY: label}}}


def gate_lifted(pod: Pod) -> Patch:
    """The pod's scheduling gates without the admission gate: the others, in their order, or
    none at all (`null`). With gates `[admission, "other"]`: `{"spec": {"schedulingGates":
    [{"name": "other"}]}}`."""
    others = [{"name": name} for name in pod.other_gates]
    return {"spec": {"schedulingGates": others or None}}


def placed_in_pool(
    raw: Mapping[str, Any], group: str, affinity: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The JSON patch (`eq_kit.kube.JSON_PATCH`) that lifts a pod's admission gate once the
    gate chose `group` of its group's pools: the pod labelled with it (`keys.POOL_QUOTA`),
    `affinity` (`eq_engine.pools.pool_affinity`'s operations, narrowing its node affinity to
    the pool) and its other gates kept, on the pod as `raw` was read (a `test` of its
    resourceVersion: a pod changed meanwhile is refused, and decided again). The API server
    lets a gated pod's node affinity be narrowed; it reads "gated" from the pod before the
    patch."""
    metadata, spec = raw.get("metadata") or {}, raw.get("spec") or {}
    others = [g for g in spec.get("schedulingGates") or () if g.get("name") != keys.ADMISSION_GATE]
    label = f"/metadata/labels/{pointer(keys.POOL_QUOTA)}"
    return [
        {
            "op": "test",
            "path": "/metadata/resourceVersion",
            "value": metadata.get("resourceVersion"),
        },
        *affinity,
        {"op": "add", "path": label, "value": group}
        if metadata.get("labels") is not None
        else {"op": "add", "path": "/metadata/labels", "value": {keys.POOL_QUOTA: group}},
        {"op": "replace", "path": "/spec/schedulingGates", "value": others}
        if others
        else {"op": "remove", "path": "/spec/schedulingGates"},
    ]


def _loads(text: str | None) -> Any:
    return None if text is None else orjson.loads(text)
