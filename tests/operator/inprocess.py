"""The operator's modules wired as `eq_operator.main.serve` wires them, in the test's own event
loop, against the emulated API server: no process, no Kopf, and the clocks injectable."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from eq_kit.caching import Caches
from eq_kit.kube import Http
from eq_operator.admitting import Admitter
from eq_operator.assembly import assemble
from eq_operator.events import Recorder
from eq_operator.evicting import Cluster, Eviction, Evictions
from eq_operator.metrics import Metrics
from eq_operator.operating import Loop
from eq_operator.reclaiming import Reclaimer
from eq_operator.sending import Sender
from eq_operator.settings import OperatorSettings, ReclaimSettings
from eq_operator.view import ClusterView, Ref
from eq_operator.writing import Writer
from kubernetes_asyncio import client

from tests.apiserver import ApiServer
from tests.waiting import eventually

Clock = Callable[[], float]


@dataclass
class Manual:
    """A clock that moves only when told to."""

    now: float = 1000.0

    def __call__(self) -> float:
        return self.now


@dataclass
class StubCluster:
    """The reclaimer's API without a server: `evict` answers, stamps are taken and listed."""

    evict: Callable[[str, str], Awaitable[Eviction]]
    stamped: list[str] = field(default_factory=list)

    async def stamp(self, quota: Ref, stamp: str) -> bool:
        self.stamped.append(quota.name)
        return True


@dataclass
class InProcess:
    api: ApiServer
    http: Http
    view: ClusterView
    writer: Writer
    admitter: Admitter
    reclaimer: Reclaimer
    events: Recorder
    loop: Loop
    caches: Caches
    metrics: Metrics
    tasks: list[asyncio.Task[Any]] = field(default_factory=list)

    def requests(self) -> int:
        """Requests the emulator has answered so far, reads and writes."""
        return sum(self.api.requests.values())

    def writes(self) -> int:
        """Writes (patches, creates) the emulator has received so far, Leases left out."""
        return sum(
            n
            for (verb, plural, _), n in self.api.requests.items()
            if verb in ("patch", "create", "update") and plural != "leases"
        )

    def run(self) -> None:
        """The operator's loop in the background, as the process runs it."""
        self.tasks.append(asyncio.create_task(self.loop.run()))

    async def converged(self, check: Callable[[], bool], what: str, timeout: float = 15) -> float:
        """Seconds until `check` holds."""
        started = time.monotonic()
        await eventually(check, timeout=timeout, what=what)
        return time.monotonic() - started


@contextlib.asynccontextmanager
async def in_process(
    api: ApiServer,
    *,
    reclaim: ReclaimSettings | None = None,
    clock: Clock = time.monotonic,
    leading: bool = True,
    cluster: Callable[[Sender], Cluster] | None = None,
    **options: Any,
) -> AsyncIterator[InProcess]:
    """The operator's parts (`assembly.assemble`), its caches listed and (by default) leading;
    the loop runs only when the test calls `run()` or drives `loop.step()` itself. `cluster`:
    the reclaimer's API, made from the parts' sender (their connection and write budget)."""
    settings = OperatorSettings(
        reclaim=reclaim or ReclaimSettings(enabled=False),
        batch_interval=0.02,
        **{"api_qps": 0, **options},  # no budget unless the test sets one
    )
    configuration = client.Configuration(host=api.url)
    configuration.api_key = {"authorization": "Bearer admin"}
    async with client.ApiClient(configuration) as session:
        metrics = Metrics()
        http = Http(session, observe=metrics.observe_request)
        made = assemble(settings, http, metrics, cluster=cluster, clock=clock)
        view, writer, admitter, reclaimer, events, caches, loop = (
            made.view,
            made.writer,
            made.admitter,
            made.reclaimer,
            made.events,
            made.caches,
            made.loop,
        )
        parts = InProcess(
            api, http, view, writer, admitter, reclaimer, events, loop, caches, metrics
        )
        caches.start()
        try:
            await caches.wait_ready()
            loop.leading_changed(leading)
            yield parts
        finally:
            for task in parts.tasks:
                task.cancel()
            for task in parts.tasks:
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            writer.clear()
            events.stop()
            await writer.stopped()
            await caches.stop()


def reclaimer_of(
    view: ClusterView,
    cluster: Cluster,
    events: Recorder,
    settings: ReclaimSettings,
    clock: Callable[[], float],
) -> Reclaimer:
    """A reclaimer as the operator makes one, on its own evictions."""
    evictions = Evictions(view, cluster, events, settings, clock=clock)
    return Reclaimer(view, cluster, evictions, settings, Metrics(), clock=clock)
