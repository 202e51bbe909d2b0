"""Prometheus metrics of the operator, in a registry of its own (one per operator)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from eq_engine import GroupStatus
from eq_kit.caching import Caches
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector

_GROUP_LABELS = ["group", "namespace", "parent", "resource"]


@dataclass
class Metrics:
    registry: CollectorRegistry = field(default_factory=CollectorRegistry)

    def __post_init__(self) -> None:
        r = self.registry
        self.values = {
            name: Gauge(
                f"elastic_quota_group_{name}",
                f"The group's {name}, in canonical units (cpu in milli-cores, memory in bytes).",
                _GROUP_LABELS,
                registry=r,
            )
            for name in ("min", "max", "request", "runtime", "used")
        }
        self.values["borrowed"] = Gauge(
            "elastic_quota_group_borrowed",
            "What the group uses above its min (scaled min where min scaling applies), per "
            "resource its runtime covers: capacity lent to it by others.",
            _GROUP_LABELS,
            registry=r,
        )
        self.values["lent"] = Gauge(
            "elastic_quota_group_lent",
            "Min the group does not ask for, which its siblings may borrow.",
            _GROUP_LABELS,
            registry=r,
        )
        self.over_quota = Gauge(
            "elastic_quota_group_over_quota_pods",
            "The group's own scheduled pods labelled over-quota: what reclaim could take.",
            ["group", "namespace", "parent"],
            registry=r,
        )
        self.evictions = Counter(
            "elastic_quota_evictions",
            "Eviction attempts by group and result: evicted, blocked (a "
            "PodDisruptionBudget said no), gone (already deleted), failed, dry_run.",
            ["group", "result"],
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
            "Time until the API server answered (a watch: until it started streaming).",
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
        self.waiting = Gauge(
            "elastic_quota_group_waiting_pods",
            "Pods of the group behind the admission gate, waiting for quota.",
            ["group"],
            registry=r,
        )
        self.admitted = Counter(
            "elastic_quota_admitted_pods",
            "Pods whose admission gate the operator lifted.",
            registry=r,
        )
        self.caches = Caches(())
        """The process's caches, whose state is exported when scraped."""
        r.register(_CacheCollector(self))
        self._series: dict[str, set[tuple[str, ...]]] = {}
        self._waiting: set[str] = set()

    def publish(self, statuses: Iterable[GroupStatus], removed: Iterable[str]) -> None:
        """Set the gauges of changed groups; drop every series of removed groups."""
        for name in removed:
            self._drop(name)
        for status in statuses:
            self._drop(status.name)
            series: set[tuple[str, ...]] = set()
            values = {
                "min": status.min,
                "max": status.max,
                "request": status.request,
                "runtime": status.runtime,
                "used": status.used,
                "borrowed": status.borrowed,
                "lent": status.lent,
            }
            group = (status.name, status.namespace, status.parent or "")
            for metric, resources in values.items():
                for resource, amount in (resources or {}).items():
                    self.values[metric].labels(*group, resource).set(amount)
                    series.add((metric, *group, resource))
            self.over_quota.labels(*group).set(status.over_quota_pods)
            series.add(("over_quota", *group))
            self._series[status.name] = series

    def observe_request(self, verb: str, code: int, seconds: float) -> None:
        self.api_requests.labels(verb, str(code)).inc()
        self.api_latency.labels(verb).observe(seconds)

    def publish_waiting(self, per_group: dict[str, int]) -> None:
        """Set the waiting gauge of groups with waiting pods; drop it where none wait."""
        for group in self._waiting - per_group.keys():
            self.waiting.remove(group)
        for group, count in per_group.items():
            self.waiting.labels(group).set(count)
        self._waiting = set(per_group)

    def _drop(self, group: str) -> None:
        for metric, *labels in self._series.pop(group, ()):
            gauge = self.over_quota if metric == "over_quota" else self.values[metric]
            gauge.remove(*labels)


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
