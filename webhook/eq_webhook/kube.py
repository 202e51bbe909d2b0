"""Listing the pods bound to a group when a rule needs them (the ElasticQuotas and Nodes come
from the kit's caches)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import aiohttp
from eq_engine import ObjectError, Pod, keys, parse_pod
from eq_engine.rules import BoundPodQuery
from eq_kit.kube import read_json
from kubernetes_asyncio import client
from kubernetes_asyncio.client.exceptions import ApiException

from .admission import PodLister, PodListing, PodLookupError

PAGE = 500
"""Pods per LIST page: a namespace of thousands must not be one response inside the timeout."""


def pod_lister(api: client.ApiClient) -> PodLister:
    core = client.CoreV1Api(api)

    async def list_pods(query: BoundPodQuery) -> PodListing:
        """Pods labelled with the group's name (either spelling), and the namespaces' pods, a
        page at a time, until `query.enough` of them count (are not finished): a denial names
        only a few, and the timeout is a few seconds.

        The rules decide which of them are bound; a label selector the server ignores only
        costs bandwidth."""
        pages: list[Callable[..., Any]] = [  # Any: the stubs type each keyword apart
            functools.partial(
                core.list_pod_for_all_namespaces, label_selector=f"{label}={query.name}"
            )
            for label in (keys.POD_QUOTA, keys.POD_QUOTA_SEED)
        ]
        pages += [functools.partial(core.list_namespaced_pod, ns) for ns in query.namespaces]
        pods: dict[str, Pod] = {}
        counting: set[str] = set()  # the unfinished ones, by key: a pod may be in two listings
        try:
            for listing in pages:
                more: dict[str, str] = {}  # `_continue` from the second page on
                while True:
                    page = await read_json(
                        await listing(limit=PAGE, _preload_content=False, **more)
                    )
                    for key, pod in _readable(page.get("items") or []):
                        pods[key] = pod
                        if not pod.terminal:
                            counting.add(key)
                    if len(counting) >= query.enough:
                        return PodListing(list(pods.values()), complete=False)
                    token = (page.get("metadata") or {}).get("continue")
                    if not token:
                        break
                    more = {"_continue": token}
        except ApiException as error:
            raise PodLookupError(f"the API server answered {error.status} {error.reason}") from None
        except (TimeoutError, aiohttp.ClientError) as error:
            raise PodLookupError(repr(error)) from None
        return PodListing(list(pods.values()), complete=True)

    return list_pods


def _readable(items: list[Mapping[str, Any]]) -> Iterator[tuple[str, Pod]]:
    for raw in items:
        try:
            pod = parse_pod(raw)
        except ObjectError:
            continue  # an unreadable pod is bound to nothing the rules can see
        yield pod.key, pod
