"""The object streams: the kit's list-then-watch caches feed the view.

Not Kopf's per-object workers, and no `kopf.index`: Kopf's index barrier wakes every parked
worker on every indexed object (quadratic start-up), and its workers cost about 0.6 ms of CPU
and 3.7 KiB per pod before any work of ours. A cache keeps no object: the view parses each one
into what the engine needs. Only this path changes the engine's state. Pods and nodes are
decoded into just the fields the engine reads (`eq_engine.reading.raw.SCHEMAS`), the rest of each
skipped: a node's status carries its images, often tens of kilobytes.

ElasticQuotaProfiles, the nodes and the quotas that are trees' roots also go to the node
pools (`pools.py`), which keep the roots as the profiles say.

PodGroups are followed in each of their three APIs (`eq_engine.model.gangs.POD_GROUP_KINDS`) where
the cluster serves it: a kind the cluster lacks (a CRD not installed, an alpha API switched off)
counts as empty and is asked for again now and then (the kit's optional kinds).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from eq_engine.model import POD_GROUP_KINDS
from eq_engine.reading import SCHEMAS
from eq_kit.caching import (
    DISRUPTION_BUDGETS,
    NODES,
    PODS,
    PROFILES,
    QUOTAS,
    Caches,
    Keyed,
    Kind,
    Sink,
    pod_groups,
    reflectors,
)
from eq_kit.kube import Http

from .pools import Pools
from .view import ClusterView


@dataclass(frozen=True)
class _Consumer:
    observe: Callable[[Mapping[str, Any]], None]
    delete: Callable[[str], None]

    def upsert(self, key: str, obj: Mapping[str, Any]) -> None:
        self.observe(obj)


def _sink(observe: Callable[[Mapping[str, Any]], None], delete: Callable[[str], None]) -> Sink:
    return Keyed(_Consumer(observe, delete))


@dataclass(frozen=True)
class _Pods:
    """The pods' sink: the view's record of every pod seen (the engine's map, and the view's
    of the pods the engine does not hold) is also the caches' record of them, so that 100,000
    pods cost one map, not two."""

    view: ClusterView

    def upsert(self, key: str, obj: Mapping[str, Any]) -> None:
        self.view.observe_pod(obj, key)

    def delete(self, key: str) -> None:
        self.view.forget_pod(key)

    def held(self) -> Iterable[str]:
        return self.view.pod_keys()


def caches(http: Http, view: ClusterView, pools: Pools, namespaces: Iterable[str] = ()) -> Caches:
    """ElasticQuotas, Pods, PodDisruptionBudgets, PodGroups and ElasticQuotaProfiles (in
    `namespaces`, or everywhere) and Nodes, into `view`, and what node pools need into
    `pools`."""

    def observe_quota(body: Mapping[str, Any]) -> None:
        view.observe_quota(body)
        pools.observe_quota(body)

    def forget_quota(key: str) -> None:
        view.forget_quota(key)
        pools.forget_quota(key)

    def observe_node(body: Mapping[str, Any]) -> None:
        node = view.observe_node(body)
        if node is None:
            pools.forget_node(body["metadata"]["name"])
        else:
            pools.observe_node(node)

    def forget_node(key: str) -> None:
        view.forget_node(key)
        pools.forget_node(key)

    sinks: dict[Kind, Sink] = {
        QUOTAS: _sink(observe_quota, forget_quota),
        PODS: _Pods(view),
        NODES: _sink(observe_node, forget_node),
        DISRUPTION_BUDGETS: _sink(view.observe_disruption_budget, view.forget_disruption_budget),
        PROFILES: _sink(pools.observe_profile, pools.forget_profile),
    }
    for kind in POD_GROUP_KINDS:
        sinks[pod_groups(kind.group, kind.version)] = _sink(
            functools.partial(view.observe_pod_group, kind),
            functools.partial(view.forget_pod_group, kind),
        )
    return Caches(reflectors(http, sinks, namespaces, schemas=SCHEMAS))
