"""Prometheus metrics of the operator, in a registry of its own (one per operator)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from eq_engine import GroupStatus
from eq_kit.caching import Caches
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector

_GROUP_LABELS = ("group", "namespace", "parent", "tree")
"""The labels of every group gauge (a gauge per resource adds `resource`), read from the group's
status. `tree` is its quota tree's id ("": the default tree; a node pool's root is a group of its
pool's tree). A group stays in the tree it was made in, so the label adds no series; its values
are bounded by the number of node pools (ElasticQuotaProfiles)."""


def _labels(status: GroupStatus) -> list[str]:
    """The group's values of `_GROUP_LABELS`."""
    return [status.name, status.namespace, status.parent or "", status.tree]


_GROUP_VALUES = {
    **{
        name: f"The group's {name}, in canonical units (cpu in milli-cores, memory in bytes)."
        for name in ("min", "max", "request", "runtime", "used")
    },
    "borrowed": "What the group uses above its min (scaled min where min scaling applies), per "
    "resource its runtime covers: capacity lent to it by others.",
    "lent": "Min the group does not ask for, which its siblings may borrow (never more than "
    "its lendable).",
    "lendable": "What of its min the group may lend: its lending limit, all of its min without "
    "one, nothing when it does not lend.",
}


@dataclass
class Metrics:
    registry: CollectorRegistry = field(default_factory=CollectorRegistry)

    def __post_init__(self) -> None:
        r = self.registry
        self.evictions = Counter(
            "elastic_quota_evictions",
            "Eviction attempts by group (and its tree) and result: evicted, blocked (a "
            "PodDisruptionBudget said no), gone (already deleted), failed, dry_run.",
            ["group", "tree", "result"],
            registry=r,
        )
        self.preemptions = Counter(
            "elastic_quota_preemptions",
            "Eviction attempts to make room in a group for a more important waiting pod "
            "(preemption), by group (and its tree) and result: evicted, blocked, gone, failed, "
            "dry_run.",
            ["group", "tree", "result"],
            registry=r,
        )
        self.gang_requeues = Counter(
            "elastic_quota_gang_requeues",
            "Gangs evicted whole and sent back behind the gate for not starting in time, by "
            "group (and its tree).",
            ["group", "tree"],
            registry=r,
        )
        self.gang_evictions = Counter(
            "elastic_quota_gang_evictions",
            "Gangs reclaimed whole (each counts once, whatever its pods), by group (and its tree).",
            ["group", "tree"],
            registry=r,
        )
        self.gate_wait = Histogram(
            "elastic_quota_gate_wait_seconds",
            "Time from a pod's creation (when the webhook gated it) to the operator lifting its "
            "admission gate.",
            buckets=(0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600),
            registry=r,
        )
        self.api_requests = Counter(
            "elastic_quota_api_requests",
            "Requests to the API server by verb (HTTP method) and status code (0: no answer).",
            ["verb", "code"],
            registry=r,
        )
        self.api_latency = Histogram(
            "elastic_quota_api_request_duration_seconds",
            "Time until the API server answered, as the operator's loop saw it: a busy loop adds "
            "to it, as when a LIST's next page is asked for while this one is read (a watch: "
            "until it started streaming).",
            ["verb"],
            buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
            registry=r,
        )
        self.leader = Gauge(
            "elastic_quota_leader",
            "1 while this replica holds the Lease and writes, 0 while it stands by.",
            ["pod"],
            registry=r,
        )
        self.recompute = Histogram(
            "elastic_quota_recompute_duration_seconds",
            "Time of one recompute of the engine.",
            buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 2.5),
            registry=r,
        )
        self.writes = Counter(
            "elastic_quota_api_writes",
            "Writes to the API server by object kind and result.",
            ["kind", "result"],
            registry=r,
        )
        self.pending_writes = Gauge(
            "elastic_quota_writes_pending",
            "Objects of a kind waiting to be compared with what the engine wants and written "
            "if they differ (a write that failed included, until it is made): under the write "
            "budget, the labels' backlog.",
            ["kind"],
            registry=r,
        )
        self.gang_wait = Histogram(
            "elastic_quota_gang_wait_seconds",
            "Time from a gang's first pod's creation to the operator lifting the gang's gates.",
            buckets=(0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600),
            registry=r,
        )
        self.admitted = Counter(
            "elastic_quota_admitted_pods",
            "Pods whose admission gate the operator lifted.",
            registry=r,
        )
        # The series counted on every request, each looked up once: `labels` takes a lock and
        # builds its key at each call, 2% of the operator's CPU under a burst of writes.
        self._requests = functools.cache(self.api_requests.labels)
        self._latency = functools.cache(self.api_latency.labels)
        self._writes = functools.cache(self.writes.labels)
        self.caches = Caches(())
        """The process's caches, whose state is exported when scraped."""
        self.groups: Callable[[], Iterable[GroupStatus]] = tuple
        """Every group's status as last computed (the engine's), exported when scraped."""
        self.waiting: tuple[dict[str, int], dict[str, int]] = ({}, {})
        """Pods and gangs waiting behind the admission gate per group (groups with some),
        exported when scraped."""
        r.register(_CacheCollector(self))
        r.register(_GroupCollector(self))

    def observe_request(self, verb: str, code: int, seconds: float) -> None:
        self._requests(verb, str(code)).inc()
        self._latency(verb).observe(seconds)

    def count_write(self, kind: str, result: str) -> None:
        """A write of an object of `kind` ended: ok, gone, or error."""
        self._writes(kind, result).inc()

    def publish_waiting(self, pods: dict[str, int], gangs: dict[str, int]) -> None:
        """The pods and gangs waiting per group now (groups where none waits: absent)."""
        self.waiting = (dict(pods), dict(gangs))  # replaced whole: a scrape reads either


