"""Admission throughput of quota-gated scheduling: the real operator process lifts the gates of
5,000 pods across 100 groups, against an emulated API server.

    python -m benchmarks.admission

The operator starts on the groups and nodes; then 5,000 gated pods are created through the API,
as the webhook lets them in. Every group has room for all of its 50 pods, so every pod is
admitted. Prints pods admitted per second (from the first creation to the last gate lifted),
pod writes per admitted pod, and the operator's CPU time per admitted pod: the emulator, one
Python process on the same cores, bounds the rate.
"""

from __future__ import annotations

import asyncio
import resource
import tempfile
import time
from pathlib import Path

from tests.apiserver import ApiServer
from tests.kube import Client
from tests.manifests import node, pod, quota
from tests.operator.conftest import start_operator

GROUPS, PER_GROUP = 100, 50


def groups() -> list[dict]:
    objects: list[dict] = [node(f"n{i}", cpu="1000", memory="4000Gi") for i in range(10)]
    for g in range(GROUPS):
        name = f"team-{g:03}"
        objects.append(quota(name, namespace=name, min={"cpu": PER_GROUP}, max={"cpu": PER_GROUP}))
    return objects


def gated_pods() -> list[dict]:
    return [
        pod(f"p{i:02}", namespace=f"team-{g:03}", node=None, gated=True, cpu="1", priority=i % 7)
        for i in range(PER_GROUP)
        for g in range(GROUPS)
    ]


def gated(api: ApiServer) -> int:
    return sum(1 for p in api.objects("pods") if p["spec"].get("schedulingGates"))


async def main() -> None:
    total = GROUPS * PER_GROUP
    async with ApiServer() as api:
        api.seed(*groups())
        client = Client(api)
        with tempfile.TemporaryDirectory() as scratch:
            operator = await start_operator(Path(scratch), api, "--api-qps", "0")
            try:
                started = time.perf_counter()
                creations = asyncio.Semaphore(32)

                async def create(raw: dict) -> None:
                    async with creations:
                        await client.create(raw)

                await asyncio.gather(*map(create, gated_pods()))
                created = time.perf_counter() - started
                while api.count("patch", "pods") < total:  # cheap: no scan of the objects
                    await asyncio.sleep(0.05)
                elapsed = time.perf_counter() - started
                assert gated(api) == 0
            finally:
                await operator.stop()
                await client.close()
        writes = api.count("patch", "pods")
    print(f"{'gated pods admitted':<40} {total:>10,} in {GROUPS} groups")
    print(f"{'pods admitted per second':<40} {total / elapsed:>10,.0f}   ({elapsed:.2f} s)")
    print(f"{'  of which creating them in the emulator':<40} {created:>10.2f} s")
    print(f"{'pod writes per admitted pod':<40} {writes / total:>10.2f}   target 1")
    # The emulator (one Python process) bounds the rate; what the operator itself spends:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = usage.ru_utime + usage.ru_stime
    print(
        f"{'operator CPU per admitted pod':<40} {cpu / total * 1000:>10.2f} ms (start-up included)"
    )


if __name__ == "__main__":
    asyncio.run(main())
