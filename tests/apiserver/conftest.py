"""Fixtures for the emulator's own tests: a server per test and a client of it, and `server`,
which runs a test on the emulator and then on the real kube-apiserver (servers.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from tests.apiserver import ApiServer, Config
from tests.apiserver.client import Client
from tests.apiserver.servers import Server, emulated, real

PODS = "/api/v1/namespaces/apps/pods"
QUOTAS = "/apis/scheduling.sigs.k8s.io/v1alpha1/namespaces/quotas/elasticquotas"
MERGE = "application/merge-patch+json"


@pytest_asyncio.fixture()
async def api() -> AsyncIterator[ApiServer]:
    async with ApiServer(Config(window=50, bookmark_interval=0.1)) as server:
        yield server


@pytest_asyncio.fixture()
async def client(api: ApiServer) -> AsyncIterator[Client]:
    session = Client(api.url)
    yield session
    await session.close()


@pytest_asyncio.fixture(params=["emulator", "kube-apiserver"])
async def server(request: pytest.FixtureRequest) -> AsyncIterator[Server]:
    if request.param == "emulator":
        async with ApiServer(Config(window=50, bookmark_interval=0.1)) as api:
            served = emulated(api)
            yield served
            await served.client.close()
        return
    plane = request.getfixturevalue("shared_plane")
    served = await real(plane.server, plane.directory / "pki")
    yield served
    await served.client.close()
