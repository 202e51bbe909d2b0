"""Listing the pods bound to a group when a rule needs them (the ElasticQuotas and Nodes come
from the kit's caches), each decoded into just the fields the engine reads (`RawPod`), as the
operator's cache does: the listing runs within the admission timeout."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import Any, cast

from eq_engine import ObjectError, Pod, parse_pod
from eq_engine.decisions import BoundPodQuery
from eq_engine.model import keys
from eq_engine.reading import SCHEMAS, RawPod
from eq_kit.caching import PODS
from eq_kit.decoding import Decoding
from eq_kit.kube import TRANSPORT_ERRORS, ApiError, Http, pages

from .deciding import PodLister, PodListing, PodLookupError

_POD_FIELDS = Decoding(SCHEMAS[PODS.name])


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
            raise PodLookupError(f"the API server answered {error}") from None
        except TRANSPORT_ERRORS as error:
            raise PodLookupError(repr(error)) from None
        return PodListing(list(pods.values()), complete=True)

    return list_pods


def _readable(items: list[Mapping[str, Any]]) -> Iterator[tuple[str, Pod]]:
    for raw in items:
        try:
            pod = parse_pod(cast(RawPod, raw))
        except ObjectError:
            continue  # an unreadable pod is bound to nothing the rules can see
        yield pod.key, pod