class _CacheCollector(Collector):
    """Read at scrape time from the reflectors, which know nothing of Prometheus."""

    def __init__(self, metrics: Metrics) -> None:
        self._metrics = metrics

    def collect(self) -> Iterator[Metric]:
        synced = GaugeMetricFamily(
            "elastic_quota_cache_synced",
            "1 once the kind's first LIST is applied (decisions wait for every kind).",
            labels=["kind"],
        )
        restarts = CounterMetricFamily(
            "elastic_quota_watch_restarts",
            "LISTs after the first, per kind: a watch that ended in 410 Expired, an ERROR "
            "event or a broken connection.",
            labels=["kind"],
        )
        listed: dict[str, bool] = {}
        relists: dict[str, int] = {}
        for reflector in self._metrics.caches.reflectors:
            kind = reflector.kind.name
            listed[kind] = listed.get(kind, True) and reflector.listed.is_set()
            relists[kind] = relists.get(kind, 0) + max(0, reflector.lists - 1)
        for kind in sorted(listed):
            synced.add_metric([kind], 1.0 if listed[kind] else 0.0)
            restarts.add_metric([kind], relists[kind])
        yield synced
        yield restarts


class _GroupCollector(Collector):
    """Every group's numbers, read from the engine when scraped: nothing to keep up to date on
    each recompute (11,000 groups have about 300,000 series)."""

    def __init__(self, metrics: Metrics) -> None:
        self._metrics = metrics

    def collect(self) -> Iterator[Metric]:
        families = {
            name: GaugeMetricFamily(
                f"elastic_quota_group_{name}", text, labels=[*_GROUP_LABELS, "resource"]
            )
            for name, text in _GROUP_VALUES.items()
        }
        over_quota = GaugeMetricFamily(
            "elastic_quota_group_over_quota_pods",
            "The group's own scheduled pods labelled over-quota: what reclaim could take.",
            labels=_GROUP_LABELS,
        )
        waiting = [
            GaugeMetricFamily(name, text, labels=_GROUP_LABELS)
            for name, text in (
                (
                    "elastic_quota_group_waiting_pods",
                    "Pods of the group behind the admission gate, waiting for quota.",
                ),
                (
                    "elastic_quota_group_waiting_gangs",
                    "Gangs of the group behind the admission gate, waiting for quota or for "
                    "their pods.",
                ),
            )
        ]
        counts = self._metrics.waiting
        unseen = {*counts[0], *counts[1]}
        for status in self._metrics.groups():
            group = _labels(status)
            for name, family in families.items():
                for resource, amount in (getattr(status, name) or {}).items():
                    family.add_metric([*group, resource], amount)
            over_quota.add_metric(group, status.over_quota_pods)
            if status.name in unseen:
                unseen.discard(status.name)
                _add_waiting(waiting, counts, status.name, group)
        for name in sorted(unseen):  # a group the engine no longer lists: settings unknown
            _add_waiting(waiting, counts, name, [name, "", "", ""])
        yield from families.values()
        yield over_quota
        yield from waiting


def _add_waiting(
    families: list[GaugeMetricFamily],
    counts: tuple[dict[str, int], dict[str, int]],
    name: str,
    labels: list[str],
) -> None:
    for family, per_group in zip(families, counts, strict=True):
        if name in per_group:
            family.add_metric(labels, per_group[name])
