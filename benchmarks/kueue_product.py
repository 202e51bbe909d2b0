"""The product running Kueue's benchmark config on the real control plane (scripts/control_plane):
kwok nodes holding exactly the queues' nominal CPUs, the chart installed by `helm install`, the
webhook and the operator as processes with their ServiceAccounts' tokens (as the end-to-end tests
run them), a parent ElasticQuota per cohort and a group per queue (kueue_shape.py), a
PriorityClass per workload class, and the workloads as pods made at the config's pace.

The benchmark plays Kueue's runner: a workload is admitted when the operator lifts its pod's
gate (the clock Kueue's figures use) and finished its running time later, when the benchmark
deletes the pod; bound to a node is the second clock. A pod that reclaim or preemption takes is
made again at once, as Kueue puts an evicted Workload back in its queue, and the workload's
admission is its last one (Kueue's recorder keeps the last too).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eq_engine.model import keys, queues

from benchmarks.kueue_shape import Figures, Queue, Shape, WorkloadClass
from benchmarks.plane_api import (
    QUOTAS,
    Api,
    Unexpected,
    make_namespaces,
    pid,
    pod,
    together,
)
from benchmarks.scale import cpu_times, rss_mib
from scripts.control_plane.build import Built
from scripts.control_plane.plane import ControlPlane
from tests.control_plane import product
from tests.control_plane.cluster import Cluster

LABEL = "benchmarks.elastic-quota/kueue-shape"
NODES = 10
PARENTS = "kueue-cohorts"
"""The namespace of the cohorts' parent groups (no pod runs there)."""


@dataclass
class Workload:
    index: int
    queue: Queue
    kind: WorkloadClass
    created: float = 0.0
    pod: str = ""
    admitted: float | None = None
    scheduled: float | None = None
    finishing: bool = False
    evictions: int = 0


@dataclass
class Usage:
    """A queue's admitted CPUs over time: their integral, in CPU seconds."""

    cpus: int = 0
    since: float = 0.0
    integral: float = 0.0

    def change(self, cpus: int, at: float) -> None:
        self.integral += self.cpus * (at - self.since)
        self.cpus, self.since = self.cpus + cpus, at


