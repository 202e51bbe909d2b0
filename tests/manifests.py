"""Keyword builders for the Kubernetes objects tests feed in, and a one-call engine run.

Tests describe clusters the way a user writes them (manifests), never engine internals:

    run(quota("team", min={"cpu": "4"}, max={"cpu": "8"}), pod("p", quota="team", cpu="2"),
        capacity={"cpu": "10"})
"""

from __future__ import annotations

import json
from typing import Any, cast

from eq_engine import EngineConfig, QuotaEngine, parse_node, parse_pod, parse_quota, to_canonical
from eq_engine.reading import RawElasticQuota, RawNode, RawPod

P = "quota.scheduling.koordinator.sh/"
OWN = "elastic-quota.dev/"
LENDING_LIMIT = OWN + "lending-limit"
BORROWING_LIMIT = OWN + "borrowing-limit"


def quota(
    name: str,
    *,
    namespace: str = "quotas",
    parent: str | None = None,
    is_parent: bool = False,
    lend: bool = True,
    min: dict[str, Any] | None = None,
    max: dict[str, Any] | None = None,
    weight: dict[str, Any] | str | None = None,
    namespaces: list[str] | None = None,
    labels: dict[str, str] | None = None,
    lending_limit: dict[str, Any] | list[Any] | None = None,
    borrowing_limit: dict[str, Any] | list[Any] | None = None,
) -> dict[str, Any]:
    all_labels = dict(labels or {})
    if parent is not None:
        all_labels[P + "parent"] = parent
    if is_parent:
        all_labels[P + "is-parent"] = "true"
    if not lend:
        all_labels[P + "allow-lent-resource"] = "false"
    annotations = {}
    if weight is not None:
        annotations[P + "shared-weight"] = weight if isinstance(weight, str) else json.dumps(weight)
    if namespaces is not None:
        annotations[P + "namespaces"] = json.dumps(namespaces)
    for key, limit in ((LENDING_LIMIT, lending_limit), (BORROWING_LIMIT, borrowing_limit)):
        if limit is not None:
            annotations[key] = json.dumps(limit)
    return {
        "apiVersion": "scheduling.sigs.k8s.io/v1alpha1",
        "kind": "ElasticQuota",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": all_labels,
            "annotations": annotations,
        },
        "spec": {"min": min or {}, "max": max or {}},
    }


def pod(
    name: str,
    *,
    namespace: str = "apps",
    quota: str | None = None,
    node: str | None = "node-1",
    phase: str | None = None,
    priority: int = 0,
    start: str | None = "2026-01-01T00:00:00Z",
    preemptible: bool = True,
    labels: dict[str, str] | None = None,
    init: list[dict[str, Any]] | None = None,
    overhead: dict[str, Any] | None = None,
    gated: bool = False,
    created: str | None = None,
    **requests: Any,
) -> dict[str, Any]:
    """A pod with one container requesting `requests` (`nvidia_com_gpu` for `nvidia.com/gpu`);
    `gated`: pending behind the admission gate."""
    all_labels = dict(labels or {})
    if quota is not None:
        all_labels[P + "name"] = quota
    if not preemptible:
        all_labels[P + "preemptible"] = "false"
    spec: dict[str, Any] = {
        "priority": priority,
        "containers": [
            {
                "name": "main",
                "image": "registry.k8s.io/pause:3.10",  # the real server requires one
                "resources": {
                    "requests": {k.replace("_com_", ".com/"): v for k, v in requests.items()}
                },
            }
        ],
    }
    if node:
        spec["nodeName"] = node
    if init:
        spec["initContainers"] = init
    if overhead:
        spec["overhead"] = overhead
    if gated:
        spec["schedulingGates"] = [{"name": P + "admission"}]
    status: dict[str, Any] = {"phase": phase or ("Running" if node else "Pending")}
    if node and start:
        status["startTime"] = start
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": all_labels,
            **({"creationTimestamp": created} if created else {}),
        },
        "spec": spec,
        "status": status,
    }


def node(name: str, **allocatable: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name},
        "status": {"allocatable": {k.replace("_com_", ".com/"): v for k, v in allocatable.items()}},
    }


def load(engine: QuotaEngine, *objects: dict[str, Any]) -> None:
    """Feed objects to the engine as the operator's watch would."""
    for raw in objects:
        kind = raw["kind"]
        if kind == "ElasticQuota":
            engine.set_quota(parse_quota(cast(RawElasticQuota, raw)))
        elif kind == "Pod":
            engine.set_pod(parse_pod(cast(RawPod, raw)))
        else:
            engine.set_node(parse_node(cast(RawNode, raw)))


def run(
    *objects: dict[str, Any], capacity: dict[str, Any] | None = None, **config: Any
) -> QuotaEngine:
    """An engine that has seen `objects` and recomputed."""
    engine = QuotaEngine(EngineConfig(**config))
    load(engine, *objects)
    if capacity is not None:
        engine.set_capacity({k: to_canonical(k, v) for k, v in capacity.items()})
    engine.recompute()
    return engine


def runtime(engine: QuotaEngine, name: str) -> dict[str, int] | None:
    status = engine.status(name)
    return None if status.runtime is None else dict(status.runtime)
