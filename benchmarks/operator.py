"""Operator benchmarks: reading a pod, event throughput into the engine, write amplification.

    python -m benchmarks.operator

0. The cost of one pod on the watch path: decoding its JSON (whole, and into the fields read as
   the operator's cache does) and reading it into the engine, on pods as the API server serves
   them (managedFields, status) and on the compact generated ones.

1. 100,000 pod events (adds, modifications, deletions) through the operator's watch path
   (what its caches call: the view's observe and forget) into the engine, with a batched
   recompute every 10,000 events (a 0.5 s batch at 20,000 events/s): events per second.
2. A 1,110-group, 20,000-pod cluster at rest in the emulated API server (tests/apiserver), with
   the operator's parts wired in-process (tests/operator/inprocess.py): the writes one pod event
   causes, its own writes' echoes on the watch included, counted where the emulator receives
   them.
"""

from __future__ import annotations

import asyncio
import copy
import gc
import random
import statistics
import time
from typing import Any

import orjson
from eq_engine import EngineConfig, QuotaEngine, parse_pod
from eq_engine.reading import RawPod
from eq_kit.caching import key_of
from eq_kit.decoding import Decoding
from eq_operator.view import ClusterView

from benchmarks import cluster
from benchmarks.preparing import interpreter_line
from tests import realistic
from tests.apiserver import ApiServer
from tests.operator.inprocess import InProcess, in_process
from tests.waiting import eventually

PODS = Decoding(RawPod)
"""Pods decoded as the operator's cache decodes them."""

BATCH = 10_000
"""Events per recompute: the operator's 0.5 s batch interval at 20,000 events/s."""


def throughput(events: int = 100_000) -> tuple[float, float]:
    """Events per second through the watch path into the engine: without, then with, the
    batched recomputes."""
    view = ClusterView(QuotaEngine(EngineConfig()))
    for raw in cluster.quotas():
        view.observe_quota(raw)
    for raw in cluster.nodes():
        view.observe_node(raw)
    pods = cluster.pods()
    rng = random.Random(3)
    scheduled = []  # modifications are prepared beforehand: only the watch path is timed
    for body in rng.sample(pods, 20_000):
        changed = copy.deepcopy(body)
        changed["spec"]["nodeName"] = f"node-{rng.randrange(1500):04d}"
        changed["status"]["phase"] = "Running"
        scheduled.append(changed)
    pods, scheduled = as_cached(pods), as_cached(scheduled)
    live: list[dict[str, Any]] = []
    view.engine.recompute()
    handling = recomputing = 0.0
    for batch in range(0, events, BATCH):
        start = time.perf_counter()
        for i in range(batch, batch + BATCH):
            kind = i % 5
            if kind < 2 or not live:  # add
                body = pods[i % len(pods)]
                live.append(body)
                view.observe_pod(body)
            elif kind < 4:  # modify: a pod is scheduled, or its phase changes
                view.observe_pod(scheduled[i % len(scheduled)])
            else:  # delete
                view.forget_pod(key_of(live.pop(rng.randrange(len(live)))))
        middle = time.perf_counter()
        view.engine.recompute()
        handling += middle - start
        recomputing += time.perf_counter() - middle
    return events / handling, events / (handling + recomputing)


