"""Kueue's scheduler benchmark config (test/performance/scheduler/configs/*/generator.yaml),
read once for both systems, and the figures each run gives, printed side by side.

The config: cohorts of ClusterQueues, each queue with a nominal CPU quota, a borrowing limit and
sets of workloads made one every `creationIntervalMs`, each of one class (a CPU request, a
priority, a running time). For the product a cohort is a parent ElasticQuota whose min and max
are its queues' nominal quotas summed, a queue a child group with min the nominal quota and max
min + the borrowing limit, a workload a pod (docs/benchmarks.md, "Against the peers").
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from benchmarks.real_control_plane import percentiles


@dataclass(frozen=True)
class WorkloadClass:
    name: str
    request: int  # CPUs
    priority: int
    runtime_ms: int


@dataclass(frozen=True)
class WorkloadSet:
    count: int
    interval_ms: int
    classes: tuple[WorkloadClass, ...]


@dataclass(frozen=True)
class Queue:
    name: str  # Kueue's: <class>-<set>-<index>-<cohort>, also the product's namespace and group
    cohort: str
    nominal: int
    borrowing_limit: int
    sets: tuple[WorkloadSet, ...]


@dataclass(frozen=True)
class Shape:
    cohorts: dict[str, list[Queue]]

    @property
    def queues(self) -> list[Queue]:
        return [queue for queues in self.cohorts.values() for queue in queues]

    @property
    def classes(self) -> list[WorkloadClass]:
        found = {c.name: c for q in self.queues for s in q.sets for c in s.classes}
        return sorted(found.values(), key=lambda c: c.priority)

    @property
    def workloads(self) -> int:
        return sum(s.count * len(s.classes) for q in self.queues for s in q.sets)


def read_shape(path: Path) -> Shape:
    """The queues of a generator config, named as Kueue's generator names them."""
    config: dict[str, Any] = yaml.safe_load(path.read_text())
    cohorts: dict[str, list[Queue]] = {}
    for cohort_set in config["cohorts"]:
        for c in range(cohort_set["count"]):
            cohort = f"{cohort_set['className']}-{c}"
            queues = cohorts.setdefault(cohort, [])
            for s, queue_set in enumerate(cohort_set["queuesSets"]):
                sets = tuple(
                    WorkloadSet(
                        w["count"],
                        w["creationIntervalMs"],
                        tuple(
                            WorkloadClass(
                                t["className"], t["request"], t["priority"], t["runtimeMs"]
                            )
                            for t in w["workloads"]
                        ),
                    )
                    for w in queue_set["workloadsSets"]
                )
                queues += [
                    Queue(
                        f"{queue_set['className']}-{s}-{i}-{cohort}",
                        cohort,
                        queue_set["nominalQuota"],
                        queue_set.get("borrowingLimit", 0),
                        sets,
                    )
                    for i in range(queue_set["count"])
                ]
    return Shape(cohorts)


@dataclass
class Figures:
    """What one system's run gave; seconds, CPU seconds and MiB."""

    system: str
    span: float
    """First workload seen to the last event (Kueue's recorder) or the last pod finished."""
    admission: dict[str, list[float]]
    """Per class, each workload's seconds from creation to its (last) admission."""
    evictions: dict[str, int]
    usage: list[float]
    """Per queue, the CPUs of its workloads from admitted to finished as the benchmark's runner
    saw them, over the span, as a share of its nominal quota."""
    cpu: dict[str, float]
    """CPU seconds of each process: the controller(s), kube-apiserver, etcd."""
    peak_mib: dict[str, float]
    recorded_usage: list[float] = field(default_factory=list)
    """Per queue, Kueue's recorder's figure: its ClusterQueue's status integrated (Kueue's)."""
    scheduled: dict[str, list[float]] = field(default_factory=dict)
    """Per class, seconds from creation to bound to a node (the product's pods only)."""
    notes: list[str] = field(default_factory=list)


def _seconds(values: list[float]) -> str:
    """Mean, p50 and p90."""
    if len(values) < 2:
        return f"{values[0]:6.1f}" if values else "-"
    p50, p90, _ = percentiles(values)
    return f"{statistics.fmean(values):6.1f} {p50:6.1f} {p90:6.1f}"


def _shares(values: list[float]) -> str:
    return f"{statistics.fmean(values):.1%}, {min(values):.1%}" if values else "-"


def table(runs: list[Figures], classes: list[str]) -> str:
    """The runs side by side: a row per figure, a column per system."""
    rows: list[tuple[str, list[str]]] = [
        ("span (first workload to last event), s", [f"{r.span:.1f}" for r in runs]),
    ]
    for name in classes:
        rows.append(
            (f"{name}: to admission mean/p50/p90, s", [_seconds(r.admission[name]) for r in runs])
        )
    for name in classes:
        rows.append(
            (
                f"{name}: to scheduled mean/p50/p90, s",
                [_seconds(r.scheduled.get(name, [])) for r in runs],
            )
        )
    rows += [
        ("usage of nominal: average queue", [f"{statistics.fmean(r.usage):.1%}" for r in runs]),
        ("usage of nominal: lowest queue", [f"{min(r.usage):.1%}" for r in runs]),
        (
            "usage by Kueue's recorder: average, lowest",
            [_shares(r.recorded_usage) for r in runs],
        ),
        (
            "evictions " + "/".join(classes),
            ["/".join(str(r.evictions.get(c, 0)) for c in classes) for r in runs],
        ),
    ]
    processes = sorted({p for r in runs for p in r.cpu})
    rows += [
        (f"CPU s: {p}", [f"{r.cpu[p]:.1f}" if p in r.cpu else "-" for r in runs]) for p in processes
    ]
    peaks = sorted({p for r in runs for p in r.peak_mib})
    rows += [
        (f"peak RSS MiB: {p}", [f"{r.peak_mib[p]:.0f}" if r.peak_mib.get(p) else "-" for r in runs])
        for p in peaks
    ]
    width = max(len(label) for label, _ in rows)
    lines = [f"{'':<{width}}  " + "  ".join(f"{r.system:>22}" for r in runs)]
    lines += [
        f"{label:<{width}}  " + "  ".join(f"{v:>22}" for v in values) for label, values in rows
    ]
    for run in runs:
        lines += [f"{run.system}: {note}" for note in run.notes]
    return "\n".join(lines)
