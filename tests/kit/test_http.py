"""What the kit's requests carry: the client's login and User-Agent, and the proxy the
environment names (looked up once, as client-go's transport does), unless NO_PROXY exempts the
API server."""

from __future__ import annotations

from collections.abc import AsyncIterator

import aiohttp
import pytest
import pytest_asyncio
from aiohttp import web
from eq_kit.kube import Http
from kubernetes_asyncio import client

API = "http://api.cluster.invalid"
"""An API server address no resolver knows: only a proxy can reach it."""


class Recording:
    """A plain HTTP server that answers `{}` and keeps each request's Host and headers."""

    def __init__(self) -> None:
        self.seen: list[dict[str, str]] = []
        self.url = ""

    async def answer(self, request: web.Request) -> web.Response:
        self.seen.append({"Path": request.path_qs, **request.headers})
        return web.json_response({"kind": "Status"})


@pytest_asyncio.fixture()
async def recording() -> AsyncIterator[Recording]:
    recorder = Recording()
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", recorder.answer)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    recorder.url = f"http://127.0.0.1:{port}"
    yield recorder
    await runner.cleanup()


def connect(host: str, token: str = "") -> client.ApiClient:
    configuration = client.Configuration(host=host)
    if token:
        configuration.api_key = {"BearerToken": token}
        configuration.api_key_prefix = {"BearerToken": "Bearer"}
    api = client.ApiClient(configuration)
    api.user_agent = "elastic-quota/test (operator)"
    return api


async def test_requests_carry_the_login_and_user_agent(recording: Recording) -> None:
    async with connect(recording.url, token="s3cret") as api:
        await Http(api).send("PATCH", "/api/v1/namespaces/a/pods/p", {"metadata": {}})
    (seen,) = recording.seen
    assert seen["Authorization"] == "Bearer s3cret"
    assert seen["User-Agent"] == "elastic-quota/test (operator)"
    assert seen["Path"] == "/api/v1/namespaces/a/pods/p"


async def test_the_environment_proxy_carries_requests(
    recording: Recording, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HTTP_PROXY", recording.url)
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    async with connect(API) as api:
        answer = await Http(api).get_json("/api/v1/pods", {"limit": "500"})
    assert answer == {"kind": "Status"}
    (seen,) = recording.seen
    assert seen["Host"] == "api.cluster.invalid"


@pytest.mark.parametrize("exempt", ["api.cluster.invalid", ".invalid", "example.org,.invalid"])
async def test_no_proxy_exempts_the_api_server(
    recording: Recording, monkeypatch: pytest.MonkeyPatch, exempt: str
) -> None:
    monkeypatch.setenv("HTTP_PROXY", recording.url)
    monkeypatch.setenv("NO_PROXY", exempt)
    async with connect(API) as api:
        with pytest.raises(aiohttp.ClientConnectorError):
            await Http(api).get_json("/api/v1/pods", {})
    assert recording.seen == []


@pytest.mark.parametrize(
    ("path", "sent"),
    [
        ("/api/v1/namespaces/team-a/pods/web-0", "/api/v1/namespaces/team-a/pods/web-0"),
        ("/api/v1/namespaces/a/pods/p", "/api/v1/namespaces/a/pods/p"),
        # Not an object name the API server accepts, but a path kubectl would send so:
        ("/api/v1/namespaces/a/pods/two words%", "/api/v1/namespaces/a/pods/two%20words%25"),
    ],
)
async def test_a_server_behind_a_path_keeps_it(recording: Recording, path: str, sent: str) -> None:
    # A kubeconfig's server can carry a path (Rancher's proxy: /k8s/clusters/<id>), already
    # encoded as it is written there, and the API's paths follow it; the query stays apart.
    async with connect(recording.url + "/k8s/clusters/c-m%204x7/") as api:
        await Http(api).send("PATCH", path, {"metadata": {}}, params={"fieldManager": "eq"})
    (seen,) = recording.seen
    assert seen["Path"] == f"/k8s/clusters/c-m%204x7{sent}?fieldManager=eq"
