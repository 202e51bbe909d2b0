"""Admission throughput of quota-gated scheduling: the real operator process lifts the gates of
5,000 pods across 100 groups, against an emulated API server.

    python -m benchmarks.admission [--runs 3]

The operator starts on the groups and nodes; then 5,000 gated pods are created through the API,
as the webhook lets them in. Every group has room for all of its 50 pods, so every pod is
admitted. Prints pods admitted per second (from the first creation to the last gate lifted),
the seconds from the last creation to the last gate lifted, pod writes and Events (a waiting
pod's `WaitingForQuota`) per admitted pod, and the operator's CPU time per admitted pod: the
emulator, one Python process on the same cores, bounds the rate. With `--runs`, each figure's
range over the runs. `benchmarks/gangs.py` runs the same measure (`admit`) on pod groups.
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.preparing import prepare
from tests.apiserver import ApiServer
from tests.kube import Client
from tests.manifests import node, pod, quota
from tests.operator.conftest import start_operator

GROUPS, PER_GROUP = 100, 50
CONCURRENT_CREATIONS = 32
"""Creations in flight at once: a Job controller's burst, not a queue of round trips."""


def groups(per_group: int = PER_GROUP, nodes: int = 10) -> list[dict[str, Any]]:
    """`nodes` nodes of 1,000 CPUs and `GROUPS` groups guaranteed `per_group` CPUs each."""
    objects: list[dict[str, Any]] = [
        node(f"n{i}", cpu="1000", memory="4000Gi") for i in range(nodes)
    ]
    for g in range(GROUPS):
        name = f"team-{g:03}"
        objects.append(quota(name, namespace=name, min={"cpu": per_group}, max={"cpu": per_group}))
    return objects


def gated_pods() -> list[dict[str, Any]]:
    return [
        pod(f"p{i:02}", namespace=f"team-{g:03}", node=None, gated=True, cpu="1", priority=i % 7)
        for i in range(PER_GROUP)
        for g in range(GROUPS)
    ]


def gated(api: ApiServer) -> int:
    return sum(1 for p in api.objects("pods") if p["spec"].get("schedulingGates"))


@dataclass(frozen=True, slots=True)
class Run:
    """One run: every pod created, then every gate lifted by the operator."""

    pods: int
    elapsed: float
    """Seconds from the first creation to the last gate lifted."""
    created: float
    """Seconds from the first creation to the last."""
    writes: int
    """Pod writes (PATCHes) the operator sent."""
    events: int
    """Events it created (a waiting pod's `WaitingForQuota`, once)."""
    cpu: float
    """The operator process's CPU seconds, its start-up included."""

    @property
    def rate(self) -> float:
        return self.pods / self.elapsed

    @property
    def tail(self) -> float:
        """Seconds from the last creation to the last gate lifted."""
        return self.elapsed - self.created


async def admit(objects: Sequence[dict[str, Any]], pods: Sequence[dict[str, Any]]) -> Run:
    """Start the operator on `objects` (rate limit off), create `pods` (all gated) through the
    API, `CONCURRENT_CREATIONS` at a time in their order, and wait until every gate is lifted."""
    total = len(pods)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    async with ApiServer() as api:
        api.seed(*objects)
        client = Client(api)
        with tempfile.TemporaryDirectory() as scratch:
            operator = await start_operator(Path(scratch), api, "--api-qps", "0")
            try:
                started = time.perf_counter()
                creations = asyncio.Semaphore(CONCURRENT_CREATIONS)

                async def create(raw: dict[str, Any]) -> None:
                    async with creations:
                        await client.create(raw)

                await asyncio.gather(*map(create, pods))
                created = time.perf_counter() - started
                while api.count("patch", "pods") < total:  # cheap: no scan of the objects
                    await asyncio.sleep(0.05)
                elapsed = time.perf_counter() - started
                assert gated(api) == 0
            finally:
                await operator.stop()
                await client.close()
        writes, events = api.count("patch", "pods"), api.count("create", "events")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return Run(total, elapsed, created, writes, events, cpu)


def span(values: Sequence[float], form: str) -> str:
    """`low-high` of the runs' values (one value alone when there is one run)."""
    low, high = format(min(values), form), format(max(values), form)
    return low if low == high else f"{low}-{high}"


def report(runs: Sequence[Run], what: str) -> None:
    """Each figure of the runs, as a range when there are several."""
    total, many = runs[0].pods, f" ({len(runs)} runs)" if len(runs) > 1 else ""
    print(f"{what + ' admitted':<40} {total:>14,} in {GROUPS} groups{many}")

    def row(label: str, values: list[float], form: str, after: str) -> None:
        print(f"{label:<40} {span(values, form):>14} {after}")

    elapsed = span([r.elapsed for r in runs], ".2f")
    row("pods admitted per second", [r.rate for r in runs], ",.0f", f"  ({elapsed} s)")
    row("  of which creating them in the emulator", [r.created for r in runs], ".2f", "s")
    row("  last gate lifted after last creation", [r.tail for r in runs], ".2f", "s")
    row("pod writes per admitted pod", [r.writes / r.pods for r in runs], ".2f", "  target 1")
    row("Events per admitted pod", [r.events / r.pods for r in runs], ".2f", "  (pods waiting)")
    # The emulator (one Python process) bounds the rate; what the operator itself spends:
    cpu = [r.cpu / r.pods * 1000 for r in runs]
    row("operator CPU per admitted pod", cpu, ".2f", "ms (start-up included)")


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1, help="runs, each with a new operator")
    return parser.parse_args()


async def main() -> None:
    prepare()
    runs = [await admit(groups(), gated_pods()) for _ in range(arguments().runs)]
    report(runs, "gated pods")


if __name__ == "__main__":
    asyncio.run(main())
