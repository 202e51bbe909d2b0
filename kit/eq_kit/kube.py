"""Reading and writing the Kubernetes API raw: through kubernetes-asyncio's connection (its TLS,
login and User-Agent), without its models, decoded with orjson. A model for every answer is the
slowest part of that client, and one odd field (a pod status without `imageID`) fails it."""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

import aiohttp
import orjson
from kubernetes_asyncio import client
from kubernetes_asyncio.client.exceptions import ApiException

LIST_TIMEOUT = 120.0
"""Seconds one LIST page may take end to end."""
WRITE_TIMEOUT = 30.0
"""Seconds one write may take end to end: a hung request must not hold the operator's loop."""
WATCH_SLACK = 30.0
"""Seconds of silence beyond the watch's own timeout after which the connection is dead."""


class ApiError(Exception):
    """An HTTP error answer of the API server, with its Status message when it sent one."""

    def __init__(self, status: int, message: str, *, retry_after: float = 0.0) -> None:
        super().__init__(f"{status} {message}")
        self.status, self.message = status, message
        self.retry_after = retry_after
        """Seconds the server asked the client to wait (`Retry-After`); 0: not said."""


async def read_json(response: Any) -> dict[str, Any]:
    """The JSON of a response read with `_preload_content=False`, which the client does not
    check: an error status raises `ApiException` here, as a parsed call would."""
    if response.status >= 400:
        raise ApiException(status=response.status, reason=response.reason)
    data: dict[str, Any] = orjson.loads(await response.read())
    return data


class Http:
    """GETs of raw JSON over an `ApiClient`'s session."""

    def __init__(
        self, api: client.ApiClient, observe: Callable[[str, int, float], None] | None = None
    ) -> None:
        self._api = api
        self._observe = observe
        """Told of every request: its method, status (0: no answer) and seconds to answer."""

    async def _call(
        self,
        method: str,
        path: str,
        params: Mapping[str, str],
        timeout: aiohttp.ClientTimeout,
        body: Any = None,
        content_type: str = "application/json",
    ) -> aiohttp.ClientResponse:
        started, status = time.perf_counter(), 0
        try:
            response: aiohttp.ClientResponse = await self._api.call_api(
                path,
                method,
                query_params=list(params.items()),
                header_params={"Accept": "application/json", "Content-Type": content_type},
                body=body,
                auth_settings=["BearerToken"],
                _preload_content=False,
                _request_timeout=timeout,
            )
            status = response.status
        finally:
            if self._observe is not None:
                self._observe(method, status, time.perf_counter() - started)
        if response.status >= 400:
            data = await response.read()
            response.release()
            raise ApiError(
                response.status,
                _message(data) or str(response.reason),
                retry_after=_seconds(response.headers.get("Retry-After")),
            )
        return response

    async def _get(
        self, path: str, params: Mapping[str, str], timeout: aiohttp.ClientTimeout
    ) -> aiohttp.ClientResponse:
        return await self._call("GET", path, params, timeout)

    async def send(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        content_type: str = "application/json",
        params: Mapping[str, str] | None = None,
    ) -> dict[str, Any]:
        """A write (POST, PUT, PATCH, DELETE) of a JSON body; the answer's JSON. An error
        status raises `ApiError`; a broken connection, aiohttp's errors or `TimeoutError`."""
        timeout = aiohttp.ClientTimeout(total=WRITE_TIMEOUT)
        response = await self._call(method, path, params or {}, timeout, body, content_type)
        async with response:
            data = await response.read()
        decoded = orjson.loads(data) if data else {}
        return decoded if isinstance(decoded, dict) else {}

    async def get_json(self, path: str, params: Mapping[str, str]) -> dict[str, Any]:
        response = await self._get(path, params, aiohttp.ClientTimeout(total=LIST_TIMEOUT))
        async with response:
            data: dict[str, Any] = orjson.loads(await response.read())
        return data

    @contextlib.asynccontextmanager
    async def stream(
        self, path: str, params: Mapping[str, str]
    ) -> AsyncIterator[aiohttp.ClientResponse]:
        """A streaming GET (a watch): no total timeout, but a dead connection is noticed."""
        silence = float(params.get("timeoutSeconds") or 0) + WATCH_SLACK
        response = await self._get(path, params, aiohttp.ClientTimeout(sock_read=silence))
        async with response:
            yield response


def _message(body: bytes) -> str:
    """The `message` of a Status body, or the body itself (a 429 from priority and fairness
    is plain text)."""
    try:
        decoded = orjson.loads(body)
    except orjson.JSONDecodeError:
        return body.decode(errors="replace").strip()[:200]
    return str(decoded.get("message", "")) if isinstance(decoded, dict) else ""


def _seconds(header: str | None) -> float:
    """`Retry-After` in seconds (the API server sends whole seconds); 0 when absent or a date."""
    try:
        return max(0.0, float(header or 0))
    except ValueError:
        return 0.0
