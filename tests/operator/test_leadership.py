"""Leader election by client-go's rules, against the emulated API server: expiry measured on
the local clock from the last change of the Lease seen, renewals retried until the deadline.

The candidate's clock moves only when a test moves it (`Manual`): a test process that stalls
for a second under load must not make a live Lease look expired, or a renewal look late."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

from eq_kit.kube import Http
from eq_operator.leadership import Leadership
from eq_operator.sending import Sender
from kubernetes_asyncio import client

from tests.apiserver import ApiServer
from tests.operator.inprocess import Manual
from tests.waiting import consistently, eventually

NAMESPACE, NAME = "koordinator-system", "elastic-quota-operator"
SKEWED = "2001-01-01T00:00:00.000000Z"  # a holder whose clock is far behind


def lease(holder: str, renewed: str = SKEWED) -> dict[str, Any]:
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": NAME, "namespace": NAMESPACE},
        "spec": {"holderIdentity": holder, "leaseDurationSeconds": 1, "renewTime": renewed},
    }


@contextlib.asynccontextmanager
async def candidate(
    api: ApiServer, changes: list[bool], clock: Manual
) -> AsyncIterator[Leadership]:
    configuration = client.Configuration(host=api.url)
    configuration.api_key = {"authorization": "Bearer admin"}
    async with client.ApiClient(configuration) as session:
        leadership = Leadership(
            Sender(Http(session)),
            namespace=NAMESPACE,
            name=NAME,
            identity="me",
            duration=1.0,
            on_change=changes.append,
            clock=clock,
        )
        task = asyncio.create_task(leadership.run())
        try:
            yield leadership
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


async def renew(api: ApiServer, clock: Manual, times: int) -> None:
    """Another replica renews, stamping renewTime with its skewed clock, 0.2 s apart on the
    candidate's clock; each renewal is seen by the candidate before the clock moves on."""
    leases = api.catalog.named("leases")
    for count in range(times):
        stored = api.get("leases", NAME, NAMESPACE)
        assert stored is not None
        spec = {**stored["spec"], "renewTime": SKEWED.replace("00.0", f"{count % 60:02d}.0")}
        api.storage.put(leases, {**stored, "spec": spec}, type="MODIFIED")
        # The read after the next: the candidate, which reads one at a time, has handled the
        # first answer by then (a read is counted when it arrives, not when it is answered).
        await eventually(read_after(api, api.count("get", "leases") + 1), what="renewal read")
        clock.now += 0.2


def read_after(api: ApiServer, reads: int) -> Callable[[], bool]:
    """Whether the Lease was read since `reads` reads."""
    return lambda: api.count("get", "leases") > reads


async def test_a_stand_by_leaves_a_live_lease_alone_whatever_the_holders_clock(api):
    api.seed(lease("other"))
    changes: list[bool] = []
    clock = Manual()
    async with candidate(api, changes, clock) as leadership:
        await renew(api, clock, times=15)  # 3 s, three lease durations
        assert changes == []
        # The holder stops renewing: taken a duration after its last change was seen (0.2 s
        # before the clock's last step).
        clock.now += 0.7
        await consistently(lambda: not leadership.leading, seconds=0.5, what="the Lease left")
        clock.now += 0.2
        await eventually(lambda: leadership.leading, what="the Lease taken")
        stored = api.get("leases", NAME, NAMESPACE)
        assert stored is not None and stored["spec"]["holderIdentity"] == "me"
        assert stored["spec"]["leaseTransitions"] == 1


async def test_a_failed_renewal_is_retried_before_leadership_is_given_up(api):
    changes: list[bool] = []
    clock = Manual()
    async with candidate(api, changes, clock) as leadership:
        await eventually(lambda: leadership.leading, what="leading")
        patch = api.fault("PATCH", "leases", status=500, times=1)
        get = api.fault("GET", "leases", status=500, times=1)
        await eventually(lambda: patch.spent and get.spent, what="both faults met")
        clock.now += 0.6  # since the last renewal: within the deadline (2/3 of the 1 s Lease)
        renewals = api.count("patch", "leases")
        await eventually(lambda: api.count("patch", "leases") > renewals + 3, what="renewals")
        assert changes == [True]
        # Renewals failing for longer than the renew deadline: it steps down.
        failing = api.fault("PATCH", "leases", status=500, times=10**6)
        await eventually(lambda: failing.hits > 0, what="a renewal failing")
        clock.now += 0.7
        await eventually(lambda: changes == [True, False], what="stepping down")
        api.faults.clear()
        await eventually(lambda: changes == [True, False, True], what="leading again")