@dataclass
class Run:
    api: Api
    shape: Shape
    workloads: dict[str, Workload] = field(default_factory=dict)
    """By pod name."""
    usage: dict[str, Usage] = field(default_factory=dict)
    finished: int = 0
    first: float = 0.0
    last: float = 0.0
    done: asyncio.Event = field(default_factory=asyncio.Event)
    tasks: set[asyncio.Task[None]] = field(default_factory=set)

    def handle(self, kind: str, pod: dict[str, Any]) -> None:
        workload = self.workloads.get(pod["metadata"]["name"])
        if workload is None or workload.pod != pod["metadata"]["name"]:
            return
        now = time.time()
        gates = {g["name"] for g in pod["spec"].get("schedulingGates") or []}
        if workload.admitted is None and keys.ADMISSION_GATE not in gates and kind != "DELETED":
            workload.admitted = now
            self.usage[workload.queue.name].change(workload.kind.request, now)
            self._later(workload.kind.runtime_ms / 1000, self._finish(workload, workload.pod))
        if workload.scheduled is None and pod["spec"].get("nodeName"):
            workload.scheduled = now
        if kind == "DELETED" and workload.finishing:  # finished, as the runner sees it
            self.usage[workload.queue.name].change(-workload.kind.request, now)
            self.finished += 1
            self.last = max(self.last, now)
            if self.finished == self.shape.workloads:
                self.done.set()
            return
        taken = kind == "DELETED" or pod["metadata"].get("deletionTimestamp")
        if taken and not workload.finishing:
            workload.evictions += 1
            if workload.admitted is not None:
                self.usage[workload.queue.name].change(-workload.kind.request, now)
            workload.admitted = workload.scheduled = None
            self._later(0, self._create(workload))  # under its new name from now on

    def _later(self, seconds: float, call: Awaitable[object]) -> None:
        async def run() -> None:
            await asyncio.sleep(seconds)
            await call

        task = asyncio.create_task(run())
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    def _create(self, workload: Workload) -> Awaitable[dict[str, Any]]:
        """The workload's pod created (again, after an eviction): named at once, so that the
        events of the pod it replaces are no longer its own."""
        workload.pod = f"{workload.kind.name}-{workload.index}-{workload.evictions}"
        self.workloads[workload.pod] = workload
        return self.api.send(
            "POST", f"/api/v1/namespaces/{workload.queue.name}/pods", _pod(workload), want=201
        )

    async def _finish(self, workload: Workload, pod: str) -> None:
        """`pod` done its running time: deleted, unless it was taken meanwhile. It holds its
        CPUs until the watch shows it gone, as Kueue's runner sees a Workload finished."""
        if workload.pod != pod:
            return
        workload.finishing = True
        path = f"/api/v1/namespaces/{workload.queue.name}/pods/{workload.pod}"
        try:
            await self.api.send("DELETE", path, {"gracePeriodSeconds": 0})
        except Unexpected as answer:
            if answer.status != 404:
                raise
            workload.finishing = False  # evicted just before: its DELETED event is an eviction

    async def report_progress(self, every: float = 15.0) -> None:
        while True:
            await asyncio.sleep(every)
            admitted = sum(1 for w in self.workloads.values() if w.admitted is not None)
            admitted -= self.finished
            print(
                f"  {time.time() - self.first:5.0f} s: {len(self.workloads):,} pods made, "
                f"{admitted:,} admitted and running, {self.finished:,} of {self.shape.workloads:,} "
                "finished",
                flush=True,
            )

    async def generate(self) -> None:
        """Every queue's workload sets, each making a workload every `interval_ms`."""
        self.first = time.time()
        for queue in self.shape.queues:
            self.usage[queue.name] = Usage(since=self.first)
        counter = iter(range(self.shape.workloads))

        async def one_set(queue: Queue, index: int) -> None:
            made = queue.sets[index]
            for _ in range(made.count):
                await asyncio.sleep(made.interval_ms / 1000)
                for kind in made.classes:
                    workload = Workload(next(counter), queue, kind, created=time.time())
                    await self._create(workload)

        await asyncio.gather(
            *(one_set(q, i) for q in self.shape.queues for i in range(len(q.sets)))
        )

    def figures(self, cpu: dict[str, float], peak: dict[str, float], notes: list[str]) -> Figures:
        every = {id(w): w for w in self.workloads.values()}.values()
        admission: dict[str, list[float]] = {c.name: [] for c in self.shape.classes}
        scheduled: dict[str, list[float]] = {c.name: [] for c in self.shape.classes}
        evictions = dict.fromkeys(admission, 0)
        for w in every:
            admission[w.kind.name].append((w.admitted or self.last) - w.created)
            if w.scheduled is not None:
                scheduled[w.kind.name].append(w.scheduled - w.created)
            evictions[w.kind.name] += w.evictions
        span = self.last - self.first
        usage = [self.usage[q.name].integral / (q.nominal * span) for q in self.shape.queues]
        return Figures(
            "elastic-quota",
            span,
            admission,
            evictions,
            usage,
            cpu,
            peak,
            scheduled=scheduled,
            notes=notes,
        )


def _pod(workload: Workload) -> dict[str, Any]:
    return pod(
        workload.pod,
        workload.queue.name,
        requests={"cpu": str(workload.kind.request)},
        spec={
            "priorityClassName": f"kueue-{workload.kind.name}",
            "terminationGracePeriodSeconds": 0,
        },
        labels={LABEL: workload.kind.name},
    )


