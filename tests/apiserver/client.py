"""A small HTTP client of either server (the emulator, or the real one as its admin) for the
emulator's tests: requests as a Kubernetes client sends them, watches that end by themselves,
and watches read as they go."""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import aiohttp
import orjson

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

    @asynccontextmanager
    async def watching(self, path: str, **params: str) -> AsyncIterator[aiohttp.StreamReader]:
        """A watch read line by line while the test acts. Leaving it drops the connection, as a
        watcher that stops does: a TLS close would wait for the server's reply, which may come
        after the test's event loop has closed, leaving the socket open."""
        url = self.url + path
        async with self.session.get(url, params={"watch": "true", **params}) as response:
            try:
                yield response.content
            finally:
                if response.connection is not None and response.connection.transport:
                    response.connection.transport.abort()
