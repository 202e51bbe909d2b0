"""ElasticQuotas as `kubectl apply` leaves them, and Koordinator's built-in groups as
koord-scheduler creates them."""

from __future__ import annotations

import json
from typing import Any

from .metadata import managed_entry, object_metadata

P = "quota.scheduling.koordinator.sh/"
NO_LIMIT = str((2**63 - 1) // 5)
"""MaxInt64/5: Koordinator's max of its system and default groups (cpu in cores, memory in
bytes), "1844674407370955161"."""


def elastic_quota(
    name: str,
    namespace: str,
    *,
    parent: str | None = None,
    is_parent: bool = False,
    min: dict[str, Any] | None = None,
    max: dict[str, Any] | None = None,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    status: dict[str, Any] | None = None,
    manager: str = "kubectl-client-side-apply",
) -> dict[str, Any]:
    """An ElasticQuota as the API server stores it after `kubectl apply` (by default: with
    kubectl's last-applied-configuration) or after another client created it (`manager`).
    `status` absent: no controller has written it yet."""
    all_labels = dict(labels or {})
    if parent is not None:
        all_labels[P + "parent"] = parent
    if is_parent:
        all_labels[P + "is-parent"] = "true"
    spec = {key: value for key, value in (("max", max), ("min", min)) if value is not None}
    written: dict[str, Any] = {"metadata": {}, "spec": spec}
    meta: dict[str, Any] = {}
    if annotations:
        meta["annotations"] = dict(annotations)
    if all_labels:
        meta["labels"] = all_labels
    written["metadata"] = dict(meta)
    if manager == "kubectl-client-side-apply":
        applied = {
            "apiVersion": "scheduling.sigs.k8s.io/v1alpha1",
            "kind": "ElasticQuota",
            "metadata": {**meta, "name": name, "namespace": namespace},
            "spec": spec,
        }
        last = json.dumps(applied, separators=(",", ":"), sort_keys=True) + "\n"
        meta["annotations"] = {
            **meta.get("annotations", {}),
            "kubectl.kubernetes.io/last-applied-configuration": last,
        }
        written["metadata"] = dict(meta)
    api_version = "scheduling.sigs.k8s.io/v1alpha1"
    managed = [managed_entry(manager, "Update", api_version, written)]
    if status is not None:
        managed.append(
            managed_entry("elastic-quota", "Update", api_version, {"status": status}, status=True)
        )
    obj: dict[str, Any] = {
        "apiVersion": api_version,
        "kind": "ElasticQuota",
        "metadata": object_metadata(
            "ElasticQuota", namespace, name, generation=1, managedFields=managed, **meta
        ),
        "spec": spec,
    }
    if status is not None:
        obj["status"] = status
    return obj


def _koordinator_builtin(name: str, labels: dict[str, str], **fields: Any) -> dict[str, Any]:
    """A built-in group as koord-scheduler's ElasticQuota plugin creates it at start-up, after
    Koordinator's mutating webhook filled in the parent label and the shared weight."""
    return elastic_quota(
        name, "koordinator-system", labels=labels, manager="koord-scheduler", **fields
    )


def _unbounded_leaf(name: str) -> dict[str, Any]:
    no_limit = {"cpu": NO_LIMIT, "memory": NO_LIMIT}
    return _koordinator_builtin(
        name,
        {P + "is-parent": "false", P + "parent": "koordinator-root-quota"},
        max=no_limit,
        annotations={P + "shared-weight": json.dumps(no_limit, separators=(",", ":"))},
    )


def koordinator_default_quota() -> dict[str, Any]:
    """`koordinator-default-quota`: max MaxInt64/5 cpu (cores) and memory (bytes), no min."""
    return _unbounded_leaf("koordinator-default-quota")


def koordinator_system_quota() -> dict[str, Any]:
    """`koordinator-system-quota`: the same shape as the default group."""
    return _unbounded_leaf("koordinator-system-quota")


def koordinator_root_quota() -> dict[str, Any]:
    """`koordinator-root-quota`: a parent that does not lend, an empty parent label, no spec."""
    labels = {P + "allow-lent-resource": "false", P + "is-parent": "true", P + "parent": ""}
    return _koordinator_builtin("koordinator-root-quota", labels)


def koordinator_builtins() -> list[dict[str, Any]]:
    return [koordinator_root_quota(), koordinator_system_quota(), koordinator_default_quota()]


def elastic_quota_profile(
    name: str,
    namespace: str,
    *,
    quota_name: str,
    node_selector: dict[str, Any],
    resource_keys: list[str] | None = None,
    ratio: str | None = None,
    quota_labels: dict[str, str] | None = None,
    created: str | None = None,
) -> dict[str, Any]:
    """An ElasticQuotaProfile (quota.koordinator.sh/v1alpha1) as `kubectl apply` leaves it.
    `resource_keys`: the `resource-keys` annotation (JSON), the resources of its root's min."""
    spec: dict[str, Any] = {"nodeSelector": node_selector, "quotaName": quota_name}
    if ratio is not None:
        spec["resourceRatio"] = ratio
    if quota_labels:
        spec["quotaLabels"] = quota_labels
    meta: dict[str, Any] = {}
    if resource_keys is not None:
        meta["annotations"] = {P + "resource-keys": json.dumps(resource_keys)}
    api_version = "quota.koordinator.sh/v1alpha1"
    written = {"metadata": dict(meta), "spec": spec}
    fields = {"creationTimestamp": created} if created else {}
    return {
        "apiVersion": api_version,
        "kind": "ElasticQuotaProfile",
        "metadata": object_metadata(
            "ElasticQuotaProfile",
            namespace,
            name,
            generation=1,
            managedFields=[
                managed_entry("kubectl-client-side-apply", "Update", api_version, written)
            ],
            **meta,
            **fields,
        ),
        "spec": spec,
    }
