"""GET, LIST and WATCH: objects as storage holds them, selected, paged, or streamed as watch
events with bookmarks. JSON only: no Tables (kubectl meets the real control plane only)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import aiohttp
import orjson
from aiohttp import web

from . import responses
from .errors import ApiError
from .resources import Resource
from .selectors import parse_fields, parse_labels

if TYPE_CHECKING:
    from .server import ApiServer


def get_object(
    api: ApiServer, resource: Resource, namespace: str | None, name: str
) -> web.StreamResponse:
    return responses.raw(api.stored(resource, namespace, name).raw)


def _matcher(request: web.Request, resource: Resource) -> Callable[[dict[str, Any]], bool] | None:
    labels = request.query.get("labelSelector", "")
    fields = request.query.get("fieldSelector", "")
    checks: list[Callable[[dict[str, Any]], bool]] = []
    if labels:
        match = parse_labels(labels)
        checks.append(lambda o: match(o["metadata"].get("labels") or {}))
    if fields:
        checks.append(parse_fields(fields, resource))
    if not checks:
        return None
    return lambda o: all(check(o) for check in checks)


def list_objects(
    api: ApiServer, request: web.Request, resource: Resource, namespace: str | None
) -> web.StreamResponse:
    query = request.query
    token = query.get("continue") or None
    rv = query.get("resourceVersion", "")
    if token and rv not in ("", "0"):
        raise ApiError(400, "specifying resource version is not allowed when using continue")
    limit = 0 if rv == "0" else int(query.get("limit") or 0)
    items, list_rv, next_token, remaining = api.storage.list(
        resource, namespace, matches=_matcher(request, resource), limit=limit, token=token
    )
    metadata: dict[str, Any] = {"resourceVersion": str(list_rv)}
    if next_token:
        metadata["continue"] = next_token
        if remaining is not None:
            metadata["remainingItemCount"] = remaining
    head = orjson.dumps(
        {
            "kind": resource.kind + "List",
            "apiVersion": resource.api_version,
            "metadata": metadata,
        }
    )
    body = head[:-1] + b',"items":[' + b",".join(items) + b"]}"
    return responses.raw(body)


async def watch_objects(
    api: ApiServer, request: web.Request, resource: Resource, namespace: str | None
) -> web.StreamResponse:
    query = request.query
    rv = query.get("resourceVersion", "")
    try:
        since = None if rv in ("", "0") else int(rv)
    except ValueError as error:
        raise ApiError(
            400, f'resourceVersion: Invalid value: "{rv}": must be an integer'
        ) from error
    bookmarks = query.get("allowWatchBookmarks", "").lower() in ("true", "1")
    timeout = float(query["timeoutSeconds"]) if query.get("timeoutSeconds") else None
    matches = _matcher(request, resource)
    watcher, first = api.storage.watch(resource, namespace, matches, since)
    response = web.StreamResponse(headers={"Content-Type": "application/json"})
    response.enable_chunked_encoding()
    loop = asyncio.get_running_loop()
    deadline = None if timeout is None else loop.time() + timeout
    try:
        await response.prepare(request)
        chunk: list[bytes] = []
        for line in first:
            chunk.append(line)
            if len(chunk) >= 1000:
                await response.write(b"".join(chunk))
                chunk = []
        if chunk:
            await response.write(b"".join(chunk))
        if since is not None and since < api.storage.tables[resource.key].window_start:
            await response.write_eof()
            return response
        next_bookmark = loop.time() + api.config.bookmark_interval
        while True:
            wait = next_bookmark - loop.time() if bookmarks else None
            if deadline is not None:
                left = deadline - loop.time()
                wait = left if wait is None else min(wait, left)
            if not watcher.buffer:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(watcher.wake.wait(), timeout=wait)
            watcher.wake.clear()
            # A bookmark already due goes out even if the deadline passed meanwhile (a stalled
            # loop). kube-apiserver schedules one 2 s before a watch's deadline; here a watch
            # of a fraction of a second gets the ones due in it.
            if bookmarks and loop.time() >= next_bookmark:
                watcher.buffer.append(_bookmark(api, resource))
                next_bookmark = loop.time() + api.config.bookmark_interval
            if deadline is not None and loop.time() >= deadline and not watcher.buffer:
                break
            lines, watcher.buffer = watcher.buffer, []
            if watcher.abort:
                if request.transport is not None:
                    request.transport.abort()
                return response
            if lines:
                await response.write(b"".join(lines))
            if watcher.finish:
                break
        await response.write_eof()
    except (ConnectionResetError, aiohttp.ClientConnectionResetError):
        pass
    finally:
        api.storage.unwatch(resource, watcher)
    return response


def _bookmark(api: ApiServer, resource: Resource) -> bytes:
    obj = {
        "kind": resource.kind,
        "apiVersion": resource.api_version,
        "metadata": {"resourceVersion": str(api.storage.rv)},
    }
    return b'{"type":"BOOKMARK","object":' + orjson.dumps(obj) + b"}\n"
