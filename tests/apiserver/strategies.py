"""What the real server's per-kind strategies do to an object before it is stored: system
fields, status handling with and without a status subresource, generation, pod rules (scheduling
gates, PodScheduled), the namespace name label. Only the rules the product can observe."""

from __future__ import annotations

import datetime
import uuid
from typing import Any

from .errors import ApiError, invalid
from .resources import Resource

NAME_LABEL = "kubernetes.io/metadata.name"
SYSTEM_FIELDS = ("uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds")
_KEPT_ON_UPDATE = (*SYSTEM_FIELDS, "namespace", "name", "generation")


def now(offset: float = 0) -> str:
    moment = datetime.datetime.now(datetime.UTC) + datetime.timedelta(seconds=offset)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def wipe_for_create(obj: dict[str, Any]) -> dict[str, Any]:
    """rest.WipeObjectMetaSystemFields: what a client may not set on create."""
    metadata = {k: v for k, v in (obj.get("metadata") or {}).items() if k not in SYSTEM_FIELDS}
    metadata.pop("selfLink", None)
    return {**obj, "metadata": metadata}


def fill_for_create(resource: Resource, obj: dict[str, Any]) -> dict[str, Any]:
    """Store.create and PrepareForCreate: uid, creationTimestamp, generation, reset status."""
    metadata = {**obj["metadata"], "uid": str(uuid.uuid4()), "creationTimestamp": now()}
    obj = {**obj, "metadata": metadata}
    if resource.custom or resource.plural == "customresourcedefinitions":
        metadata["generation"] = 1
        if resource.has_status:
            obj.pop("status", None)
    if resource.plural == "pods":
        obj["status"] = _pod_status_on_create(obj)
    if resource.plural == "namespaces":
        _label_namespace(obj)
        obj.setdefault("spec", {"finalizers": ["kubernetes"]})
        obj["status"] = {"phase": "Active"}
    return omit_empty(obj)


def omit_empty(obj: dict[str, Any]) -> dict[str, Any]:
    """Empty labels and annotations are not stored (Go's `omitempty` on ObjectMeta, which a
    custom resource's metadata goes through too)."""
    metadata = obj.get("metadata") or {}
    if not any(metadata.get(key) == {} for key in _MAPS):
        return obj
    kept = {k: v for k, v in metadata.items() if not (k in _MAPS and v == {})}
    return {**obj, "metadata": kept}


_MAPS = ("labels", "annotations")


def _pod_status_on_create(pod: dict[str, Any]) -> dict[str, Any]:
    status: dict[str, Any] = {"phase": "Pending", "qosClass": _qos(pod)}
    if (pod.get("spec") or {}).get("schedulingGates"):
        status["conditions"] = [
            {
                "type": "PodScheduled",
                "status": "False",
                "reason": "SchedulingGated",
                "message": "Scheduling is blocked due to non-empty scheduling gates",
            }
        ]
    return status


def _qos(pod: dict[str, Any]) -> str:
    containers = (pod.get("spec") or {}).get("containers") or []
    resources = [c.get("resources") or {} for c in containers]
    if not any(r.get("requests") or r.get("limits") for r in resources):
        return "BestEffort"
    guaranteed = all(
        (r.get("limits") or {}).get(k) and (r.get("requests") or r["limits"])[k] == r["limits"][k]
        for r in resources
        for k in ("cpu", "memory")
    )
    return "Guaranteed" if guaranteed else "Burstable"


def _label_namespace(obj: dict[str, Any]) -> None:
    name = obj["metadata"]["name"]
    obj["metadata"]["labels"] = {**(obj["metadata"].get("labels") or {}), NAME_LABEL: name}


def validate_create(resource: Resource, obj: dict[str, Any]) -> None:
    if resource.plural == "pods":
        spec = obj.get("spec") or {}
        if spec.get("nodeName") and spec.get("schedulingGates"):
            raise invalid(
                "Pod",
                obj["metadata"]["name"],
                [
                    "spec.nodeName: Forbidden: cannot be set until all schedulingGates have been "
                    "cleared"
                ],
            )


