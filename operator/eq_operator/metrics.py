"""Prometheus metrics of the operator, in a registry of its own (one per operator)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from eq_engine import GroupStatus
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

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
            "Evictions by result: evicted, blocked (a "
            "PodDisruptionBudget said no), gone (already deleted), failed, dry_run.",
            ["result"],
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
