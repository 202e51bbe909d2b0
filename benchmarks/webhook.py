"""Admission latency and throughput of `elastic-quota webhook` with a 10,000-group tree loaded.

    python -m benchmarks.webhook

The real webhook process, over TLS on loopback, against an emulated API server holding the
generated organisation of `cluster.py` (11,010 groups, 1,500 nodes). Prints p50 and p99 of
5,000 sequential reviews and the throughput of 50 concurrent clients.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks import cluster
from benchmarks.preparing import prepare
from tests.apiserver import ApiServer
from tests.webhook.conftest import Certificates, review, start_webhook, stop_webhook

SEQUENTIAL, CONCURRENT_CLIENTS, PER_CLIENT = 5000, 50, 100


def reviews(count: int) -> list[dict[str, Any]]:
    """A mix a cluster sends: new sub-teams (fitting or not), min changes, deletions."""
    bodies = []
    for i in range(count):
        team = f"dept-{i % 10}-team-{i % 100}"
        name = f"{team}-new-{i}"
        minimum = {
            "cpu": "1" if i % 3 else "500",
            "memory": "1Gi",
            "nvidia.com/gpu": "0",
            "pods": "4",
        }
        new = {
            "apiVersion": "scheduling.sigs.k8s.io/v1alpha1",
            "kind": "ElasticQuota",
            "metadata": {
                "name": name,
                "namespace": name,
                "labels": {"quota.scheduling.koordinator.sh/parent": team},
            },
            "spec": {
                "min": minimum,
                "max": {"cpu": "24", "memory": "96Gi", "nvidia.com/gpu": "3", "pods": "96"},
            },
        }
        bodies.append(review("CREATE", new=new, uid=f"u{i}"))
    return bodies


async def main() -> None:
    prepare()
    async with ApiServer() as api:
        api.seed(*cluster.quotas(), *cluster.nodes())
        with tempfile.TemporaryDirectory() as tmp:
            certificates = Certificates.issue(Path(tmp))
            hook = await start_webhook(
                Path(tmp), str(api.url), certificates, "--log-level", "warning", wait=120
            )
            try:
                await hook.review(reviews(1)[0])  # the first review builds the catalog
                latencies = []
                for body in reviews(SEQUENTIAL):
                    start = time.perf_counter()
                    await hook.review(body)
                    latencies.append(time.perf_counter() - start)
                bodies = reviews(CONCURRENT_CLIENTS * PER_CLIENT)

                async def client(k: int) -> None:
                    for body in bodies[k::CONCURRENT_CLIENTS]:
                        await hook.review(body)

                start = time.perf_counter()
                await asyncio.gather(*(client(k) for k in range(CONCURRENT_CLIENTS)))
                elapsed = time.perf_counter() - start
            finally:
                await stop_webhook(hook)
    groups = len(cluster.quotas())
    quantiles = statistics.quantiles(latencies, n=100)
    print(f"tree: {groups} groups; {SEQUENTIAL} sequential reviews over TLS on loopback")
    print(f"{'p50 latency':<44} {statistics.median(latencies) * 1e3:>8.2f} ms")
    print(f"{'p99 latency':<44} {quantiles[98] * 1e3:>8.2f} ms   target <= 10 ms")
    print(f"{'throughput, 50 concurrent clients':<44} {len(bodies) / elapsed:>8.0f} reviews/s")


if __name__ == "__main__":
    asyncio.run(main())