def _group(
    name: str, namespace: str, minimum: int, maximum: int, parent: str = "", policy: str = ""
) -> Any:
    """A cohort's parent group, or a queue's group under `parent`, its queue policy `policy`
    (koord-queue's; empty: the gate's default)."""
    labels = {keys.PARENT: parent} if parent else {keys.IS_PARENT: "true"}
    if policy:
        labels[queues.POLICY] = policy
    return {
        "apiVersion": "scheduling.sigs.k8s.io/v1alpha1",
        "kind": "ElasticQuota",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": {"min": {"cpu": str(minimum)}, "max": {"cpu": str(maximum)}},
    }


async def _objects(api: Api, shape: Shape, policy: str) -> None:
    """The namespaces, the PriorityClasses and the tree."""
    await make_namespaces(api, [PARENTS, *(q.name for q in shape.queues)])
    await together(
        api.send(
            "POST",
            "/apis/scheduling.k8s.io/v1/priorityclasses",
            {"metadata": {"name": f"kueue-{c.name}"}, "value": c.priority},
            want=201,
        )
        for c in shape.classes
    )
    for cohort, members in shape.cohorts.items():
        nominal = sum(q.nominal for q in members)
        parent = _group(cohort, PARENTS, nominal, nominal)
        await api.send("POST", f"{QUOTAS}/namespaces/{PARENTS}/elasticquotas", parent, want=201)
    await together(
        api.send(
            "POST",
            f"{QUOTAS}/namespaces/{q.name}/elasticquotas",
            _group(q.name, q.name, q.nominal, q.nominal + q.borrowing_limit, q.cohort, policy),
            want=201,
        )
        for q in shape.queues
    )


async def run_product(
    built: Built, shape: Shape, home: Path, overrides: dict[str, str], policy: str = ""
) -> Figures:
    """The product's run of `shape` on a control plane of its own; `overrides`: the
    operator's environment besides the chart's (its flags, as ELASTIC_QUOTA_...); `policy`:
    the queues' koord-queue policy (empty: the gate's default, Block)."""
    # The queues' nominal CPUs, and one CPU a node for the chart's own pods (their requests
    # count in the system group, whose use the root's total leaves out).
    nominal = sum(q.nominal for q in shape.queues)
    capacity = {"cpu": str(nominal // NODES + 1), "memory": "1Ti", "pods": "5000"}
    plane = ControlPlane(home / "plane", built, nodes=NODES, node_capacity=capacity)
    plane.start(900.0)
    api = Api(plane.client)
    try:
        user = Cluster(plane.directory, plane.server, home / "user")
        await product.helm_install(user, product.INSTALL)
        async with product.product(user, home / "product") as running:
            await running.operators[0].stop()  # it made the built-in groups; then, measured:
            await _objects(api, shape, policy)
            identity = "operator-measured"
            operator = await product._start(user, "operator", running.tmp, overrides, identity)
            running.operators.append(operator)
            pids = {
                "operator": operator.popen.pid,
                "webhook": running.webhook.popen.pid,
                **{name: pid(plane, name) for name in ("kube-apiserver", "etcd", "kube-scheduler")},
            }
            before = {name: sum(cpu_times(p)) for name, p in pids.items()}
            run = Run(api, shape)
            path = f"/api/v1/pods?labelSelector={LABEL}"
            async with contextlib.aclosing(api.follow(path, run.handle)) as following:
                await anext(following)
                progress = asyncio.create_task(run.report_progress())
                await run.generate()
                await run.done.wait()
                progress.cancel()
            cpu = {name: sum(cpu_times(p)) - before[name] for name, p in pids.items()}
            peak = {name: rss_mib(p, "VmHWM") for name, p in pids.items()}
            flags = " ".join(f"{k}={v}" for k, v in overrides.items()) or "the chart's defaults"
            order = f"koord-queue/queue-policy {policy}" if policy else "the gate's Block order"
            return run.figures(cpu, peak, [f"operator at {flags}; queues in {order}"])
    finally:
        await api.close()
        plane.stop()
