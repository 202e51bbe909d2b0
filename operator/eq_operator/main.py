"""The operator process: Kopf as the runtime (start-up, clean-up, signals), the kit's caches
for the object streams, the loop, the Lease, probes and metrics."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time
import uuid
from typing import Any

import kopf
from aiohttp import web
from eq_kit.collector import paused_while_listing
from eq_kit.kube import Http
from eq_kit.probes import probes_app, start_site
from kubernetes_asyncio import client

from .assembly import assemble
from .builtins import Builtins
from .leadership import Leadership
from .logs import logger
from .metrics import Metrics
from .operating import Loop
from .sending import Sender
from .settings import OperatorSettings
from .writing import Writer


def _probes(
    loop: Loop,
    writer: Writer,
    builtins: Builtins,
    metrics: Metrics,
    stale_after: float,
) -> web.Application:
    def health() -> str | None:
        # A loop busy with a long burst of writes is alive while the writes are answered.
        age = time.monotonic() - max(loop.heartbeat, writer.progress)
        return f"the loop last ran {age:.0f}s ago" if age > stale_after else None

    def ready() -> str | None:
        if not loop.synced:
            return "the initial listings are not loaded yet"
        missing = builtins.missing()
        return f"the built-in groups {', '.join(missing)} do not exist yet" if missing else None

    return probes_app(health=health, ready=ready, registry=metrics.registry)


async def serve(
    settings: OperatorSettings, api: client.ApiClient, stop: asyncio.Event | None = None
) -> None:
    """Run until SIGTERM/SIGINT (or `stop`); on the way out, give the Lease up."""
    metrics = Metrics()
    http = Http(api, observe=metrics.observe_request)
    parts = assemble(settings, http, metrics, namespaces=_namespaces(settings))
    loop, writer, admitter, events, streams = (
        parts.loop,
        parts.writer,
        parts.admitter,
        parts.events,
        parts.caches,
    )
    identity = settings.identity or f"{socket.gethostname()}-{uuid.uuid4().hex[:6]}"
    metrics.leader.labels(identity).set(0)

    def leading_changed(leading: bool) -> None:
        metrics.leader.labels(identity).set(1 if leading else 0)
        loop.leading_changed(leading)

    leadership = Leadership(
        Sender(http),  # no budget: a renewal never waits behind the writes
        namespace=settings.engine.namespace,
        name=settings.lease_name,
        identity=identity,
        duration=settings.lease_duration,
        on_change=leading_changed,
    )
    registry = kopf.OperatorRegistry()
    tasks: list[asyncio.Task[Any]] = []
    runners: list[web.AppRunner] = []

    @kopf.on.login(registry=registry)
    def login(**kwargs: Any) -> kopf.ConnectionInfo | None:
        return kopf.login_with_service_account(**kwargs) or kopf.login_with_kubeconfig(**kwargs)

    @kopf.on.startup(registry=registry)
    async def startup(settings: kopf.OperatorSettings, **_: Any) -> None:
        # Kopf serves no resource here (the caches follow the objects): its scan of the
        # cluster's API groups and its watch of the CRDs would be work, and a grant, for nothing.
        settings.scanning.disabled = True
        # Nothing here waits for the API server: a replica started during an outage serves
        # its probes and follows the Lease from the first second, and its caches fill (and the
        # leader creates the built-in groups) as soon as the server answers.
        probes = _probes(loop, writer, parts.builtins, metrics, stale_after=30.0)
        runners.append(await start_site(probes, "0.0.0.0", probe_port))
        streams.start()
        tasks.extend(
            asyncio.create_task(job)
            for job in (paused_while_listing(streams), loop.run(), leadership.run())
        )

    @kopf.on.cleanup(registry=registry)
    async def cleanup(**_: Any) -> None:
        admitter.stop()  # no write once the Lease is given up
        writer.clear()
        events.stop()
        for task in tasks:
            task.cancel()
        await writer.stopped()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await streams.stop()
        for runner in runners:
            await runner.cleanup()

    probe_port = settings.probe_port
    namespaces = _namespaces(settings)
    logger.info("starting as %s; watching %s", identity, ", ".join(namespaces) or "all namespaces")
    await kopf.operator(
        registry=registry,
        standalone=True,  # every replica watches; the Lease decides who writes
        clusterwide=True,  # Kopf itself watches nothing: the caches follow the namespaces
        stop_flag=stop,
    )


def _namespaces(settings: OperatorSettings) -> list[str]:
    """The namespaces to follow, the built-in groups' included; empty: all of them."""
    if not settings.namespaces:
        return []
    return sorted({*settings.namespaces, settings.engine.namespace})
