"""Reading and writing the Kubernetes API raw: through kubernetes-asyncio's connection (its TLS,
login and User-Agent), without its models, decoded with orjson (or msgspec, `decoding.py`). A
model for every answer is the slowest part of that client, and one odd field (a pod status
without `imageID`) fails it.

`Http` sends the requests and `pages` reads a LIST a page at a time. A request that fails
raises an `ApiError` (the server answered with an error) or one of `TRANSPORT_ERRORS` (it did
not answer)."""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import logging
import re
import time
import urllib.parse
import urllib.request
import weakref
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping
from typing import Any

import aiohttp
import orjson
from aiohttp.payload import BytesPayload
from kubernetes_asyncio import client
from yarl import URL

from .decoding import WHOLE, Decode, Decoding

logger = logging.getLogger("eq_kit.kube")

PAGE = 500
"""Objects per LIST page: client-go's pager and kubectl use 500."""
LIST_TIMEOUT = 120.0
"""Seconds one LIST page may take end to end."""
WRITE_TIMEOUT = 30.0
"""Seconds one write may take end to end: a hung request must not hold the operator's loop."""
WATCH_SLACK = 30.0
"""Seconds of silence beyond the watch's own timeout after which the connection is dead."""
JSON = "application/json"
"""The content type of a plain JSON body, and what the API is asked to answer in."""
MERGE = "application/merge-patch+json"
"""The content type of a JSON merge patch (RFC 7386): what it holds is set, a `null` removes."""
JSON_PATCH = "application/json-patch+json"
"""The content type of a JSON patch (RFC 6902): operations on paths, `test` ones included."""


def pointer(key: str) -> str:
    """`key` as one step of a JSON Pointer (RFC 6901), the paths of a JSON patch:
    `elastic-quota.dev/pools` as `elastic-quota.dev~1pools`."""
    return key.replace("~", "~0").replace("/", "~1")


_WRITE_TIMEOUT = aiohttp.ClientTimeout(total=WRITE_TIMEOUT)
_PLAIN_PATH = re.compile(r"[A-Za-z0-9._~/-]*").fullmatch
"""A path that needs no percent-encoding: every object name the API server accepts (a DNS
subdomain) makes one."""

_SESSIONS: weakref.WeakKeyDictionary[client.ApiClient, aiohttp.ClientSession] = (
    weakref.WeakKeyDictionary()
)


class ApiError(Exception):
    """An HTTP error answer of the API server, with its Status message when it sent one."""

    def __init__(self, status: int, message: str, *, retry_after: float = 0.0) -> None:
        super().__init__(f"{status} {message}")
        self.status, self.message = status, message
        self.retry_after = retry_after
        """Seconds the server asked the client to wait (`Retry-After`); 0: not said."""


TRANSPORT_ERRORS = (aiohttp.ClientError, TimeoutError)
"""What a request raises when the API server was not reached or did not answer in time: a
refused, reset or broken connection (aiohttp's `ClientConnectionError`,
`ServerDisconnectedError`, ...), a body cut short, a timeout (asyncio's is this `TimeoutError`).
An error answer is an `ApiError` instead."""


