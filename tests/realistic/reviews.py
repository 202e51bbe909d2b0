"""AdmissionReview requests as kube-apiserver sends them to a webhook."""

from __future__ import annotations

from typing import Any

from .metadata import uid


def admission_review(
    operation: str,
    *,
    new: dict[str, Any] | None = None,
    old: dict[str, Any] | None = None,
    user: str = "kubernetes-admin",
    groups: tuple[str, ...] = ("kubeadm:cluster-admins", "system:authenticated"),
    name: str | None = None,
) -> dict[str, Any]:
    """An AdmissionReview v1 request as kube-apiserver sends it. `name`: `request.name` when it
    is not the object's: "" on a CREATE that relies on generateName, even once the server has
    named the object (what validating webhooks see)."""
    subject = new if new is not None else old
    assert subject is not None
    api_version = subject["apiVersion"]
    group, _, version = api_version.rpartition("/")
    kind = subject["kind"]
    kind_ref = {"group": group, "kind": kind, "version": version}
    resource = {"group": group, "resource": kind.lower() + "s", "version": version}
    options_kind = {"CREATE": "CreateOptions", "UPDATE": "UpdateOptions", "DELETE": "DeleteOptions"}
    options: dict[str, Any] = {"apiVersion": "meta.k8s.io/v1", "kind": options_kind[operation]}
    if operation == "DELETE":
        options["propagationPolicy"] = "Background"
    metadata = subject["metadata"]
    request = {
        "dryRun": False,
        "kind": kind_ref,
        "name": metadata.get("name", "") if name is None else name,
        "namespace": metadata.get("namespace", ""),
        "object": new,
        "oldObject": old,
        "operation": operation,
        "options": options,
        "requestKind": kind_ref,
        "requestResource": resource,
        "resource": resource,
        "uid": uid("review", operation, metadata.get("name") or metadata.get("generateName")),
        "userInfo": {"groups": list(groups), "username": user},
    }
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}


REPLICASET_CONTROLLER = {
    "user": "system:serviceaccount:kube-system:replicaset-controller",
    "groups": (
        "system:serviceaccounts",
        "system:serviceaccounts:kube-system",
        "system:authenticated",
    ),
}
"""The user kube-controller-manager's ReplicaSet controller creates pods as."""
