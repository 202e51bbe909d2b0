"""AdmissionReviews of ElasticQuota operations on the webhook tests' cluster
(conftest.py's `cluster_objects`), for the case tables of test_quota_admission_denials.py and
test_quota_admission_allowed.py: an object of the cluster as the API server sends it, edited, and
its creation, update or deletion; new groups with annotations or a status."""

from __future__ import annotations

import copy
from typing import Any

from tests.manifests import P, quota
from tests.webhook.conftest import cluster_objects, review

RES = {"cpu": 200, "memory": "200Gi"}
ROOT, SYSTEM, DEFAULT = (
    "koordinator-root-quota",
    "koordinator-system-quota",
    "koordinator-default-quota",
)
BUILTIN_NS = "koordinator-system"


def existing(name: str) -> dict[str, Any]:
    """A copy of a cluster object, as the API server sends it as `oldObject`."""
    found = next(o for o in cluster_objects() if o["metadata"]["name"] == name)
    return copy.deepcopy(found)


def edited(
    name: str,
    *,
    labels: dict[str, Any] | None = None,
    annotations: dict[str, Any] | None = None,
    **spec: Any,
) -> dict[str, Any]:
    """`existing(name)` with labels/annotations set (None removes) and spec fields replaced."""
    obj = existing(name)
    for field, changes in (("labels", labels), ("annotations", annotations)):
        for key, value in (changes or {}).items():
            if value is None:
                obj["metadata"][field].pop(key, None)
            else:
                obj["metadata"][field][key] = value
    obj["spec"].update(spec)
    return obj


def update(name: str, **changes: Any) -> dict[str, Any]:
    return review("UPDATE", new=edited(name, **changes), old=existing(name))


def create(obj: dict[str, Any]) -> dict[str, Any]:
    return review("CREATE", new=obj)


def delete(obj: dict[str, Any]) -> dict[str, Any]:
    return review("DELETE", old=obj)


def raw_quota(name: str, **metadata: Any) -> dict[str, Any]:
    obj = quota(name, max=RES)
    obj["metadata"].update(metadata)
    return obj


def strict(*, max: dict[str, Any], used: dict[str, Any]) -> dict[str, Any]:
    """A group whose max must cover its status.used on cpu."""
    obj = raw_quota("t", annotations={P + "max-strict-check-resource-keys": '["cpu"]'})
    obj["spec"]["max"] = max
    return {**obj, "status": {"used": used}}
