"""The webhook's reads of the API server at the moment of a review (`deciding.Lookups`): the pods
bound to a group when a rule needs them, and the ElasticQuotas as the server holds them to
confirm a denial (the ElasticQuotas and Nodes otherwise come from the kit's caches). A pod is
decoded into just the fields the engine reads, as the operator's cache does: the reads run
within the admission timeout."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import Any, cast

from eq_engine import ObjectError, Pod, Quota, QuotaError, parse_pod, parse_quota
from eq_engine.decisions import BoundPodQuery
from eq_engine.model import keys
from eq_engine.reading import SCHEMAS, RawPod
from eq_kit.caching import PODS, QUOTAS
from eq_kit.decoding import Decoding
from eq_kit.kube import TRANSPORT_ERRORS, ApiError, Http, pages

from .deciding import LookupFailed, Lookups, PodLister, PodListing, QuotaLister
from .logs import logger

_POD_FIELDS = Decoding(SCHEMAS[PODS.name])


def lookups(http: Http) -> Lookups:
    return Lookups(pods=pod_lister(http), quotas=quota_lister(http))


def quota_lister(http: Http) -> QuotaLister:
    async def list_quotas() -> list[Quota]:
        """Every ElasticQuota the API server holds now (a consistent read), those it cannot
        read left out as the watch leaves them out."""
        quotas: list[Quota] = []
        try:
            listed = pages(http, QUOTAS.url(None))
            async with contextlib.aclosing(listed) as listing:
                async for page in listing:
                    for raw in page.get("items") or []:
                        try:
                            quotas.append(parse_quota(raw))
                        except QuotaError as error:
                            logger.warning("ignoring an unreadable object: %s", error)
        except ApiError as error:
            raise LookupFailed(f"the API server answered {error}") from None
        except TRANSPORT_ERRORS as error:
            raise LookupFailed(repr(error)) from None
        return quotas

    return list_quotas


def pod_lister(http: Http) -> PodLister:
    async def list_pods(query: BoundPodQuery) -> PodListing:
        """Pods labelled with the group's name (either spelling), and the namespaces' pods, a
        page at a time (500 pods: a namespace of thousands must not be one response inside
        the timeout), until `query.enough` of them count (are not finished): a denial names
        only a few, and the timeout is a few seconds.

        The rules decide which of them are bound; a label selector the server ignores only
        costs bandwidth."""
        listings = [
            (PODS.url(None), {"labelSelector": f"{label}={query.name}"})
            for label in (keys.POD_QUOTA, keys.POD_QUOTA_SEED)
        ]
        listings += [(PODS.url(namespace), {}) for namespace in query.namespaces]
        pods: dict[str, Pod] = {}
        counting: set[str] = set()  # the unfinished ones, by key: a pod may be in two listings
        try:
            for url, selector in listings:
                listed = pages(http, url, selector, decoding=_POD_FIELDS)
                async with contextlib.aclosing(listed) as listing:
                    async for page in listing:
                        for key, pod in _readable(page.get("items") or []):
                            pods[key] = pod
                            if not pod.terminal:
                                counting.add(key)
                        if len(counting) >= query.enough:
                            return PodListing(list(pods.values()), complete=False)
        except ApiError as error:
            raise LookupFailed(f"the API server answered {error}") from None
        except TRANSPORT_ERRORS as error:
            raise LookupFailed(repr(error)) from None
        return PodListing(list(pods.values()), complete=True)

    return list_pods


def _readable(items: list[Mapping[str, Any]]) -> Iterator[tuple[str, Pod]]:
    for raw in items:
        try:
            pod = parse_pod(cast(RawPod, raw))
        except ObjectError:
            continue  # an unreadable pod is bound to nothing the rules can see
        yield pod.key, pod
