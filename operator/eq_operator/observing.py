"""The object streams: the kit's list-then-watch caches feed the view.

Not Kopf's per-object workers, and no `kopf.index`: Kopf's index barrier wakes every parked
worker on every indexed object (quadratic start-up), and its workers cost about 0.6 ms of CPU
and 3.7 KiB per pod before any work of ours. A cache keeps no object: the view parses each one
into what the engine needs. Only this path changes the engine's state.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from eq_kit.caching import NODES, PODS, QUOTAS, Caches, reflectors
from eq_kit.kube import Http

from .view import ClusterView


@dataclass(frozen=True)
class _Sink:
    observe: Callable[[Mapping[str, Any]], None]
    delete: Callable[[str], None]

    def upsert(self, key: str, obj: Mapping[str, Any]) -> None:
        self.observe(obj)  # the view finds the same interned key


def caches(http: Http, view: ClusterView, namespaces: Iterable[str] = ()) -> Caches:
    """ElasticQuotas, Pods (in `namespaces`, or everywhere) and Nodes, into `view`."""
    sinks = {
        QUOTAS: _Sink(view.observe_quota, view.forget_quota),
        PODS: _Sink(view.observe_pod, view.forget_pod),
        NODES: _Sink(view.observe_node, view.forget_node),
    }
    return Caches(reflectors(http, sinks, namespaces))
