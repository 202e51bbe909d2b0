"""The Kopf handlers: watch ElasticQuota, Pod and Node objects and feed the view.

Index handlers see every object of the initial listings and every later change; Kopf holds all
other handlers back until every listing is indexed. So the first call of an event handler
means the engine has the whole cluster: from then on decisions may be taken. Deletions reach
the event handlers only. No handler stores state on the objects and none adds a finalizer.
"""

from __future__ import annotations

from typing import Any

import kopf

from .view import ClusterView

QUOTAS = ("scheduling.sigs.k8s.io", "v1alpha1", "elasticquotas")
PODS = ("", "v1", "pods")
NODES = ("", "v1", "nodes")


def register(registry: kopf.OperatorRegistry, view: ClusterView) -> None:
    kinds = {
        QUOTAS: (view.observe_quota, view.forget_quota),
        PODS: (view.observe_pod, view.forget_pod),
        NODES: (view.observe_node, view.forget_node),
    }
    for (group, version, plural), (observe, forget) in kinds.items():
        _register_kind(registry, group, version, plural, observe, forget, view)


def _register_kind(
    registry: kopf.OperatorRegistry,
    group: str,
    version: str,
    plural: str,
    observe: Any,
    forget: Any,
    view: ClusterView,
) -> None:
    # Coroutines, not functions: Kopf runs plain functions in a thread pool, where they would
    # race the operator's loop over the engine's state.
    async def index(body: kopf.Body, **_: Any) -> None:
        error = observe(body)
        if error is not None:
            kopf.warn(body, reason="InvalidObject", message=f"not counted: {error}")

    async def event(type: str | None, body: kopf.Body, **_: Any) -> None:
        view.synced = True
        if type == "DELETED":
            forget(body)

    kopf.index(group, version, plural, id=f"observe-{plural}", registry=registry)(index)
    kopf.on.event(group, version, plural, id=f"forget-{plural}", registry=registry)(event)