def prepare_update(
    resource: Resource, subresource: str, new: dict[str, Any], old: dict[str, Any]
) -> dict[str, Any]:
    """The object to store for an update of `old` to `new` (BeforeUpdate, PrepareForUpdate)."""
    old_meta = old["metadata"]
    metadata = {k: v for k, v in (new.get("metadata") or {}).items() if k not in _KEPT_ON_UPDATE}
    metadata |= {k: old_meta[k] for k in _KEPT_ON_UPDATE if k in old_meta}
    metadata["resourceVersion"] = old_meta.get("resourceVersion")
    new = {**new, "metadata": metadata}
    status_split = resource.has_status or resource.plural == "pods"
    if subresource == "status":
        # From the stored object, only the status (pods: and labels, annotations) is taken.
        result = {**old, "status": new["status"]} if "status" in new else dict(old)
        if "status" not in new:
            result.pop("status", None)
        kept = {**old_meta}
        if resource.plural == "pods":
            for key in ("labels", "annotations"):
                kept.pop(key, None)
                if key in metadata:
                    kept[key] = metadata[key]
        return omit_empty({**result, "metadata": kept})
    if status_split:
        if "status" in old:
            new["status"] = old["status"]
        else:
            new.pop("status", None)
    _check_finalizers(resource, new, old)
    if resource.plural == "pods":
        _check_pod_update(new, old)
    if resource.plural == "namespaces":
        _label_namespace(new)
    if "generation" in old_meta and _outside_metadata(new) != _outside_metadata(old):
        metadata["generation"] = int(old_meta["generation"]) + 1
    return omit_empty(new)


def _outside_metadata(obj: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in obj.items() if k != "metadata"}


def _check_finalizers(resource: Resource, new: dict[str, Any], old: dict[str, Any]) -> None:
    if not old["metadata"].get("deletionTimestamp"):
        return
    before = set(old["metadata"].get("finalizers") or ())
    added = [f for f in new["metadata"].get("finalizers") or () if f not in before]
    if added:
        listed = ", ".join(f'"{f}"' for f in added)
        raise invalid(
            resource.kind,
            old["metadata"]["name"],
            [
                "metadata.finalizers: Forbidden: no new finalizers can be added if the object "
                f"is being deleted, found new finalizers []string{{{listed}}}"
            ],
            group=resource.group,
        )


def _check_pod_update(new: dict[str, Any], old: dict[str, Any]) -> None:
    name = old["metadata"]["name"]
    old_spec, new_spec = old.get("spec") or {}, new.get("spec") or {}
    before = {g["name"] for g in old_spec.get("schedulingGates") or ()}
    for i, gate in enumerate(new_spec.get("schedulingGates") or ()):
        if gate["name"] not in before:
            raise invalid(
                "Pod",
                name,
                [
                    f"spec.schedulingGates[{i}].name: Forbidden: only deletion is allowed, "
                    f"but found new scheduling gate '{gate['name']}'"
                ],
            )
    if new_spec.get("nodeName") != old_spec.get("nodeName"):
        raise invalid(
            "Pod",
            name,
            [
                "spec: Forbidden: pod updates may not change fields other "
                "than those the emulator allows (spec.nodeName)"
            ],
        )


def same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Equal but for resourceVersion and managedFields: such a write is not stored."""

    def strip(o: dict[str, Any]) -> dict[str, Any]:
        meta = {
            k: v for k, v in o["metadata"].items() if k not in ("resourceVersion", "managedFields")
        }
        return {**o, "metadata": meta}

    return strip(a) == strip(b)


def check_namespace(
    resource: Resource, obj: dict[str, Any], namespace: str | None
) -> dict[str, Any]:
    """rest.EnsureObjectNamespaceMatchesRequestNamespace, before admission."""
    metadata = dict(obj.get("metadata") or {})
    if resource.namespaced:
        given = metadata.get("namespace")
        if given and given != namespace:
            raise ApiError(
                400,
                "the namespace of the provided object does not match the namespace sent on "
                "the request",
            )
        metadata["namespace"] = namespace
    else:
        metadata.pop("namespace", None)
    return {**obj, "metadata": metadata}
