"""A small HTTP client of the emulator, for tests and the stand-in controllers: requests as a
Kubernetes client sends them, and an informer (LIST, then WATCH from the list's RV, relisting
after an ERROR event or a broken stream)."""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections.abc import Callable
from typing import Any

import aiohttp
import orjson

from .resources import Resource

JSON = dict[str, Any]


class ApiCallError(Exception):
    def __init__(self, status: int, body: Any) -> None:
        super().__init__(f"{status}: {body}")
        self.status, self.body = status, body


class Client:
    def __init__(
        self,
        url: str,
        *,
        token: str | None = "admin",
        agent: str = "emulator-tests",
        tls: ssl.SSLContext | None = None,
    ) -> None:
        """`token`: a bearer token; `tls`: a context with a client certificate instead (the
        real server's admin)."""
        self.url = url.rstrip("/")
        headers = {"User-Agent": agent}
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        connector = aiohttp.TCPConnector(ssl=tls) if tls is not None else None
        self.session = aiohttp.ClientSession(headers=headers, connector=connector)

    async def close(self) -> None:
        await self.session.close()

    async def request(
        self, method: str, path: str, body: Any = None, *, content_type: str = "application/json"
    ) -> tuple[int, Any, aiohttp.ClientResponse]:
        """(status, decoded body, response) of one request; never raises on an HTTP error."""
        data = None if body is None else orjson.dumps(body)
        headers = {"Content-Type": content_type}
        async with self.session.request(method, self.url + path, data=data, headers=headers) as r:
            raw = await r.read()
            try:
                decoded = orjson.loads(raw) if raw else None
            except orjson.JSONDecodeError:
                decoded = raw.decode()
            return r.status, decoded, r

    async def call(self, method: str, path: str, body: Any = None, **kwargs: Any) -> Any:
        """The decoded body of a successful request; ApiCallError otherwise."""
        status, decoded, _ = await self.request(method, path, body, **kwargs)
        if status >= 400:
            raise ApiCallError(status, decoded)
        return decoded

    async def watch(self, path: str, **params: str) -> list[JSON]:
        """Every event of a watch that ends by itself (`timeoutSeconds` or an ERROR)."""
        async with self.session.get(self.url + path, params={"watch": "true", **params}) as r:
            return [orjson.loads(line) async for line in r.content if line.strip()]


class Informer:
    """The current objects of a resource, kept by LIST and WATCH; `changed` is called after each
    batch of events so that a controller reacts to events, not to a clock."""

    def __init__(
        self,
        client: Client,
        resource: Resource,
        changed: Callable[[], None],
        *,
        label_selector: str = "",
    ) -> None:
        self.client, self.resource, self.changed = client, resource, changed
        self.label_selector = label_selector
        self.objects: dict[tuple[str | None, str], JSON] = {}
        self.synced = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._run())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _run(self) -> None:
        while True:
            try:
                rv = await self._list()
                await self._watch(rv)
            except (TimeoutError, aiohttp.ClientError, ApiCallError):
                await asyncio.sleep(0.05)  # back off before relisting, as a reflector does

    def _query(self) -> str:
        return f"?labelSelector={self.label_selector}" if self.label_selector else ""

    async def _list(self) -> str:
        listed = await self.client.call("GET", self.resource.prefix() + self._query())
        self.objects = {_key(o): o for o in listed["items"]}
        self.synced.set()
        self.changed()
        return str(listed["metadata"]["resourceVersion"])

    async def _watch(self, rv: str) -> None:
        params = {"watch": "true", "resourceVersion": rv, "allowWatchBookmarks": "true"}
        if self.label_selector:
            params["labelSelector"] = self.label_selector
        url = self.client.url + self.resource.prefix()
        async with self.client.session.get(url, params=params, timeout=None) as response:
            async for line in response.content:
                event = orjson.loads(line)
                obj = event["object"]
                if event["type"] == "ERROR":
                    return  # relist
                if event["type"] == "DELETED":
                    self.objects.pop(_key(obj), None)
                elif event["type"] in ("ADDED", "MODIFIED"):
                    self.objects[_key(obj)] = obj
                if not response.content.is_eof() and response.content._buffer:
                    continue  # more lines already here: react once to the batch
                self.changed()


def _key(obj: JSON) -> tuple[str | None, str]:
    return obj["metadata"].get("namespace"), obj["metadata"]["name"]
