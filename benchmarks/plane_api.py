"""The control plane's API as the benchmarks' admin: requests, LISTs and watches over one pool
of connections (`Api`), bare pods and ready namespaces, the control plane's processes. Shared by
the real-control-plane run and the runs against Kueue and Koordinator; no benchmark's own
measures here.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import aiohttp
import orjson

from scripts.control_plane.client import Client
from scripts.control_plane.plane import ControlPlane

QUOTAS = "/apis/scheduling.sigs.k8s.io/v1alpha1"
CONCURRENT = 64
"""Requests of a benchmark's in flight at once."""
REQUESTS = {"cpu": "100m", "memory": "64Mi"}
"""A bare pod's request unless it says otherwise."""


class Unexpected(RuntimeError):
    """An answer other than the one wanted, with its status."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class Api:
    """The control plane's API as its admin, over one pool of kept-alive connections."""

    def __init__(self, client: Client) -> None:
        self._server = client.server
        connector = aiohttp.TCPConnector(ssl=client.context(), limit=CONCURRENT)
        self._session = aiohttp.ClientSession(
            connector=connector, timeout=aiohttp.ClientTimeout(total=None, sock_read=None)
        )

    async def send(
        self, method: str, path: str, body: object = None, *, want: int = 200
    ) -> dict[str, Any]:
        """One request; its answer, or an error that says what came instead of `want`."""
        async with self._session.request(
            method,
            self._server + path,
            data=None if body is None else orjson.dumps(body),
            headers={"Content-Type": "application/json", "Accept": "application/json"},
        ) as response:
            raw = await response.read()
            if response.status != want:
                raise Unexpected(
                    response.status, f"{method} {path}: {response.status} {raw[:500]!r}"
                )
        answer: dict[str, Any] = orjson.loads(raw)
        return answer

    async def items(self, path: str) -> tuple[list[dict[str, Any]], str]:
        """Every object of a LIST, page by page, and the list's resourceVersion."""
        found: list[dict[str, Any]] = []
        token = ""
        separator = "&" if "?" in path else "?"
        while True:
            page = await self.send("GET", f"{path}{separator}limit=500&continue={token}")
            found += page["items"]
            token = page["metadata"].get("continue", "")
            if not token:
                return found, page["metadata"]["resourceVersion"]

    async def follow(
        self, path: str, handle: Callable[[str, dict[str, Any]], None]
    ) -> AsyncIterator[None]:
        """`handle(type, object)` for every object at `path` (as ADDED), then for every change;
        yields once the first LIST is handled, and keeps watching until closed (listing again
        if the watch's version expired)."""
        objects, version = await self.items(path)
        for obj in objects:
            handle("ADDED", obj)
        task = asyncio.create_task(self._watch(path, version, handle))
        try:
            yield
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _watch(
        self, path: str, version: str, handle: Callable[[str, dict[str, Any]], None]
    ) -> None:
        separator = "&" if "?" in path else "?"
        while True:
            url = f"{path}{separator}watch=1&allowWatchBookmarks=true&resourceVersion={version}"
            async with self._session.get(self._server + url) as response:
                assert response.status == 200, (url, response.status, await response.text())
                async for line in response.content:
                    event = orjson.loads(line)
                    obj = event["object"]
                    if event["type"] == "ERROR":  # the version expired: list again
                        objects, version = await self.items(path)
                        for listed in objects:
                            handle("ADDED", listed)
                        break
                    version = obj["metadata"]["resourceVersion"]
                    if event["type"] != "BOOKMARK":
                        handle(event["type"], obj)

    async def close(self) -> None:
        await self._session.close()


async def together(calls: Iterable[Awaitable[object]]) -> None:
    """Every call, `CONCURRENT` at a time."""
    limit = asyncio.Semaphore(CONCURRENT)

    async def one(call: Awaitable[object]) -> None:
        async with limit:
            await call

    await asyncio.gather(*map(one, calls))


def started_at(pid: int) -> float:
    """When the process started, in wall-clock seconds (/proc: ticks since the machine's boot)."""
    ticks = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])
    boot = next(
        int(line.split()[1])
        for line in Path("/proc/stat").read_text().splitlines()
        if line.startswith("btime ")
    )
    return boot + ticks / os.sysconf("SC_CLK_TCK")


def pid(plane: ControlPlane, name: str) -> int:
    popen = plane.component(name).popen
    assert popen is not None, f"{name} was never started"
    return popen.pid


def pod(
    name: str,
    namespace: str,
    *,
    node: str | None = None,
    requests: Mapping[str, str] = REQUESTS,
    spec: Mapping[str, Any] | None = None,
    labels: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """A bare pod of one pause container asking `requests`; `spec`: more of its spec (a
    PriorityClass, a scheduler, an affinity, ...)."""
    made: dict[str, Any] = {
        **(spec or {}),
        "containers": [
            {
                "name": "work",
                "image": "registry.k8s.io/pause:3.10",
                "resources": {"requests": dict(requests)},
            }
        ],
    }
    if node:
        made["nodeName"] = node
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": dict(labels or {})},
        "spec": made,
    }


async def make_namespaces(api: Api, namespaces: list[str]) -> None:
    """The namespaces, ready for pods: the ServiceAccount admission plugin refuses pods until a
    namespace's `default` account exists."""
    await together(
        api.send("POST", "/api/v1/namespaces", {"metadata": {"name": n}}, want=201)
        for n in namespaces
    )
    while True:
        accounts, _ = await api.items(
            "/api/v1/serviceaccounts?fieldSelector=metadata.name%3Ddefault"
        )
        if set(namespaces) <= {a["metadata"]["namespace"] for a in accounts}:
            return
        await asyncio.sleep(0.5)
