"""The webhook's HTTP side: admissions over TLS, health and metrics over plain HTTP.

    POST https://:9443/validate/elasticquotas   AdmissionReview v1 for ElasticQuota
    POST https://:9443/mutate/elasticquotas     the same, answered with the parent's tree id added
    POST https://:9443/validate/pods            AdmissionReview v1 for Pod
    POST https://:9443/mutate/pods              the same, answered with the admission gate added
    POST https://:9443/validate/jobs            AdmissionReview v1 for Job and CronJob: warnings
    GET  http://:8080/healthz                   200 while the process serves
    GET  http://:8080/readyz                    200 once the watches have loaded the cluster
    GET  http://:8080/metrics                   Prometheus text format

The certificate and key files are re-read when they change on disk (cert-manager rotation,
a renewed Secret), without a restart: new connections get the new certificate.
"""

from __future__ import annotations

import asyncio
import json
import os
import ssl
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from . import deciding
from .deciding import KINDS, Lookups
from .logs import logger
from .metrics import Metrics
from .reviews import BadReview, Review, parse_review
from .state import ClusterState

MAX_BODY = 8 * 2**20
"""Bytes: an AdmissionReview carries an object and its old version, each at most ~1.5 MiB."""

_PATHS = {"ElasticQuota": "/validate/elasticquotas", "Pod": "/validate/pods"}
DEFAULTS_PATH = "/mutate/elasticquotas"
"""Gives a new ElasticQuota its parent's tree id (Koordinator's mutating webhook)."""
GATE_PATH = "/mutate/pods"
"""Adds the admission gate to new pods (quota-gated scheduling)."""
JOBS_PATH = "/validate/jobs"
"""Warns of Jobs whose pods reclaim takes count as their failures."""


@dataclass(frozen=True)
class TLSFiles:
    certificate: str
    key: str

    def stamp(self) -> tuple[float, float]:
        return os.stat(self.certificate).st_mtime, os.stat(self.key).st_mtime


def tls_context(files: TLSFiles) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(files.certificate, files.key)
    return context


async def reload_certificates(context: ssl.SSLContext, files: TLSFiles, interval: float) -> None:
    """Load the files again whenever they change; keep the old pair if the new one is bad."""
    stamp = files.stamp()
    while True:
        await asyncio.sleep(interval)
        try:
            current = files.stamp()
            if current != stamp:
                context.load_cert_chain(files.certificate, files.key)
                stamp = current
                logger.info("loaded the renewed TLS certificate from %s", files.certificate)
        except (OSError, ssl.SSLError) as error:  # e.g. half-written during a rotation
            logger.warning("cannot load the TLS certificate yet: %s", error)


def admission_app(
    state: ClusterState,
    lookups: Lookups,
    metrics: Metrics,
    *,
    gate_pods: bool,
    pool_affinity: bool,
) -> web.Application:
    app = web.Application(client_max_size=MAX_BODY)
    for kind in KINDS:

        async def validate(review: Review, kind: str = kind) -> tuple[dict[str, Any], str]:
            answer = await deciding.validate(review, kind=kind, state=state, lookups=lookups)
            return answer, "allowed" if answer["response"]["allowed"] else "denied"

        app.router.add_post(_PATHS[kind], _handler(kind, validate, metrics))

    async def default(review: Review) -> tuple[dict[str, Any], str]:
        return await deciding.default_quota(review, state=state, lookups=lookups)

    app.router.add_post(DEFAULTS_PATH, _handler("ElasticQuota", default, metrics))

    async def mutate(review: Review) -> tuple[dict[str, Any], str]:
        return deciding.gate(review, state=state, enabled=gate_pods, pools=pool_affinity)

    app.router.add_post(GATE_PATH, _handler("Pod", mutate, metrics))

    async def warn(review: Review) -> tuple[dict[str, Any], str]:
        answer = deciding.warn_jobs(review)
        return answer, "warned" if "warnings" in answer["response"] else "allowed"

    app.router.add_post(JOBS_PATH, _handler("Job", warn, metrics))
    return app


def _handler(
    kind: str, decide: Callable[[Review], Awaitable[tuple[dict[str, Any], str]]], metrics: Metrics
) -> Callable[[web.Request], Awaitable[web.Response]]:
    """An endpoint: parse the review, `decide` (the answer and its result for the metrics),
    answer; count and time every request."""

    async def handle(request: web.Request) -> web.Response:
        started = time.perf_counter()
        operation, result = "unknown", "error"
        try:
            try:
                body = json.loads(await request.read())
            except (ValueError, RecursionError) as error:  # bad UTF-8 or JSON, too deep, too long
                raise BadReview(f"invalid JSON: {error}") from None
            review = parse_review(body)
            operation = review.operation.value
            answer, result = await decide(review)
            return web.json_response(answer)
        except BadReview as error:
            return web.json_response({"error": str(error)}, status=400)
        finally:
            metrics.admissions.labels(kind, operation, result).inc()
            metrics.latency.labels(kind).observe(time.perf_counter() - started)

    return handle


def readiness(state: ClusterState) -> str | None:
    missing = state.caches.missing() if state.caches.reflectors else ["ElasticQuota", "Node"]
    return f"not loaded yet: {', '.join(missing)}" if missing else None
