"""The emulated API server's own speed (tests/apiserver), to print next to operator figures:

    python -m benchmarks.apiserver

- LIST: 100,000 pods read in pages of 500 (kubectl's and client-go's page size), objects/s;
- WATCH fan-out: pod changes written in-process, delivered to 4 watchers, events/s in total;
- writes: merge PATCHes over HTTP, requests/s (what a client can make the server do).

The server runs in a child process, so the client's JSON parsing is not counted against it.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import time
from multiprocessing.synchronize import Event

import aiohttp
import orjson

from benchmarks import emulator
from tests.apiserver import ApiServer
from tests.manifests import pod

PODS, PAGE, WATCHERS, CHANGES, PATCHES = 100_000, 500, 4, 20_000, 2_000
PATH = "/api/v1/pods"


def serve(port_out: multiprocessing.connection.Connection, go: Event) -> None:
    async def main() -> None:
        api = ApiServer()
        api.seed(*(pod(f"p{i:06d}", namespace=f"ns{i % 50}") for i in range(PODS)))
        await api.start()
        port_out.send(api.url)
        resource = api.catalog.named("pods")
        await asyncio.to_thread(go.wait)
        while api.watchers("pods") < WATCHERS:
            await asyncio.sleep(0.01)
        first = api.get("pods", "p000000", "ns0")
        assert first is not None
        for i in range(CHANGES):
            labels = {"i": str(i)}
            api.storage.put(
                resource,
                {**first, "metadata": {**first["metadata"], "labels": labels}},
                type="MODIFIED",
            )
            if i % 100 == 0:
                await asyncio.sleep(0)  # let the watch streams write, as HTTP writes would
        await asyncio.sleep(3600)

    emulator.run(main)


async def measure(url: str, go: Event) -> None:
    async with aiohttp.ClientSession() as session:
        start, listed, token = time.perf_counter(), 0, ""
        while True:
            async with session.get(url + PATH, params={"limit": PAGE, "continue": token}) as r:
                page = orjson.loads(await r.read())
            listed += len(page["items"])
            token = page["metadata"].get("continue", "")
            if not token:
                break
        took = time.perf_counter() - start
        print(
            f"LIST {listed} pods in pages of {PAGE}: {listed / took:,.0f} objects/s ({took:.2f} s)"
        )
        rv = page["metadata"]["resourceVersion"]

        async def watch() -> int:
            params = {"watch": "true", "resourceVersion": rv}
            async with session.get(url + PATH, params=params, timeout=None) as r:
                seen = 0
                async for _ in r.content:
                    seen += 1
                    if seen == CHANGES:
                        return seen
            return seen

        start = time.perf_counter()
        watchers = [asyncio.create_task(watch()) for _ in range(WATCHERS)]
        go.set()
        delivered = sum(await asyncio.gather(*watchers))
        took = time.perf_counter() - start
        print(
            f"WATCH fan-out: {delivered} events to {WATCHERS} watchers: "
            f"{delivered / took:,.0f} events/s ({took:.2f} s)"
        )

        start = time.perf_counter()
        headers = {"Content-Type": "application/merge-patch+json"}
        for i in range(PATCHES):
            body = orjson.dumps({"metadata": {"annotations": {"n": str(i)}}})
            async with session.patch(
                url + PATH.replace("pods", "namespaces/ns1/pods/p000001"),
                data=body,
                headers=headers,
            ) as r:
                assert r.status == 200, await r.text()
        took = time.perf_counter() - start
        print(f"PATCH over HTTP, one client: {PATCHES / took:,.0f} requests/s")


def main() -> None:
    receive, send = multiprocessing.Pipe(duplex=False)
    go = multiprocessing.Event()
    server = multiprocessing.Process(target=serve, args=(send, go), daemon=True)
    seeding = time.perf_counter()
    server.start()
    url = receive.recv()
    print(f"seeded {PODS} pods in {time.perf_counter() - seeding:.1f} s")
    try:
        asyncio.run(measure(url, go))
    finally:
        server.terminate()


if __name__ == "__main__":
    main()
