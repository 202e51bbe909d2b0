"""The real operator process (`elastic-quota operator`) against the emulated API server."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import pytest_asyncio
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample

from tests.apiserver import ApiServer
from tests.kube import Client, write_kubeconfig
from tests.paths import PYTHONPATH
from tests.ports import free_port
from tests.waiting import eventually  # the tests of this folder import it from here

FAST = ("--batch-interval", "0.05", "--reclaim-interval", "0.1", "--lease-duration", "2")


def samples(page: str, name: str) -> list[Sample]:
    """The samples of the metric family `name` in a /metrics page (which must have it)."""
    (family,) = (f for f in text_string_to_metric_families(page) if f.name == name)
    return list(family.samples)


@dataclass
class Operator:
    process: subprocess.Popen[bytes]
    probes: str

    async def get(self, path: str) -> tuple[int, str]:
        async with aiohttp.ClientSession() as session, session.get(self.probes + path) as r:
            return r.status, await r.text()

    async def stop(self) -> None:
        self.process.send_signal(signal.SIGTERM)
        code = await asyncio.to_thread(self.process.wait, 20)
        assert code == 0, f"the operator exited with {code}"


async def start_operator(
    tmp: Path,
    api: ApiServer,
    *extra: str,
    name: str = "op",
    ready_within: float = 30,
    probe: str = "/readyz",
) -> Operator:
    """The operator process, once its `probe` answers 200."""
    probe_port = free_port()
    kubeconfig = write_kubeconfig(tmp / f"kubeconfig-{name}", str(api.url))
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "eq_cli.main",
            "operator",
            "--kubeconfig",
            str(kubeconfig),
            "--probe-port",
            str(probe_port),
            "--identity",
            name,
            *FAST,
            *extra,
        ],
        env={
            **os.environ,
            "PYTHONPATH": PYTHONPATH,
        },
    )
    operator = Operator(process, f"http://127.0.0.1:{probe_port}")
    try:
        await eventually(
            lambda: _answers(operator, probe), timeout=ready_within, what=f"{probe} to answer 200"
        )
    except BaseException:
        process.kill()
        process.wait()
        raise
    return operator


async def _answers(operator: Operator, probe: str) -> bool:
    assert operator.process.poll() is None, "the operator exited while starting"
    try:
        status, _ = await operator.get(probe)
    except aiohttp.ClientConnectionError:
        return False
    return status == 200


@pytest_asyncio.fixture()
async def api() -> AsyncIterator[ApiServer]:
    async with ApiServer() as emulator:
        yield emulator


@pytest_asyncio.fixture()
async def client(api: ApiServer) -> AsyncIterator[Client]:
    session = Client(api)
    yield session
    await session.close()


def writes(api: ApiServer) -> int:
    """The PATCH requests the emulator received, Leases left out."""
    return sum(
        n for (verb, plural, _), n in api.requests.items() if verb == "patch" and plural != "leases"
    )
