"""Operator benchmarks: event throughput into the engine, and write amplification.

    python benchmarks/operator.py

1. 100,000 pod events (adds, modifications, deletions) through the operator's handler path
   (what its Kopf handlers call) into the engine, with a batched recompute every 10,000
   events (a 0.5 s batch at 20,000 events/s): events per second.
2. A 1,000-group, 20,000-pod cluster at rest: the writes one pod event causes (the writer's API
   calls are counted instead of sent, and fed back as the watch would show them).
"""

from __future__ import annotations

import asyncio
import copy
import random
import statistics
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path[:0] = [str(REPO / d) for d in ("engine", "operator")] + [str(HERE)]

import cluster  # noqa: E402
from eq_engine import EngineConfig, QuotaEngine  # noqa: E402
from eq_kit.caching import key_of  # noqa: E402
from eq_kit.throttling import TokenBucket  # noqa: E402
from eq_operator.admitting import Admitter  # noqa: E402
from eq_operator.metrics import Metrics  # noqa: E402
from eq_operator.operating import Loop  # noqa: E402
from eq_operator.reclaiming import Reclaimer  # noqa: E402
from eq_operator.settings import OperatorSettings, ReclaimSettings  # noqa: E402
from eq_operator.view import ClusterView  # noqa: E402
from eq_operator.writing import Writer  # noqa: E402

BATCH = 10_000
"""Events per recompute: the operator's 0.5 s batch interval at 20,000 events/s."""


def throughput(events: int = 100_000) -> tuple[float, float]:
    """Events per second through the handlers into the engine: without, then with, the
    batched recomputes."""
    view = ClusterView(QuotaEngine(EngineConfig()))
    for raw in cluster.quotas():
        view.observe_quota(raw)
    for raw in cluster.nodes():
        view.observe_node(raw)
    pods = cluster.pods()
    rng = random.Random(3)
    scheduled = []  # modifications are prepared beforehand: only the handler path is timed
    for body in rng.sample(pods, 20_000):
        changed = copy.deepcopy(body)
        changed["spec"]["nodeName"] = f"node-{rng.randrange(1500):04d}"
        changed["status"]["phase"] = "Running"
        scheduled.append(changed)
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


class CountingAPI:
    """Stands in for the API server's patch calls: counts them and feeds them back."""

    def __init__(self, view: ClusterView, bodies: dict[str, dict[str, Any]]) -> None:
        self.view, self.bodies, self.calls = view, bodies, 0

    async def patch_namespaced_custom_object(
        self,
        group: str,
        version: str,
        namespace: str,
        plural: str,
        name: str,
        patch: dict[str, Any],
        **_: Any,
    ) -> None:
        self.calls += 1
        body = self.bodies[name]
        annotations = body["metadata"].setdefault("annotations", {})
        for key, value in (patch["metadata"]["annotations"] if "metadata" in patch else {}).items():
            if value is None:  # a merge patch's null removes the key
                annotations.pop(key, None)
            else:
                annotations[key] = value
        if "status" in patch:
            body["status"] = patch["status"]
        self.view.observe_quota(body)

    patch_namespaced_custom_object_status = patch_namespaced_custom_object

    async def patch_namespaced_pod(
        self, name: str, namespace: str, patch: dict[str, Any], **_: Any
    ) -> None:
        self.calls += 1
        body = self.bodies[f"{namespace}/{name}"]
        body["metadata"].setdefault("labels", {}).update(patch["metadata"]["labels"])
        self.view.observe_pod(body)


async def amplification(samples: int = 200) -> tuple[float, float, float, int]:
    """Mean writes per event that changes nothing, per new pending pod, and the mean number
    of groups and pods whose values that pod changed."""
    shape = {"departments": 10, "teams": 10, "subteams": 10}  # 1,110 groups
    view = ClusterView(QuotaEngine(EngineConfig()))
    bodies: dict[str, dict[str, Any]] = {}
    for raw in cluster.quotas(**shape):
        bodies[raw["metadata"]["name"]] = raw
        view.observe_quota(raw)
    for raw in cluster.nodes()[:150]:
        view.observe_node(raw)
    for raw in cluster.pods(per_subteam=20, **shape):
        key = f"{raw['metadata']['namespace']}/{raw['metadata']['name']}"
        bodies[key] = raw
        view.observe_pod(raw)
    view.synced = True
    api = CountingAPI(view, bodies)
    # The real writer, with counted instead of sent calls.
    writer = Writer(None, view, Metrics(), limiter=TokenBucket(0, 1), workers=1)  # type: ignore[arg-type]
    writer._custom, writer._core = api, api
    reclaimer = Reclaimer(view, None, None, ReclaimSettings(), Metrics())  # type: ignore[arg-type]
    admitter = Admitter(view, writer, None, Metrics())  # type: ignore[arg-type]
    loop = Loop(
        view,
        writer,
        admitter,
        reclaimer,
        None,
        Metrics(),
        OperatorSettings(),
        ready=SimpleNamespace(ready=True),
    )  # type: ignore[arg-type]
    loop.leading_changed(True)
    while view.dirty or view.touched_pods or view.touched_quotas:
        await loop.step()  # converge; our own writes come back as watch events
    rng = random.Random(5)
    pod_keys = [k for k in bodies if "/" in k]
    leaves = sorted(n for n in bodies if "-sub-" in n and "/" not in n)
    idle, busy, changed = [], [], []
    for i in range(samples):
        api.calls = 0
        view.observe_pod(bodies[rng.choice(pod_keys)])  # e.g. only a status condition moved
        await loop.step()
        idle.append(api.calls)
        leaf = rng.choice(leaves)
        new = cluster.pod(rng, leaf, 900 + i, 1.0, scheduled=False)
        bodies[f"{leaf}/{new['metadata']['name']}"] = new
        api.calls = 0
        view.observe_pod(new)
        changes = view.engine.recompute()
        view.dirty = True  # the loop recomputes again: nothing new, it reuses the sets below
        loop._groups.update(s.name for s in changes.groups)
        loop._pods.update(changes.pod_labels)
        await loop.step()
        busy.append(api.calls)
        changed.append(len(changes.groups) + len(changes.pod_labels))
        while view.dirty or view.touched_pods or view.touched_quotas:
            await loop.step()
    return (
        statistics.mean(idle),
        statistics.mean(busy),
        statistics.mean(changed),
        len([n for n in bodies if "/" not in n]),
    )


def main() -> None:
    handled, with_recomputes = throughput()
    print(
        f"{'pod events through the handler path':<52} {handled:>10.0f} events/s   target >= 20,000"
    )
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
