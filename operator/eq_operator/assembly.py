"""The operator's parts wired together, as `main.serve` runs them and the in-process tests drive
them: one place that says which part writes through which budget, and on which clock.

Must not start anything: the caller starts the caches, the loop and the Lease.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from eq_engine import QuotaEngine
from eq_kit.caching import Caches
from eq_kit.kube import Http
from eq_kit.throttling import TokenBucket

from . import observing
from .admitting import Admitter
from .builtins import Builtins
from .events import Recorder
from .evicting import Cluster, ClusterApi, Evictions
from .metrics import Metrics
from .operating import Loop
from .pools import Pools
from .preempting import Preempter
from .reclaiming import Reclaimer
from .requeuing import Requeuer
from .sending import Sender
from .settings import OperatorSettings
from .view import ClusterView
from .writing import Writer


@dataclass(frozen=True)
class Parts:
    view: ClusterView
    writer: Writer
    admitter: Admitter
    reclaimer: Reclaimer
    events: Recorder
    builtins: Builtins
    caches: Caches
    loop: Loop


def assemble(
    settings: OperatorSettings,
    http: Http,
    metrics: Metrics,
    *,
    namespaces: Sequence[str] = (),
    cluster: Callable[[Sender], Cluster] | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> Parts:
    """The parts on `http`, following `namespaces` (empty: all); `cluster`: the reclaimer's and
    the preempter's API made from the writes' sender (the operator's own: `ClusterApi`)."""
    view = ClusterView(QuotaEngine(settings.engine))
    # One budget for every write but the Lease's (leadership.py says why) and the gates' lifts,
    # which have one of the same size (settings.api_qps says why).
    sender = Sender(http, TokenBucket(settings.api_qps, settings.api_burst, clock=clock))
    lifts = Sender(http, TokenBucket(settings.api_qps, settings.api_burst, clock=clock))
    events = Recorder(sender, clock=clock)
    writer = Writer(sender, view, metrics, workers=settings.write_workers, lifts=lifts, clock=clock)
    api = (cluster or _cluster_api(settings))(sender)
    gangs_admitted: dict[str, float] = {}  # the admitter notes them, the requeuer times them
    requeuer = Requeuer(view, api, sender, events, settings, metrics, gangs_admitted)
    # As many lifts in flight as their budget lets go at once: 16 at a time made at most 16 a
    # round trip (20-30 a second from a real API server answering in 0.5-0.8 s under load).
    pools = Pools(sender, events, clock=clock)
    admitter = Admitter(
        view,
        writer,
        events,
        metrics,
        hold=settings.admission_hold,
        lifts=settings.api_burst,
        requeued=requeuer.requeues,
        admitted=gangs_admitted,
        pools=pools.by_tree,
        clock=clock,
    )
    evictions = Evictions(view, api, events, settings.reclaim, clock=clock)
    reclaimer = Reclaimer(view, api, evictions, settings.reclaim, metrics, clock=clock)
    preempter = Preempter(
        view, evictions, events, settings.reclaim, metrics, admitter.held, requeuer.requeues
    )
    builtins = Builtins(sender, view, settings.engine, clock=clock)
    caches = observing.caches(http, view, pools, namespaces)
    loop = Loop(
        view,
        writer,
        admitter,
        reclaimer,
        preempter,
        requeuer,
        builtins,
        pools,
        events,
        metrics,
        settings,
        ready=caches,
    )
    metrics.caches = caches
    metrics.groups = view.engine.statuses
    return Parts(view, writer, admitter, reclaimer, events, builtins, caches, loop)


def _cluster_api(settings: OperatorSettings) -> Callable[[Sender], Cluster]:
    return lambda sender: ClusterApi(sender, spare_jobs=settings.reclaim.spare_jobs)
