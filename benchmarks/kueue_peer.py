"""Kueue's own scheduler benchmark, run as Kueue's Makefile runs it (`run-performance-scheduler`):
its runner starts envtest (etcd and kube-apiserver from KUBEBUILDER_ASSETS: the control
plane's binaries, built here), minimalkueue (Kueue's controllers and scheduler in one process),
creates the config's ClusterQueues and Workloads, marks each Workload finished its running time
after admission, and writes its summary; read here into `Figures`.
"""

from __future__ import annotations

import csv
import os
import subprocess
import threading
from datetime import datetime
from pathlib import Path

import yaml

from benchmarks.kueue_shape import Figures, Shape
from benchmarks.scale import cpu_times, rss_mib
from scripts.control_plane.build import Built
from scripts.control_plane.peers import BuiltPeer

WATCHED = ("kube-apiserver", "etcd", "minimalkueue")
"""The runner's descendants whose CPU is read (minimalkueue's also from its own stats)."""


def _children() -> dict[int, list[int]]:
    found: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError):
                continue
            found.setdefault(parent, []).append(int(entry.name))
    return found


def _descendants(pid: int) -> list[int]:
    children, found, queue = _children(), [], [pid]
    while queue:
        for child in children.get(queue.pop(), []):
            found.append(child)
            queue.append(child)
    return found


def _usage(pid: int) -> tuple[str, float, float] | None:
    """(name, CPU seconds, peak RSS MiB) of a live process; None once it is gone."""
    try:
        name = Path(f"/proc/{pid}/comm").read_text().strip()
        return name, sum(cpu_times(pid)), rss_mib(pid, "VmHWM")
    except OSError:
        return None


class Sampler(threading.Thread):
    """The last CPU time and peak memory seen of each watched descendant of `pid`."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.seen: dict[int, tuple[str, float, float]] = {}
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.wait(0.5):
            for child in _descendants(self.pid):
                usage = _usage(child)
                if usage is not None and usage[0] in WATCHED:
                    name, cpu, peak = usage  # an exiting process shows no memory: keep the most
                    self.seen[child] = (name, cpu, max(peak, self.seen.get(child, usage)[2]))

    def totals(self) -> tuple[dict[str, float], dict[str, float]]:
        cpu: dict[str, float] = {}
        peak: dict[str, float] = {}
        for name, seconds, mib in self.seen.values():
            cpu[name] = cpu.get(name, 0.0) + seconds
            peak[name] = max(peak.get(name, 0.0), mib)
        return cpu, peak


def run_kueue(peer: BuiltPeer, plane: Built, config: Path, shape: Shape, out: Path) -> Figures:
    """Kueue's benchmark of `config`, its files in `out`."""
    source = peer.source()
    out.mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        "KUBEBUILDER_ASSETS": str(plane.bin),
        "PROJECT_DIR": str(source / "Makefile"),  # its test util takes the file's folder
    }
    command = [
        str(peer.binary("runner")),
        "--o", str(out),
        "--crds", str(source / "config" / "components" / "crd" / "bases"),
        "--generatorConfig", str(config),
        "--minimalKueue", str(peer.binary("minimalkueue")),
        "--withLogs=true", "--logToFile=true",
        "--timeout", "30m",
    ]  # fmt: skip
    with (out / "runner.log").open("wb") as log:
        runner = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
        sampler = Sampler(runner.pid)
        sampler.start()
        code = runner.wait()
        sampler.done.set()
        sampler.join()
    if code != 0:
        raise RuntimeError(f"Kueue's runner exited with {code}: see {out / 'runner.log'}")
    return _figures(out, shape, *sampler.totals())


def _figures(out: Path, shape: Shape, cpu: dict[str, float], peak: dict[str, float]) -> Figures:
    summary = yaml.safe_load((out / "summary.yaml").read_text())
    stats = yaml.safe_load((out / "minimalkueue.stats.yaml").read_text())
    requests = {c.name: c.request for c in shape.classes}
    admission: dict[str, list[float]] = {c.name: [] for c in shape.classes}
    evictions: dict[str, int] = dict.fromkeys(admission, 0)
    held: dict[str, float] = {q.name: 0.0 for q in shape.queues}
    """CPU seconds of each queue's workloads from admitted to finished, as the runner saw."""
    with (out / "wlStates.csv").open() as rows:
        for row in csv.DictReader(rows):
            kind = row["class name"]
            admitted, finished = int(row["ms to admitted"]), int(row["ms to finish"])
            admission[kind].append(admitted / 1000)
            evictions[kind] += int(row["num evictions"])
            held[row["namespace"]] += requests[kind] * (finished - admitted) / 1000
    queues = summary["clusterQueueClasses"]
    first = min(_moment(q["firstEventTime"]) for q in queues.values())
    last = max(_moment(q["lastEventTime"]) for q in queues.values())
    usage = [held[q.name] / (q.nominal * (last - first)) for q in shape.queues]
    recorded = []
    with (out / "cqStates.csv").open() as rows:
        for row in csv.DictReader(rows):
            used, quota = int(row["CPU used (mCPU * ms)"]), int(row["CPU quota (mCPU)"])
            recorded.append(used / (quota * (last - first) * 1000))  # Kueue's checker's formula
    cpu["minimalkueue"] = (stats["userMs"] + stats["sysMs"]) / 1000
    peak["minimalkueue"] = stats["maxrss"] / 1024
    return Figures(
        "Kueue v0.17.0",
        last - first,
        admission,
        evictions,
        usage,
        cpu,
        peak,
        recorded_usage=recorded,
        notes=[f"minimalkueue's wall {stats['wallMs'] / 1000:.1f} s (Kueue's own bound: 425 s)"],
    )


def _moment(stamp: str) -> float:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
