"""Engine benchmarks on the generated cluster of `cluster.py`; prints each figure by its target.

    python -m benchmarks.run            # all figures (about a minute on 2 cores)
    python -m benchmarks.run real-control-plane [--help]   # the product on the real control
                                        # plane (benchmarks/real_control_plane.py)
    python -m benchmarks.run against-kueue [--help]   # Kueue's own benchmark and the product's
                                        # run of its config, side by side (against_kueue.py)
    python -m benchmarks.run against-koordinator [--help]   # koord-scheduler and the product
                                        # given the same trees and pods (against_koordinator.py)

Figures: full recompute of request and runtime, incremental update after one pod event,
`elastic-quota simulate -o json` against `json.load` of the same file, engine memory per pod.
"""

from __future__ import annotations

import gc
import json
import os
import random
import statistics
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

from eq_engine import QuotaEngine, parse_node, parse_pod, parse_quota
from eq_engine.reading import RawElasticQuota, RawNode, RawPod

from benchmarks import against_koordinator, against_kueue, cluster, real_control_plane
from benchmarks.preparing import prepare

HERE = Path(__file__).resolve().parent
REPO = HERE.parent


def report(name: str, value: float, unit: str, target: str) -> None:
    print(f"{name:<52} {value:>10.3f} {unit:<8} target {target}")


def loaded_engine(raw_pods: list[dict[str, Any]]) -> QuotaEngine:
    engine = QuotaEngine()
    for raw in cluster.quotas():
        engine.set_quota(parse_quota(cast(RawElasticQuota, raw)))
    for raw in cluster.nodes():
        engine.set_node(parse_node(cast(RawNode, raw)))
    for raw in raw_pods:
        engine.set_pod(parse_pod(cast(RawPod, raw)))
    return engine


def full_recompute(engine: QuotaEngine, repeat: int = 15) -> list[float]:
    """The whole tree's request/used (bottom-up) and runtime (top-down) from the pod sums.

    This is the numeric phase of a tree rebuild; it calls the engine's two sweeps directly
    because a rebuild also re-places every pod, which is timed separately.
    """
    everything = set(range(engine.tree.size))
    capacity = engine.capacity()
    accounts = engine.recompute().accounts
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        accounts.refresh_requests(None)
        accounts.refresh_runtime(everything, capacity=capacity, total_changed=True)
        times.append(time.perf_counter() - start)
    return times


def incremental(
    engine: QuotaEngine, raw_pods: list[dict[str, Any]], events: int = 1000
) -> list[float]:
    """Remove a random pod and recompute, then add it back and recompute: 2 events each."""
    rng = random.Random(7)
    times = []
    for raw in rng.sample(raw_pods, events // 2):
        pod = parse_pod(cast(RawPod, raw))
        start = time.perf_counter()
        engine.remove_pod(pod.key)
        engine.recompute()
        middle = time.perf_counter()
        engine.set_pod(pod)
        engine.recompute()
        times += [middle - start, time.perf_counter() - middle]
    return times


def memory_per_pod(raw_pods: list[dict[str, Any]]) -> tuple[float, float]:
    gc.collect()
    tracemalloc.start()
    engine = loaded_engine(raw_pods)
    engine.recompute()
    gc.collect()
    current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del engine
    return current / len(raw_pods), peak / len(raw_pods)


def simulate_versus_json_load() -> tuple[float, float]:
    data = HERE / ".data"
    data.mkdir(exist_ok=True)
    path = data / "cluster.json"
    path.write_text(json.dumps(cluster.cluster()))  # each time: the generator may have changed
    start = time.perf_counter()
    with path.open() as file:
        json.load(file)
    load_time = time.perf_counter() - start
    gc.collect()
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "eq_cli.main", "simulate", "-f", str(path), "-o", "json"],
        check=True,
        stdout=subprocess.DEVNULL,
        env={"PYTHONPATH": os.pathsep.join(str(REPO / d) for d in ("engine", "cli"))},
    )
    return time.perf_counter() - start, load_time


BENCHMARKS: dict[str, Callable[[list[str]], None]] = {
    "real-control-plane": real_control_plane.main,
    "against-kueue": against_kueue.main,
    "against-koordinator": against_koordinator.main,
}
"""The named benchmarks, each with arguments of its own; none named: the engine's figures."""


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] in BENCHMARKS:
        BENCHMARKS[sys.argv[1]](sys.argv[2:])
        return
    if len(sys.argv) > 1:  # --help, or a name mistyped: say what there is, run nothing
        names = " | ".join(BENCHMARKS)
        print(f"usage: python -m benchmarks.run [{names} [ARGS...]]", file=sys.stderr)
        print("  none named: the engine's figures; a name: its own --help", file=sys.stderr)
        sys.exit(0 if sys.argv[1] in ("-h", "--help") else 2)
    prepare()
    raw_pods = cluster.pods()
    engine = loaded_engine(raw_pods)
    start = time.perf_counter()
    engine.recompute()
    rebuild = time.perf_counter() - start
    print(
        f"cluster: {engine.tree.size} groups, {len(raw_pods)} pods, "
        f"{len(cluster.nodes())} nodes, resources {', '.join(engine.capacity())}"
    )

    full = full_recompute(engine)
    report(
        "full recompute of request and runtime (median)",
        statistics.median(full) * 1e3,
        "ms",
        "<= 20 ms",
    )
    steps = incremental(engine, raw_pods)
    report(
        "incremental update after one pod event (median)",
        statistics.median(steps) * 1e3,
        "ms",
        "<= 1 ms",
    )
    report(
        "incremental update after one pod event (p99)",
        statistics.quantiles(steps, n=100)[98] * 1e3,
        "ms",
        "(for information)",
    )
    report("first recompute: tree, 100,000 pods placed, labels", rebuild, "s", "(for information)")
    del engine
    current, peak = memory_per_pod(raw_pods)
    report("engine memory per pod, held after recompute", current, "bytes", "<= 1024 bytes")
    report("engine memory per pod, peak while loading", peak, "bytes", "(for information)")
    del raw_pods
    simulate_time, load_time = simulate_versus_json_load()
    report("json.load of the cluster file", load_time, "s", "")
    report(
        "elastic-quota simulate -o json on the same file",
        simulate_time,
        "s",
        f"<= 3 x json.load = {3 * load_time:.3f} s",
    )
    report("  ratio", simulate_time / load_time, "x", "<= 3")


if __name__ == "__main__":
    main()
