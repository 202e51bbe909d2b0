"""The kit's cache against the emulated API server, through a kubernetes-asyncio client."""

from __future__ import annotations

from collections.abc import AsyncIterator, Collection
from typing import Any

import pytest_asyncio
from eq_kit.kube import Http
from kubernetes_asyncio import client

from tests.apiserver import ApiServer
from tests.apiserver.conftest import api  # the emulator's own fixture

__all__ = ["Recorder", "api", "http"]


class Recorder:
    """A Sink that keeps each object's resourceVersion and counts what it was told."""

    def __init__(self) -> None:
        self.objects: dict[str, str] = {}
        self.deleted: list[str] = []
        self.upserts = 0

    def upsert(self, key: str, obj: Any) -> None:
        self.objects[key] = obj["metadata"]["resourceVersion"]
        self.upserts += 1

    def delete(self, key: str) -> None:
        self.objects.pop(key, None)
        self.deleted.append(key)

    def held(self) -> Collection[str]:
        return self.objects.keys()


@pytest_asyncio.fixture()
async def http(api: ApiServer) -> AsyncIterator[Http]:
    configuration = client.Configuration(host=api.url)
    configuration.api_key = {"authorization": "Bearer admin"}
    async with client.ApiClient(configuration) as session:
        yield Http(session)
