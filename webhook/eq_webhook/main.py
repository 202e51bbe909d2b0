"""The webhook process: watches, servers and a clean shutdown."""

from __future__ import annotations

import asyncio
import contextlib
import signal

from eq_engine.reading import SCHEMAS
from eq_kit.caching import NODES, PROFILES, QUOTAS, Caches, Kind, Sink, reflectors
from eq_kit.kube import Http
from eq_kit.probes import probes_app, start_site
from kubernetes_asyncio import client

from .deciding import KINDS
from .kube import lookups
from .logs import logger
from .metrics import Metrics
from .server import TLSFiles, admission_app, readiness, reload_certificates, tls_context
from .settings import WebhookSettings
from .state import ClusterState


async def serve(settings: WebhookSettings, api: client.ApiClient) -> None:
    """Serve until SIGTERM or SIGINT."""
    files = TLSFiles(settings.cert_file, settings.key_file)
    context = tls_context(files)  # fail at start, not at the first review, on a bad pair
    state = ClusterState(settings.engine)
    metrics = Metrics()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    http = Http(api)
    sinks: dict[Kind, Sink] = {QUOTAS: state.quotas, NODES: state.nodes, PROFILES: state.profiles}
    state.caches = Caches(reflectors(http, sinks, schemas=SCHEMAS))
    state.caches.start()
    tasks = [asyncio.create_task(reload_certificates(context, files, settings.cert_check_interval))]
    runners = [
        await start_site(
            admission_app(
                state,
                lookups(http),
                metrics,
                gate_pods=settings.gate_pods,
                pool_affinity=settings.pool_affinity,
            ),
            settings.address,
            settings.port,
            context,
        ),
        await start_site(
            probes_app(
                health=lambda: None, ready=lambda: readiness(state), registry=metrics.registry
            ),
            settings.address,
            settings.probe_port,
        ),
    ]
    logger.info(
        "validating %s on https://%s:%d, probes on http://%s:%d",
        " and ".join(KINDS),
        settings.address,
        settings.port,
        settings.address,
        settings.probe_port,
    )
    try:
        await stop.wait()
    finally:
        logger.info("stopping")
        for runner in runners:
            await runner.cleanup()
        await state.caches.stop()
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
