"""The operator process: Kopf's watches, the loop, the Lease, probes and metrics."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import time
import uuid
from typing import Any

import kopf
from aiohttp import web
from eq_engine import QuotaEngine
from eq_kit.probes import probes_app, start_site
from kubernetes_asyncio import client

from . import observing
from .admitting import Admitter
from .builtins import ensure_builtins
from .events import Recorder
from .leadership import Leadership
from .logs import logger
from .metrics import Metrics
from .operating import Loop
from .reclaiming import Reclaimer, eviction_api
from .settings import OperatorSettings
from .view import ClusterView
from .writing import Writer


def _probes(view: ClusterView, loop: Loop, metrics: Metrics, stale_after: float) -> web.Application:
    def health() -> str | None:
        age = time.monotonic() - loop.heartbeat
        return f"the loop last ran {age:.0f}s ago" if age > stale_after else None

    def ready() -> str | None:
        return None if view.synced else "the initial listings are not loaded yet"

    return probes_app(health=health, ready=ready, registry=metrics.registry)


async def serve(
    settings: OperatorSettings, api: client.ApiClient, stop: asyncio.Event | None = None
) -> None:
    """Run until SIGTERM/SIGINT (or `stop`); on the way out, give the Lease up."""
    view = ClusterView(QuotaEngine(settings.engine))
    metrics = Metrics()
    events = Recorder(api)
    reclaimer = Reclaimer(view, eviction_api(api), events, settings.reclaim, metrics)
    writer = Writer(api, view, metrics)
    admitter = Admitter(view, writer, events, metrics, hold=settings.admission_hold)
    loop = Loop(view, writer, admitter, reclaimer, events, metrics, settings)
    identity = settings.identity or f"{socket.gethostname()}-{uuid.uuid4().hex[:6]}"
    leadership = Leadership(
        api,
        namespace=settings.engine.namespace,
        name=settings.lease_name,
        identity=identity,
        duration=settings.lease_duration,
        on_change=loop.leading_changed,
    )
    registry = kopf.OperatorRegistry()
    tasks: list[asyncio.Task[Any]] = []
    runners: list[web.AppRunner] = []

    @kopf.on.login(registry=registry)
    def login(**kwargs: Any) -> kopf.ConnectionInfo | None:
        return kopf.login_with_service_account(**kwargs) or kopf.login_with_kubeconfig(**kwargs)

    @kopf.on.startup(registry=registry)
    async def startup(settings: kopf.OperatorSettings, **_: Any) -> None:
        settings.posting.level = logging.INFO
        if not logger.isEnabledFor(logging.DEBUG):  # a line per handled event is too many
            logging.getLogger("kopf.objects").setLevel(logging.WARNING)
        settings.watching.server_timeout = 300
        await ensure_builtins(api, view.engine.config)
        probes = _probes(view, loop, metrics, stale_after=30.0)
        runners.append(await start_site(probes, "0.0.0.0", probe_port))
        tasks.extend([asyncio.create_task(loop.run()), asyncio.create_task(leadership.run())])

    @kopf.on.cleanup(registry=registry)
    async def cleanup(**_: Any) -> None:
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        for runner in runners:
            await runner.cleanup()

    probe_port = settings.probe_port
    observing.register(registry, view)
    namespaces = sorted({*settings.namespaces, settings.engine.namespace})
    logger.info(
        "starting as %s; watching %s",
        identity,
        ", ".join(namespaces) if settings.namespaces else "all namespaces",
    )
    await kopf.operator(
        registry=registry,
        standalone=True,  # every replica watches; the Lease decides who writes
        clusterwide=not settings.namespaces,
        namespaces=namespaces if settings.namespaces else (),
        stop_flag=stop,
    )
