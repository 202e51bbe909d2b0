"""Fixtures for the emulator's own tests: a server per test and a client of it."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest_asyncio

from tests.apiserver import ApiServer, Config
from tests.apiserver.client import Client

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
