"""Render the chart's Grafana dashboard to docs/dashboard.png, with data from a real run.

    python -m scripts.dashboard_preview [--seconds 85] [--out docs/dashboard.png]

1. Data: a real control plane (scripts/control_plane, built on first use) with the chart
   installed by `helm install` and its processes run as tests/control_plane/product.py runs
   them (reclaim delay cut to 10 s), kwok nodes, and the quick start's story from
   examples/quickstart, applied with kubectl: the department and its two teams;
   team-a borrows team-b's idle guarantee; team-b comes back, team-a's runtime drops and a
   borrowed pod is reclaimed, its replacement waits behind the gate; team-b leaves and the
   replacement is admitted; the same once more. Both processes' /metrics are scraped every
   second into memory; the run stops after `--seconds` and stops every process it started.
2. Queries (dashboard_queries.py): each panel's PromQL is evaluated at every scrape by a small
   evaluator of the subset the dashboard uses, with `[5m]` windows evaluated over the last
   `--window` seconds (the run is shorter than five minutes). A query without series shows
   "No data", as in Grafana.
3. Drawing (dashboard_drawing.py): HTML in Grafana's look, screenshotted by headless Chromium
   (`--chromium`, default /usr/bin/chromium).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path

import aiohttp

from scripts import dashboard_drawing, dashboard_queries
from scripts.control_plane.build import build
from scripts.dashboard_queries import Scrape, Vector
from tests.control_plane.cluster import Cluster
from tests.control_plane.product import installed

REPO = Path(__file__).resolve().parents[1]
DASHBOARD = REPO / "manifests" / "elastic-quota" / "files" / "dashboard.json"
EXAMPLES = REPO / "examples" / "quickstart"
SETTINGS = ("operator.reclaim.delay=10",)


async def _apply(cluster: Cluster, name: str) -> None:
    await cluster.kubectl(f"kubectl apply -f {EXAMPLES / name}")


async def _delete(cluster: Cluster, name: str) -> None:
    await cluster.kubectl(f"kubectl delete -f {EXAMPLES / name}")


# (second from the start, what happens): the quick start's story, played twice over.
STORY = (
    (2, "apply", "tree.yaml"),
    (6, "apply", "borrow.yaml"),
    (20, "apply", "reclaim.yaml"),
    (44, "delete", "reclaim.yaml"),
    (54, "apply", "reclaim.yaml"),
    (76, "delete", "reclaim.yaml"),
)


async def _play(cluster: Cluster, started: float) -> None:
    for at, verb, name in STORY:
        await asyncio.sleep(max(0.0, started + at - time.monotonic()))
        print(f"{at:>4} s  {verb} {name}", flush=True)
        await (_apply if verb == "apply" else _delete)(cluster, name)


async def collect(seconds: float, interval: float) -> list[Scrape]:
    """Scrape the webhook and the operator every `interval` for `seconds` while the story plays."""
    scrapes: list[Scrape] = []
    with tempfile.TemporaryDirectory() as scratch:
        async with (
            installed(build(), Path(scratch), *SETTINGS) as (_, cluster, product),
            aiohttp.ClientSession() as session,
        ):
            started = time.monotonic()
            story = asyncio.create_task(_play(cluster, started))
            for tick in range(int(seconds / interval) + 1):
                await asyncio.sleep(max(0.0, started + tick * interval - time.monotonic()))
                samples: Vector = {}
                for process in (product.webhook, *product.operators):
                    async with session.get(process.probes + "/metrics") as response:
                        samples.update(dashboard_queries.parse_scrape(await response.text()))
                scrapes.append(Scrape(time.time(), samples))
            story.cancel()  # when --seconds is shorter than the story
            await asyncio.gather(story, return_exceptions=True)
    return scrapes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=85, help="length of the run")
    parser.add_argument("--interval", type=float, default=1, help="seconds between scrapes")
    parser.add_argument("--window", type=float, default=10, help="seconds that stand for [5m]")
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "dashboard.png")
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    args = parser.parse_args()
    scrapes = asyncio.run(collect(args.seconds, args.interval))
    dashboard = json.loads(DASHBOARD.read_text())
    lines = [
        dashboard_queries.panel_lines(panel, scrapes, args.window) for panel in dashboard["panels"]
    ]
    text, height = dashboard_drawing.page(dashboard, scrapes, lines)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    dashboard_drawing.screenshot(text, height, args.out, args.chromium)
    for panel, found in zip(dashboard["panels"], lines, strict=True):
        print(f"{len(found):>3} series  {panel['title']}")
    print(f"wrote {args.out} ({args.out.stat().st_size // 1024} KB)")
    evicted = sum(
        v
        for k, v in scrapes[-1].samples.items()
        if ("__name__", "elastic_quota_evictions_total") in k and ("result", "evicted") in k
    )
    print(f"{evicted:.0f} pods reclaimed (the story expects 2)")


if __name__ == "__main__":
    main()
