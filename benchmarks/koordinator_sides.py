"""The two systems of against_koordinator.py, each on a control plane of its own, as `Side`s
that the comparison stops, starts, clears and reads alike: koord-scheduler v1.8.0 on a plane
with Koordinator's CRDs (they conflict with the product's), and the product as the chart
installs it, its own Deployments scaled to nothing (its webhook and operator run as processes,
tests/control_plane/product.py). Both planes have the same four kwok nodes, two of them a pool.

A reading is each tree group's `runtime` and `request` annotations and `status.used`, and
which pods are bound; a plane is settled once nothing it shows changed for QUIET seconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import subprocess
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eq_engine.model import format_resource_list, keys, resource_list

from benchmarks import koordinator_trees as trees
from benchmarks.koordinator_peer import SCHEDULER, KoordScheduler
from benchmarks.plane_api import QUOTAS, Api, make_namespaces, together
from scripts.control_plane.build import Built
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
        await self._delete_all(GROUPS, depth)

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
            shown = ", ".join(f"{n} {shown(numbers.get(n))}" for n in FIELDS)
            if shown not in seen.setdefault(group, []):
                seen[group].append(shown)
    return {group: values for group, values in seen.items() if len(values) > 1}


def depth(quota: dict[str, Any]) -> int:
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


def shown(numbers: dict[str, int] | None) -> str:
    return "(none)" if numbers is None else json.dumps(format_resource_list(numbers))
