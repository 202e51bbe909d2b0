"""The operator's modules wired as `eq_operator.main.serve` wires them, in the test's own event
loop, against the emulated API server: no process, no Kopf, and the clocks injectable."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from eq_engine import EngineConfig, QuotaEngine
from eq_kit.caching import Caches
from eq_kit.kube import Http
from eq_kit.throttling import TokenBucket
from eq_operator import observing
from eq_operator.admitting import Admitter
from eq_operator.builtins import Builtins
from eq_operator.events import Recorder
from eq_operator.metrics import Metrics
from eq_operator.operating import Loop
from eq_operator.pools import Pools
from eq_operator.reclaiming import Cluster, ClusterApi, Eviction, Reclaimer
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
    """The operator's parts, its caches listed and (by default) leading; the loop runs only
    when the test calls `run()` or drives `loop.step()` itself. `cluster`: the reclaimer's
    API, made from the parts' sender (their connection and write budget)."""
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
        view = ClusterView(QuotaEngine(settings.engine or EngineConfig()))
        metrics.groups = view.engine.statuses
        sender = Sender(http, TokenBucket(settings.api_qps, settings.api_burst, clock=clock))
        lifts = Sender(http, TokenBucket(settings.api_qps, settings.api_burst, clock=clock))
        events = Recorder(sender, clock=clock)
        reclaim = (cluster or _cluster_api(settings))(sender)
        reclaimer = Reclaimer(view, reclaim, events, settings.reclaim, metrics, clock=clock)
        writer = Writer(
            sender, view, metrics, workers=settings.write_workers, lifts=lifts, clock=clock
        )
        admitter = Admitter(
            view,
            writer,
            events,
            metrics,
            hold=settings.admission_hold,
            lifts=settings.api_burst,
            clock=clock,
        )
        builtins = Builtins(sender, view, settings.engine, clock=clock)
        pools = Pools(sender, events, clock=clock)
        caches = observing.caches(http, view, pools)
        loop = Loop(
            view,
            writer,
            admitter,
            reclaimer,
            builtins,
            pools,
            events,
            metrics,
            settings,
            ready=caches,
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


def _cluster_api(settings: OperatorSettings) -> Callable[[Sender], Cluster]:
    """The reclaimer's API as the operator makes it."""
    return lambda sender: ClusterApi(sender, spare_jobs=settings.reclaim.spare_jobs)
