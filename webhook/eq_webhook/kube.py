"""The webhook's only door to the API server: list and watch ElasticQuotas and Nodes, and
list the pods bound to a group when a rule needs them."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp
from eq_engine import ObjectError, Pod, keys, parse_pod
from eq_engine.rules import BoundPodQuery
from eq_kit.kube import read_json
from kubernetes_asyncio import client, watch
from kubernetes_asyncio.client.exceptions import ApiException

from .admission import PodLookupError
from .logs import logger
from .state import ClusterState

GROUP, VERSION, PLURAL = "scheduling.sigs.k8s.io", "v1alpha1", "elasticquotas"
WATCH_TIMEOUT = 300  # seconds: the API server ends each watch; the loop resumes it
RETRY_DELAY = 2.0  # seconds between attempts after an API error


def _list_call(api: client.ApiClient, kind: str) -> Callable[..., Awaitable[Any]]:
    if kind == "ElasticQuota":
        custom = client.CustomObjectsApi(api)
        return lambda **kw: custom.list_cluster_custom_object(GROUP, VERSION, PLURAL, **kw)
    return client.CoreV1Api(api).list_node


async def follow(api: client.ApiClient, kind: str, state: ClusterState) -> None:
    """Keep `state` equal to the cluster's objects of `kind`: list, then watch, forever."""
    call = _list_call(api, kind)
    while True:
        try:
            listing = await read_json(await call(_preload_content=False))
            state.replace(kind, listing.get("items") or [])
            version = listing.get("metadata", {}).get("resourceVersion")
            logger.info("loaded %d %s objects", len(listing.get("items") or []), kind)
            while True:
                stream = watch.Watch().stream(
                    call, resource_version=version, timeout_seconds=WATCH_TIMEOUT
                )
                async with stream:
                    async for event in stream:
                        state.apply(kind, event["type"], event["raw_object"])
                    version = stream.resource_version or version
        except asyncio.CancelledError:
            raise
        except ApiException as error:
            level = logger.info if error.status == 410 else logger.warning
            level("watching %s: %s %s; listing again", kind, error.status, error.reason)
        except Exception as error:  # the connection broke: list again after a pause
            logger.warning("watching %s failed: %r; listing again", kind, error)
        await asyncio.sleep(RETRY_DELAY)


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
