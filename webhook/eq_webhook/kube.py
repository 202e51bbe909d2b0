"""Listing the pods bound to a group when a rule needs them (the ElasticQuotas and Nodes come
from the kit's caches)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import aiohttp
from eq_engine import ObjectError, Pod, keys, parse_pod
from eq_engine.rules import BoundPodQuery
from eq_kit.kube import read_json
from kubernetes_asyncio import client
from kubernetes_asyncio.client.exceptions import ApiException

from .admission import PodLookupError


def pod_lister(api: client.ApiClient) -> Callable[[BoundPodQuery], Awaitable[list[Pod]]]:
    core = client.CoreV1Api(api)

    async def list_pods(query: BoundPodQuery) -> list[Pod]:
        """Pods labelled with the group's name (either spelling), and the namespaces' pods.

        The rules decide which of them are bound; a label selector the server ignores only
        costs bandwidth."""
        calls = [
            core.list_pod_for_all_namespaces(
                label_selector=f"{label}={query.name}", _preload_content=False
            )
            for label in (keys.POD_QUOTA, keys.POD_QUOTA_SEED)
        ]
        calls += [core.list_namespaced_pod(ns, _preload_content=False) for ns in query.namespaces]
        try:
            listings = [await read_json(await call) for call in calls]
        except ApiException as error:
            raise PodLookupError(
                f"cannot tell which pods are bound to {query.name!r}: the API server answered "
                f"{error.status} {error.reason}; try again"
            ) from None
        except (TimeoutError, aiohttp.ClientError) as error:
            raise PodLookupError(
                f"cannot tell which pods are bound to {query.name!r}: {error!r}; try again"
            ) from None
        pods: dict[str, Pod] = {}
        for listing in listings:
            for raw in listing.get("items") or []:
                try:
                    pod = parse_pod(raw)
                except ObjectError:
                    continue  # an unreadable pod is bound to nothing the rules can see
                pods[pod.key] = pod
        return list(pods.values())

    return list_pods