def as_cached(bodies: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The pods as the operator's cache hands them to the view: decoded into the fields read."""
    page = orjson.dumps({"metadata": {}, "items": bodies})
    items: list[dict[str, Any]] = PODS.page(page)["items"]
    return items


def caught_up(op: InProcess) -> bool:
    """The operator's watches have shown it every change the emulator stored (a kind it does
    not serve, such as ElasticQuotaProfiles here, has none)."""
    tables = op.api.storage.tables
    return all(
        (table := tables.get(r.kind.plural)) is None
        or not table.history
        or int(r.version or 0) >= table.history[-1].rv
        for r in op.caches.reflectors
    )


async def settle(op: InProcess) -> int:
    """Steps of the loop until the operator has seen everything (its own writes' echoes too)
    and finds nothing more to write; the writes it made meanwhile."""
    before = op.writes()
    while True:
        await eventually(lambda: caught_up(op), what="the watches to catch up", timeout=60)
        written = op.writes()
        await op.loop.step()
        await op.writer.settled()
        if op.writes() == written and not (op.writer.groups or op.writer.pods):
            return op.writes() - before
        await asyncio.sleep(0.005)  # a write backing off: let time pass, do not spin


async def amplification(samples: int = 200) -> tuple[float, float, float, int]:
    """Mean writes per event that changes nothing, per new pending pod, and the mean number
    of groups and pods whose values that pod changed (what must be written at least)."""
    shape = {"departments": 10, "teams": 10, "subteams": 10}  # 1,110 groups
    quotas = cluster.quotas(**shape)
    api = ApiServer()
    api.seed(*quotas, *cluster.nodes()[:150], *cluster.pods(per_subteam=20, **shape))
    pods = api.catalog.named("pods")
    leaves = sorted(q["metadata"]["name"] for q in quotas if "-sub-" in q["metadata"]["name"])
    rng = random.Random(5)
    idle, busy, changed = [], [], []
    async with api, in_process(api) as op:
        await settle(op)  # the first labelling and annotations
        keys = sorted(op.view.pod_keys())
        for i in range(samples):
            namespace, name = rng.choice(keys).split("/", 1)
            stored = api.get("pods", name, namespace)
            assert stored is not None
            status = {**stored["status"], "conditions": [{"type": "Ready", "status": "True"}]}
            api.storage.put(pods, {**stored, "status": status}, type="MODIFIED")
            idle.append(await settle(op))  # only a status condition moved
            leaf = rng.choice(leaves)
            labels_before = {k: op.view.held_label(k) for k in op.view.pod_keys()}
            fields_before = dict(op.view.quota_fields)
            api.seed(cluster.pod(rng, leaf, 900 + i, 1.0, scheduled=False))
            busy.append(await settle(op))
            new_labels = sum(1 for k, v in labels_before.items() if op.view.held_label(k, v) != v)
            new_fields = sum(1 for k, v in op.view.quota_fields.items() if fields_before[k] != v)
            changed.append(new_labels + new_fields)
    return statistics.mean(idle), statistics.mean(busy), statistics.mean(changed), len(quotas)


def reading(pods: list[dict[str, Any]]) -> tuple[int, float, float, float]:
    """Mean size, and microseconds per pod to decode it whole (orjson), to decode it into the
    fields the engine reads as the operator's cache does (a LIST page of them, `RawPod`), and
    to read what the cache decoded into the engine's Pod (`parse_pod`), with the garbage
    collector off so that none pays for another's garbage."""
    raws = [orjson.dumps(body) for body in pods]
    page = orjson.dumps({"metadata": {}, "items": pods})
    gc.disable()
    try:
        started = time.perf_counter()
        for raw in raws:
            orjson.loads(raw)
        whole = time.perf_counter()
        items = PODS.page(page)["items"]
        typed = time.perf_counter()
        for body in items:
            parse_pod(body)
        ended = time.perf_counter()
    finally:
        gc.enable()
    per_pod = 1e6 / len(pods)
    return (
        sum(map(len, raws)) // len(raws),
        (whole - started) * per_pod,
        (typed - whole) * per_pod,
        (ended - typed) * per_pod,
    )


def main() -> None:
    print(interpreter_line())  # in one process: nothing is started that would compile
    shapes = {
        "pods as `kubectl get -o json` shows them": [
            realistic.pod(
                f"team-{i % 50}", f"web-{i:05d}", requests={"cpu": "500m"}, phase="Running"
            )
            for i in range(5000)
        ],
        "the generated cluster's compact pods": cluster.pods()[:5000],
    }
    for label, pods in shapes.items():
        size, decoding, typed, parsing = reading(pods)
        print(f"{label} ({size:,} bytes each)")
        print(f"{'  decoding whole (orjson)':<52} {decoding:>10.1f} µs per pod")
        print(f"{'  decoding the fields read (msgspec, RawPod)':<52} {typed:>10.1f} µs per pod")
        print(f"{'  reading into the engine (parse_pod)':<52} {parsing:>10.1f} µs per pod")
    handled, with_recomputes = throughput()
    print(f"{'pod events through the watch path':<52} {handled:>10.0f} events/s   target >= 20,000")
    print(
        f"{'  the same, with a recompute every 10,000 events':<52} {with_recomputes:>10.0f} "
        "events/s"
    )
    idle, busy, changed, groups = asyncio.run(amplification())
    print(f"cluster at rest: {groups} groups, 20,000 pods")
    print(f"{'writes per event that changes nothing':<52} {idle:>10.2f}   target 0")
    print(
        f"{'writes per new pending pod':<52} {busy:>10.2f}   "
        f"target <= values changed ({changed:.2f} groups and pods)"
    )


if __name__ == "__main__":
    main()
