"""Koordinator itself and the product given the same quota trees and pods on live objects, each
on a control plane of its own (the same binaries), their numbers compared group by group:

    python -m benchmarks.run against-koordinator [--trees 20] [--seed 1] [--dir DIR]

Koordinator's side is koord-scheduler v1.8.0 (koordinator_peer.py) scheduling pods that name it;
the product's is the chart installed by `helm install`, its webhook and operator, and the stock
kube-scheduler. Both planes have the same four kwok nodes (the chart's own Deployments scaled to
nothing, so that no pod of either plane is outside the trees).

For each tree of koordinator_trees.py, on both planes at once: the scheduler (koord-scheduler;
the operator) is stopped, the last tree and its pods are deleted, the new tree and the
borrowers' pods are made, and the scheduler is started again, so that it sees every request at
once and admits by the final runtimes, not by the order pods arrive in. Once both are settled,
each group's `runtime` and `request` annotations and `status.used` are compared. Then the owners'
pods are made, both take back what was lent (Koordinator's revoke, the product's reclaim, each
after the same delay and with no cap on evictions a round), and once settled the numbers are
compared again, with the pods each evicted. Pods of one group, priority and kind are alike, so
the evicted are compared as counts of those. docs/koordinator.md says what differs, and why.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import subprocess
import tempfile
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eq_engine.model import format_resource_list, keys, resource_list

from benchmarks import koordinator_trees as trees
from benchmarks.koordinator_peer import SCHEDULER, KoordScheduler
from benchmarks.real_control_plane import QUOTAS, Api, Unexpected, make_namespaces, together
from scripts.control_plane.build import Built, build
from scripts.control_plane.peers import build_peer
from scripts.control_plane.plane import COMPONENTS, ControlPlane
from tests.control_plane import product
from tests.control_plane.cluster import Cluster

DELAY = 5
"""Seconds a group stays above its runtime before either takes pods back."""
QUIET = 15.0
"""A plane is settled when nothing it shows changed for this long: longer than Koordinator's
10-second refresh of every runtime, and than the delay before evictions."""
SETTLE_TIMEOUT = 120.0
PODS = f"/api/v1/namespaces/{trees.NAMESPACE}/pods"
GROUPS = f"{QUOTAS}/namespaces/{trees.NAMESPACE}/elasticquotas"
PROFILES = f"/apis/quota.koordinator.sh/v1alpha1/namespaces/{trees.NAMESPACE}/elasticquotaprofiles"
FIELDS = ("runtime", "request", "used")

Numbers = dict[str, dict[str, int]]  # a group's runtime, request and used


@dataclass(frozen=True)
class Reading:
    """What a plane shows of a tree."""

    groups: dict[str, Numbers]
    pods: dict[str, bool]  # every pod not being deleted: bound to a node?
    unsettled: dict[str, list[str]] = field(default_factory=dict)
    """The groups whose numbers still changed at SETTLE_TIMEOUT: the values of the last
    minute."""

    def key(self) -> str:
        return json.dumps([self.groups, self.pods], sort_keys=True)


@dataclass
class Side:
    """One system on its plane, with what it takes to stop, start and read it."""

    name: str
    plane: ControlPlane
    api: Api
    stop: Callable[[], Awaitable[None]]
    start: Callable[[], Awaitable[None]]
    scheduler: str = ""  # the pods' schedulerName ("": the default scheduler)
    roots_from_profiles: bool = False
    """Its pool roots are made from ElasticQuotaProfiles (the product's operator), else written
    as Koordinator's profile controller writes them (koord-manager is not run)."""

    async def read(self, tree: trees.Tree) -> Reading:
        listed, _ = await self.api.items(GROUPS)
        names = {g.name for g in tree.groups}
        groups = {
            q["metadata"]["name"]: _numbers(q) for q in listed if q["metadata"]["name"] in names
        }
        pods, _ = await self.api.items(PODS)
        alive = {
            p["metadata"]["name"]: bool(p["spec"].get("nodeName"))
            for p in pods
            if not p["metadata"].get("deletionTimestamp")
        }
        return Reading(groups, alive)

    async def settled(self, tree: trees.Tree) -> Reading:
        """The reading once nothing changed for QUIET seconds; at SETTLE_TIMEOUT, the last, with
        the groups whose numbers kept changing."""
        started = since = time.monotonic()
        history: list[tuple[float, Reading]] = []
        while True:
            reading, at = await self.read(tree), time.monotonic()
            if history and history[-1][1].key() != reading.key():
                since = at
            history = [(t, r) for t, r in history if at - t <= 60.0] + [(at, reading)]
            if at - since >= QUIET:
                return reading
            if at - started > SETTLE_TIMEOUT:
                return dataclasses.replace(reading, unsettled=_changing(history))
            await asyncio.sleep(1.0)

    async def clear(self) -> None:
        """Every pod, group and profile of the namespace gone: leaves first, the roots last."""
        await self._delete_all(PODS, lambda _: 0)
        await self._delete_all(PROFILES, lambda _: 0)
        await self._delete_all(GROUPS, _depth)

    async def _delete_all(self, path: str, rank: Callable[[dict[str, Any]], int]) -> None:
        listed, _ = await self.api.items(path)
        for level in sorted({rank(o) for o in listed}, reverse=True):
            names = [o["metadata"]["name"] for o in listed if rank(o) == level]
            await together(
                self.api.send("DELETE", f"{path}/{n}", {"gracePeriodSeconds": 0}) for n in names
            )
            while {o["metadata"]["name"] for o in (await self.api.items(path))[0]} & set(names):
                await asyncio.sleep(0.2)

    async def create(self, path: str, objects: list[dict[str, Any]]) -> None:
        await together(self.api.send("POST", path, o, want=201) for o in objects)


def _changing(history: list[tuple[float, Reading]]) -> dict[str, list[str]]:
    seen: dict[str, list[str]] = {}
    for _, reading in history:
        for group, numbers in reading.groups.items():
            shown = ", ".join(f"{n} {_show(numbers.get(n))}" for n in FIELDS)
            if shown not in seen.setdefault(group, []):
                seen[group].append(shown)
    return {group: values for group, values in seen.items() if len(values) > 1}


def _depth(quota: dict[str, Any]) -> int:
    """Deeper first: a leaf 2, a parent 1, a pool's root 0."""
    labels = quota["metadata"].get("labels") or {}
    return (
        0
        if labels.get(keys.IS_ROOT) == "true"
        else 1
        if labels.get(keys.IS_PARENT) == "true"
        else 2
    )


def _numbers(quota: dict[str, Any]) -> Numbers:
    annotations = quota["metadata"].get("annotations") or {}
    found = {
        "runtime": annotations.get(keys.RUNTIME),
        "request": annotations.get(keys.REQUEST),
        "used": (quota.get("status") or {}).get("used"),
    }
    # Koordinator writes no annotation while a value is all zeros: missing reads as nothing.
    return {
        name: {r: v for r, v in resource_list(_parsed(raw)).items() if v}
        for name, raw in found.items()
    }


def _parsed(raw: str | dict[str, str] | None) -> dict[str, str]:
    if raw is None:
        return {}
    parsed: dict[str, str] = json.loads(raw) if isinstance(raw, str) else raw
    return parsed


# -- the two planes --------------------------------------------------------------------------


def _plane(home: Path, built: Built, components: tuple[str, ...]) -> ControlPlane:
    plane = ControlPlane(
        home / "plane",
        built,
        nodes=trees.NODES,
        node_capacity=dict(trees.NODE_CAPACITY),
        components=components,
    )
    plane.start(300.0)
    for index in trees.POOL_NODES:
        subprocess.run(
            [
                "kubectl",
                f"--kubeconfig={plane.kubeconfig}",
                "label",
                "node",
                f"kwok-node-{index}",
                f"{trees.POOL_LABEL}=true",
            ],
            check=True,
            capture_output=True,
        )
    return plane


async def _common(api: Api) -> None:
    await make_namespaces(api, [trees.NAMESPACE])
    await together(
        api.send("POST", "/apis/scheduling.k8s.io/v1/priorityclasses", c, want=201)
        for c in trees.priority_classes()
    )


@contextlib.asynccontextmanager
async def koordinator_side(built: Built, home: Path) -> AsyncIterator[Side]:
    """koord-scheduler on a plane of its own (Koordinator's CRDs conflict with the product's)."""
    components = ("etcd", "kube-apiserver", "kube-controller-manager", "kwok")
    plane = await asyncio.to_thread(_plane, home, built, components)
    koord = KoordScheduler(plane, build_peer("koordinator"), DELAY)
    api = Api(plane.client)
    try:
        await asyncio.to_thread(koord.install)
        await _common(api)

        async def start() -> None:
            await asyncio.to_thread(koord.start)

        async def stop() -> None:
            await asyncio.to_thread(koord.stop)

        yield Side("koordinator", plane, api, stop, start, SCHEDULER)
    finally:
        koord.stop()
        await api.close()
        await asyncio.to_thread(plane.stop)


@contextlib.asynccontextmanager
async def product_side(built: Built, home: Path) -> AsyncIterator[Side]:
    """The chart installed as the README says, but with Koordinator's revoke settings: the same
    delay, and no cap on the pods a round takes. Its own Deployments are scaled to nothing: the
    webhook and operator run as processes (tests/control_plane/product.py)."""
    plane = await asyncio.to_thread(_plane, home, built, COMPONENTS)
    api = Api(plane.client)
    try:
        user = Cluster(plane.directory, plane.server, home / "user")
        settings = f"operator.reclaim.delay={DELAY},operator.reclaim.maxEvictions=1000"
        await product.helm_install(user, f"{product.INSTALL} --set {settings}")
        await user.kubectl(f"kubectl scale deployment --all --replicas=0 -n {product.NAMESPACE}")
        await _common(api)
        async with product.product(user, home / "product") as running:
            (operator,) = running.operators

            async def stop() -> None:
                if operator.popen.poll() is None:
                    await operator.stop()

            yield Side(
                "elastic-quota", plane, api, stop, operator.start_again, roots_from_profiles=True
            )
    finally:
        await api.close()
        await asyncio.to_thread(plane.stop)


# -- one tree ----------------------------------------------------------------------------------


@dataclass
class Outcome:
    tree: trees.Tree
    readings: dict[str, list[Reading]] = field(default_factory=dict)  # by side: phase 1, 2

    def evicted(self, side: str) -> Counter[tuple[str, str, bool]]:
        """The borrowers' pods gone between the two readings, as (group, priority, preemptible)."""
        first, second = self.readings[side]
        kinds = {
            name: (s.group, s.priority or "(none)", s.preemptible)
            for s in self.tree.pods
            for name in self.tree.pod_names(s)
        }
        return Counter(kinds[name] for name in set(first.pods) - set(second.pods))

    def compared(self, phase: int) -> list[tuple[str, str, Any, Any]]:
        """(group, field, Koordinator's value, the product's) for every group and field."""
        a, b = (readings[phase] for readings in self.readings.values())
        return [
            (group, name, a.groups.get(group, {}).get(name), b.groups.get(group, {}).get(name))
            for group in sorted(set(a.groups) | set(b.groups))
            for name in FIELDS
        ]

    def differences(self) -> list[str]:
        sides = list(self.readings)
        found = [
            f"{self.tree.id} phase {phase + 1} {group} {name}: "
            f"{sides[0]} {_show(left)}, {sides[1]} {_show(right)}"
            for phase in (0, 1)
            for group, name, left, right in self.compared(phase)
            if left != right
        ]
        for side in sides:
            for phase, reading in enumerate(self.readings[side]):
                for group, values in reading.unsettled.items():
                    found.append(
                        f"{self.tree.id} phase {phase + 1} {group}: {side} still changing "
                        f"after {SETTLE_TIMEOUT:.0f} s: " + " / ".join(values)
                    )
        gone = [self.evicted(s) for s in sides]
        if gone[0] != gone[1]:
            both = ", ".join(f"{s} {_kinds(g)}" for s, g in zip(sides, gone, strict=True))
            found.append(f"{self.tree.id} evicted: {both}")
        return found


def _show(numbers: dict[str, int] | None) -> str:
    return "(none)" if numbers is None else json.dumps(format_resource_list(numbers))


def _kinds(counter: Counter[tuple[str, str, bool]]) -> str:
    if not counter:
        return "none"
    return ", ".join(
        f"{n} of {g} at {p}{'' if pre else ' non-preemptible'}"
        for (g, p, pre), n in sorted(counter.items())
    )


async def play(side: Side, tree: trees.Tree) -> list[Reading]:
    """The tree on one plane: made with its scheduler stopped, then settled once with the
    borrowers' pods and once more with the owners' too."""
    await side.stop()
    await side.clear()
    groups = [trees.quota(tree, g) for g in tree.groups]
    if tree.pool:
        if not side.roots_from_profiles:
            await side.create(GROUPS, [trees.pool_root(tree)])
        else:
            await side.create(PROFILES, [trees.profile(tree)])
            await side.start()
            await _exists(side.api, f"{GROUPS}/{tree.root}")
            await side.stop()
    for depth in (1, 2):
        await side.create(GROUPS, [g for g in groups if _depth(g) == depth])
    await side.create(PODS, trees.pods(tree, 1, side.scheduler))
    await side.start()
    first = await side.settled(tree)
    await side.create(PODS, trees.pods(tree, 2, side.scheduler))
    second = await side.settled(tree)
    return [first, second]


async def _exists(api: Api, path: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            await api.send("GET", path)
            return
        except Unexpected as answer:
            if answer.status != 404 or time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.2)


# -- the command -----------------------------------------------------------------------------


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.run against-koordinator")
    parser.add_argument("--trees", type=int, default=20, help="how many trees (default 20)")
    parser.add_argument("--seed", type=int, default=1, help="the trees' seed (default 1)")
    parser.add_argument("--first", type=int, default=0, help="the first tree's index")
    parser.add_argument("--dir", help="keep the planes' files here (default: removed)")
    arguments = parser.parse_args(argv)
    asyncio.run(compare(arguments))


async def compare(arguments: argparse.Namespace) -> None:
    built = build()
    with tempfile.TemporaryDirectory(prefix="eq-against-koordinator-") as scratch:
        home = Path(arguments.dir or scratch)
        async with (
            koordinator_side(built, home / "koordinator") as koordinator,
            product_side(built, home / "elastic-quota") as ours,
        ):
            outcomes = []
            for index in range(arguments.first, arguments.first + arguments.trees):
                tree = trees.tree(index, arguments.seed)
                print(tree.describe(), flush=True)
                outcome = Outcome(tree)
                played = await asyncio.gather(play(koordinator, tree), play(ours, tree))
                outcome.readings = {koordinator.name: played[0], ours.name: played[1]}
                outcomes.append(outcome)
                for line in outcome.differences() or [f"{tree.id}: the same"]:
                    print("  " + line, flush=True)
            print(summary(outcomes))
            if arguments.dir:
                (home / "readings.json").write_text(json.dumps(_dump(outcomes), indent=1))


def _dump(outcomes: list[Outcome]) -> dict[str, Any]:
    return {
        o.tree.id: {side: [dataclasses.asdict(r) for r in rs] for side, rs in o.readings.items()}
        for o in outcomes
    }


def summary(outcomes: list[Outcome]) -> str:
    rows = []
    for outcome in outcomes:
        sides = list(outcome.readings)
        cells = []
        for phase in (0, 1):
            compared = outcome.compared(phase)
            for name in FIELDS:
                values = [(left, right) for _, field_, left, right in compared if field_ == name]
                cells.append(f"{sum(left == right for left, right in values)}/{len(values)}")
        bound = [
            " / ".join(str(sum(outcome.readings[s][phase].pods.values())) for s in sides)
            for phase in (0, 1)
        ]
        evicted = " / ".join(str(sum(outcome.evicted(s).values())) for s in sides)
        rows.append([outcome.tree.id, *cells, *bound, evicted])
    header = [
        "tree",
        *(f"{f} {p}" for p in ("1", "2") for f in FIELDS),
        *(f"bound {p} K / EQ" for p in ("1", "2")),
        "evicted K / EQ",
    ]
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    return "\n".join(
        "  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True))
        for row in [header, *rows]
    )