class Http:
    """Requests of raw JSON over an `ApiClient`'s connections: its TLS, pool, login and
    User-Agent, without its per-request work.

    The client's own session trusts the environment (`trust_env`), so aiohttp looks up the
    proxy variables and reads `~/.netrc` in a thread on every request: under a burst of writes
    that cost more CPU than the writes themselves. Here the proxy is looked up once: the
    kubeconfig's `proxy-url`, else `HTTPS_PROXY`/`HTTP_PROXY` unless `NO_PROXY` names the
    host or its domain (CIDR entries, which client-go also reads, are not understood); netrc
    is never read, as client-go never reads it."""

    def __init__(
        self,
        api: client.ApiClient,
        observe: Callable[[str, int, float], None] | None = None,
        *,
        read_timeout: float = LIST_TIMEOUT,
    ) -> None:
        self._api = api
        self._observe = observe
        self._read_timeout = aiohttp.ClientTimeout(total=read_timeout or None)
        """What one GET (a LIST page) may take end to end; 0: no limit (kubectl's
        `--request-timeout`)."""
        """Told of every request: its method, status (0: no answer) and seconds to answer."""
        rest, configuration = api.rest_client, api.configuration
        host = str(configuration.host)
        self._base = URL(host)
        self._prefix = self._base.raw_path.rstrip("/")
        """A path before the API's own (a proxy's, `https://proxy/k8s/clusters/c-1`)."""
        proxy = configuration.proxy or _environment_proxy(host)
        self._extra: dict[str, Any] = {"proxy": proxy} if proxy else {}
        if configuration.proxy_headers:
            self._extra["proxy_headers"] = configuration.proxy_headers
        if rest.server_hostname:
            self._extra["server_hostname"] = rest.server_hostname

    def _client(self) -> aiohttp.ClientSession:
        """The session of this `ApiClient` (one for every `Http` over it): made in the event
        loop, it lives as long as the client, and is closed with the client's pool."""
        session = _SESSIONS.get(self._api)
        if session is None:
            session = _SESSIONS[self._api] = aiohttp.ClientSession(
                connector=self._api.rest_client.pool_manager.connector,
                connector_owner=False,
                read_bufsize=2**21,  # a watch event may hold an object of etcd's 1.5 MiB
            )
        return session

    async def _headers(self, content_type: str) -> dict[str, str]:
        headers = {
            **self._api.default_headers,
            "Accept": JSON,
            "Content-Type": content_type,
        }
        login = (await self._api.configuration.auth_settings()).get("BearerToken")
        if login:  # asked for on every request: a token the client refreshes is picked up
            headers["Authorization"] = login["value"]
        return headers

    async def _call(
        self,
        method: str,
        path: str,
        params: Mapping[str, str],
        timeout: aiohttp.ClientTimeout,
        body: Any = None,
        content_type: str = JSON,
    ) -> aiohttp.ClientResponse:
        started, status = time.perf_counter(), 0
        try:
            response = await self._client().request(
                method,
                self._url(path),
                params=params,
                headers=await self._headers(content_type),
                data=None if body is None else BytesPayload(orjson.dumps(body)),
                timeout=timeout,
                **self._extra,
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

    def _url(self, path: str) -> URL:
        """The request's URL: the server's, its path (as the kubeconfig spells it) followed by
        `path`. A plain path is taken as it is (given as text, aiohttp would parse and encode
        the whole URL again on every request, which a burst of writes pays for); any other is
        encoded, alone."""
        if _PLAIN_PATH(path) is None:
            path = URL.build(path=path).raw_path
        return self._base.with_path(self._prefix + path, encoded=True)

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
        content_type: str = JSON,
        params: Mapping[str, str] | None = None,
        decode: Decode = orjson.loads,
    ) -> dict[str, Any]:
        """A write (POST, PUT, PATCH, DELETE) of a JSON body; the answer's JSON (by `decode`:
        whole, or the fields a reader needs, `decoding.fields`). An error status raises
        `ApiError`; no answer, one of `TRANSPORT_ERRORS`."""
        response = await self._call(method, path, params or {}, _WRITE_TIMEOUT, body, content_type)
        async with response:
            data = await response.read()
        decoded = decode(data) if data else {}
        return decoded if isinstance(decoded, dict) else {}

    async def get_json(
        self, path: str, params: Mapping[str, str], decode: Decode = orjson.loads
    ) -> dict[str, Any]:
        response = await self._get(path, params, self._read_timeout)
        async with response:
            data: dict[str, Any] = decode(await response.read())
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


async def pages(
    http: Http,
    path: str,
    params: Mapping[str, str] | None = None,
    *,
    limit: int = PAGE,
    decoding: Decoding = WHOLE,
    ahead: bool = False,
) -> AsyncGenerator[dict[str, Any], None]:
    """The pages of a LIST, `limit` objects each (0: all in one page), as client-go's pager
    reads them: each asks for the `continue` token of the one before. When a token expired
    mid-way (410), one full list follows, which may hold objects of the pages before again.
    The event loop runs between pages. `decoding`: objects whole, or only the fields its
    schema names (`decoding.py`).

    `ahead`: the next page is asked for before this one is handed over (client-go's pager
    buffers pages so, `PageBufferSize`), so that the server makes it while the caller reads
    this one. For a caller that reads every page: one that stops early wastes that request.

    A caller that stops early closes it (`contextlib.aclosing`), so that it ends at once
    rather than when collected (a page asked for ahead is then cancelled)."""
    query = dict(params or {})
    if limit:
        query["limit"] = str(limit)

    def fetch(token: str) -> Awaitable[dict[str, Any]]:
        return http.get_json(path, {**query, "continue": token} if token else query, decoding.page)

    token = ""
    following: asyncio.Future[dict[str, Any]] | None = None
    try:
        while True:
            try:
                page = await (following or fetch(token))
            except ApiError as error:
                if error.status != 410 or not token:
                    raise
                logger.info("listing %s: continue token expired; one full list", path)
                yield await http.get_json(path, params or {}, decoding.page)
                return
            token = (page.get("metadata") or {}).get("continue") or ""
            following = asyncio.ensure_future(fetch(token)) if token and ahead else None
            # The probes and the operator's loop run between pages; and the request for the
            # next page goes out now (unless a new connection or a login must be awaited
            # first), before the caller's work on this one.
            await asyncio.sleep(0)
            yield page
            if not token:
                return
    finally:
        if following is not None:
            following.cancel()
            if following.done() and not following.cancelled():
                following.exception()  # retrieved: the caller stopped, not the listing failed


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


def _environment_proxy(host: str) -> str | None:
    """The proxy the environment names for the API server, unless `NO_PROXY` exempts it."""
    url = urllib.parse.urlsplit(host)
    if urllib.request.proxy_bypass(url.hostname or ""):
        return None
    return urllib.request.getproxies().get(url.scheme)


def micro_time() -> str:
    """Now as the API's MicroTime (a Lease's renewTime, an Event's eventTime)."""
    return datetime.datetime.now(tz=datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
