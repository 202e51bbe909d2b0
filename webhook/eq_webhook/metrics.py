"""Prometheus metrics of the webhook, in a registry of its own (one per server)."""

from __future__ import annotations

from dataclasses import dataclass, field

from prometheus_client import CollectorRegistry, Counter, Histogram


@dataclass
class Metrics:
    registry: CollectorRegistry = field(default_factory=CollectorRegistry)

    def __post_init__(self) -> None:
        self.admissions = Counter(
            "elastic_quota_webhook_admissions",
            "Admission reviews answered, by kind, operation and result (allowed, denied, gated, "
            "unreadable for a pod let through ungated because it could not be read, or error "
            "for requests that were not valid reviews).",
            ["kind", "operation", "result"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "elastic_quota_webhook_admission_duration_seconds",
            "Time from receiving an admission review to answering it.",
            ["kind"],
            buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5),
            registry=self.registry,
        )
