"""Kueue's own scheduler benchmark and the product's run of the same config, one after the other
on the same machine and the same control-plane binaries, printed side by side:

    python -m benchmarks.run against-kueue [--config baseline] [--only kueue|elastic-quota]
        [--api-qps N] [--queue-policy Block|Priority] [--dir DIR]

`--config` is one of Kueue's configs (test/performance/scheduler/configs/NAME/generator.yaml in
the pinned module) or a generator file; `--api-qps` replaces the operator's write budget (the
chart's 50) to measure with the limit off (0); `--queue-policy` gives the queues koord-queue's
policy (the gate's default: Block; Priority lets a pod that fits pass one that does not, as
Kueue's default BestEffortFIFO). Kueue's side builds its runner and minimalkueue
from tools/peers/kueue on first use (scripts/control_plane/peers.py). docs/benchmarks.md,
"Against the peers", says how the config is translated and which clock each figure reads.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from pathlib import Path

from benchmarks.kueue_peer import run_kueue
from benchmarks.kueue_product import run_product
from benchmarks.kueue_shape import Figures, read_shape, table
from scripts.control_plane.build import build
from scripts.control_plane.peers import build_peer

SYSTEMS = ("kueue", "elastic-quota")


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.run against-kueue")
    parser.add_argument("--config", default="baseline", help="Kueue's config name, or a file")
    parser.add_argument("--only", choices=SYSTEMS, help="run one system alone")
    parser.add_argument("--api-qps", help="the operator's write budget (the chart's: 50)")
    parser.add_argument("--queue-policy", choices=("Block", "Priority"), default="")
    parser.add_argument("--dir", help="keep each run's files here (default: removed)")
    arguments = parser.parse_args(argv)
    plane, peer = build(), build_peer("kueue")
    config = Path(arguments.config)
    if not config.is_file():
        configs = peer.source() / "test" / "performance" / "scheduler" / "configs"
        config = configs / arguments.config / "generator.yaml"
        if not config.is_file():
            known = ", ".join(sorted(p.name for p in configs.iterdir()))
            parser.error(
                f"--config {arguments.config}: no such file or config of Kueue's ({known})"
            )
    shape = read_shape(config)
    print(
        f"{config}: {len(shape.cohorts)} cohorts, {len(shape.queues)} queues, "
        f"{shape.workloads:,} workloads",
        flush=True,
    )
    overrides = {"ELASTIC_QUOTA_API_QPS": arguments.api_qps} if arguments.api_qps else {}
    runs: list[Figures] = []
    with tempfile.TemporaryDirectory(prefix="eq-against-kueue-") as scratch:
        home = Path(arguments.dir or scratch)
        if arguments.only in (None, "kueue"):
            runs.append(run_kueue(peer, plane, config, shape, home / "kueue"))
            print(table(runs[-1:], [c.name for c in shape.classes]), flush=True)
        if arguments.only in (None, "elastic-quota"):
            figures = asyncio.run(
                run_product(plane, shape, home / "elastic-quota", overrides, arguments.queue_policy)
            )
            runs.append(figures)
            print(table(runs[-1:], [c.name for c in shape.classes]), flush=True)
    if len(runs) > 1:
        print("\nSide by side:\n" + table(runs, [c.name for c in shape.classes]))
