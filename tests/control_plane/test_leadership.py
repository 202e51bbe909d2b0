"""Two operator replicas and their Lease on the real control plane: one leads and writes, the
other watches and writes nothing; the leader killed (SIGKILL, as a node failure ends it: the
Lease is not given up), the other takes over once the Lease has gone unrenewed for its duration
and carries on, lifting the gates of pods that waited meanwhile; a leader stopped cleanly gives
the Lease up, and a stand-by takes over at once.

The chart as installed (leaseDuration 15 s, client-go's proportions: renewals every 2 s), each
replica a process with a token of its own, so that the API server's audit log says which
replica made each request (`Process.credential`); the Lease is coordination.k8s.io's, kept by
the real API server with its optimistic locking.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from scripts.control_plane.build import Built
from scripts.control_plane.plane import ControlPlane
from tests.control_plane.cluster import Cluster, refused_to_the_product
from tests.control_plane.product import (
    NAMESPACE,
    Process,
    Request,
    installed,
    moment,
    product_requests,
)
from tests.control_plane.test_gating import ACT, Team, pod, team
from tests.control_plane.test_quickstart import RealKubectl
from tests.waiting import eventually

LEASE = f"/apis/coordination.k8s.io/v1/namespaces/{NAMESPACE}/leases/elastic-quota-operator"
DURATION, RETRY = 15.0, 2.0
"""The chart's leaseDuration, and the renewal period client-go's proportions give it."""
READS = {"get", "list", "watch"}


def lease(cluster: Cluster) -> dict[str, Any]:
    spec: dict[str, Any] = cluster.get(LEASE)["spec"]
    return spec


class Replicas:
    """What the audit log says each replica did."""

    def __init__(self, plane: ControlPlane) -> None:
        self.plane = plane

    def of(self, replica: Process) -> list[Request]:
        return [
            r for r in product_requests(self.plane.audit_log) if r.credential == replica.credential
        ]

    def writes(self, replica: Process, *, before: float = float("inf")) -> list[Request]:
        """Its requests that were not reads (received before `before`)."""
        return [r for r in self.of(replica) if r.verb not in READS and r.at < before]

    def admitted_by(self, replica: Process, team: Team, name: str) -> list[float]:
        """When `replica` wrote the pod (its gate lifted, its capacity label)."""
        return [
            r.at
            for r in self.of(replica)
            if r.grant == ("", "pods", "patch") and (r.namespace, r.name) == (team.namespace, name)
        ]


async def leads(cluster: Cluster, replica: Process, *, timeout: float) -> dict[str, Any]:
    """The Lease once `replica` holds it, and its own metric says so."""
    await eventually(
        lambda: lease(cluster).get("holderIdentity") == replica.name,
        timeout=timeout,
        what=f"{replica.name} holding the Lease",
        explain=lambda: lease(cluster),
    )
    page = await replica.metrics()
    assert f'elastic_quota_leader{{pod="{replica.name}"}} 1.0' in page
    return lease(cluster)


async def test_a_stand_by_takes_over_from_a_killed_leader_on_the_real_control_plane(
    built: Built, tmp_path: Path
) -> None:
    async with installed(built, tmp_path, operators=2) as (plane, cluster, started):
        first, second = started.operators
        replicas = Replicas(plane)
        kubectl = RealKubectl(cluster)
        held = await leads(cluster, first, timeout=ACT)
        assert held["leaseDurationSeconds"] == DURATION
        assert f'elastic_quota_leader{{pod="{second.name}"}} 0.0' in await second.metrics()
        apps = await team(cluster, kubectl, "apps", cpu="4")
        await apps.apply(pod("a0", "1"))
        await apps.run(["a0"])
        assert replicas.admitted_by(first, apps, "a0")
        # The stand-by watches and computes (a0 counts in its group's request), and writes nothing.
        request = (
            f'elastic_quota_group_request{{group="{apps.name}",namespace="{apps.namespace}",'
            f'parent="koordinator-root-quota",resource="cpu",tree=""}} 1000.0'
        )

        async def computed() -> bool:
            return request in await second.metrics()

        await eventually(computed, timeout=ACT, what="the stand-by counting a0")
        assert replicas.writes(second) == []

        # The leader dies: nothing gives the Lease up, and a pod made meanwhile waits.
        await first.kill()
        last_renewal = moment(lease(cluster)["renewTime"])
        killed = time.time()
        await apps.apply(pod("a1", "1"))
        took = await leads(cluster, second, timeout=DURATION + 15)
        taken = moment(took["acquireTime"])
        print(f"\ntaken over {taken - killed:.1f} s after the kill, ", end="")
        print(f"{taken - last_renewal:.1f} s after the last renewal")
        # Never while the Lease was live; within a renewal period or two of its expiry.
        assert DURATION <= taken - last_renewal <= DURATION + 3 * RETRY, took
        assert took["leaseTransitions"] == held.get("leaseTransitions", 0) + 1
        await apps.run(["a0", "a1"])
        lifts = replicas.admitted_by(second, apps, "a1")
        assert lifts and min(lifts) >= taken, (lifts, taken)  # a1 waited for the new leader
        assert replicas.admitted_by(first, apps, "a1") == []

        # A new replica stands by; the leader stopped cleanly gives the Lease up at once.
        third = await started.start_operator("operator-2")
        await second.stop()
        stopped = time.time()
        took = await leads(cluster, third, timeout=DURATION)
        taken = moment(took["acquireTime"])
        print(f"taken over {taken - stopped:.1f} s after the clean stop")
        assert taken - stopped < DURATION / 2, took  # not waiting out the Lease's expiry
        assert replicas.writes(third, before=taken) == []
        await apps.apply(pod("a2", "1"))
        await apps.run(["a0", "a1", "a2"])
        assert replicas.admitted_by(third, apps, "a2")
    # Read once the processes have stopped: the audit log holds its last line whole.
    assert refused_to_the_product(plane.audit_log) == [], "the chart's RBAC refused the product"
