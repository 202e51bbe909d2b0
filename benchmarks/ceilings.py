"""The highest churn rates the operator keeps up with (issue 26), against the emulated API server
(tests/apiserver), with its rate limit off (`--api-qps 0`) and at its default write budget:

    python -m benchmarks.ceilings [--only creates|binds] [--pods 100000] [--bisections 2]

Two shapes, each on one emulator seeded once (in a child process): pod creates and deletes on
2,000 pods and 108 groups (benchmarks/budget.py's churn: in turn a running pod created, which
needs its label, and a random one deleted), and binds of pending pods on 100,000 pods and 11,110
groups (benchmarks/scale.py's churn: each bound pod needs its capacity label; every step binds
pods that no step has bound before). On each, the real operator process runs first with its
rate limit off, then, restarted on the same objects (everything already right), with its
default flags. Each run is a search: short churns (SECONDS) at a rate doubled while the
operator keeps up, then halved between the highest rate kept up with and the lowest not (the
budget's searches start lower). "Kept up": every group's annotations and `status.used` right
(as the engine computes them from the objects) at a look within KEPT_UP seconds of the churn's
last event (LATE). Under the budget the labels come after the groups, so they are not part of
the verdict; each step still waits until the labels are right too before the next begins.
Printed per step: the rate asked for and the rate stored, the seconds until the groups were
right and until the labels were, and the operator's CPU per churn event (from /proc, from the
churn's start until everything was right, less its CPU when idle); then each ceiling.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import multiprocessing
import signal
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import aiohttp

from benchmarks import budget, scale
from benchmarks.preparing import prepare
from tests.operator.conftest import samples

IDLE = 0.5
"""Seconds of each window in which the operator's CPU is measured before a search, left alone.
Its CPU when idle is the least window once one is quiet (`QUIET`), or after `SETTLE` seconds:
right after a restart it may still be finishing its start-up, which would count against every
step. (Its predecessor leaves no write due: it is stopped once none is pending, `settled`.)"""
QUIET = 0.03
"""CPU seconds a second under which the operator is at rest (it is at 0-10 ms when it is)."""
SETTLE = 30.0
"""Seconds at most spent waiting for a quiet window."""
KEPT_UP = 2.0
"""Seconds from the churn's last event within which every group must be right."""
LATE = 0.05
"""How late a look due at KEPT_UP may start and still count: the emulator looks between its
other work (at 2,000 pods every 0.05 s; at 100,000 pods every `looking.TICK`, 0.1 s)."""
BUDGETS = (("rate limit off", ("--api-qps", "0")), ("default budget", ()))


@dataclass(frozen=True)
class Step:
    rate: float
    """Events a second asked for."""
    reached: float
    """Events a second the emulator stored."""
    events: int
    groups: float
    """Seconds from the churn's last event until every group was right."""
    labels: float
    """The same until every label was right."""
    cpu: float = 0.0
    """The operator's CPU seconds from the churn's start until everything was right, less what
    it spends idle in as long."""

    @property
    def kept_up(self) -> bool:
        return self.groups <= KEPT_UP + LATE

    def __str__(self) -> str:
        return (
            f"{self.rate:>8,.0f}/s asked, {self.reached:>8,.0f}/s stored ({self.events:,}): "
            f"groups right after {self.groups:5.2f} s {'kept up' if self.kept_up else 'behind'}, "
            f"labels {self.labels:5.2f} s, "
            f"{1000 * self.cpu / max(1, self.events):.3f} ms CPU each"
        )


Churn = Callable[[float, int], Awaitable[Step | None]]
"""A churn at a rate (the step's number given): its step, None if it cannot run."""


async def search(churn: Churn, first: float, bisections: int, pid: int) -> list[Step]:
    """Steps from `first`, doubled while kept up (halved while not, from the first), then
    `bisections` times between the highest rate kept up with and the lowest not."""
    windows: list[float] = []
    deadline = time.perf_counter() + SETTLE
    while len(windows) < 4 or (min(windows) > QUIET and time.perf_counter() < deadline):
        cpu, started = scale.process_cpu(pid), time.perf_counter()
        await asyncio.sleep(IDLE)
        windows.append((scale.process_cpu(pid) - cpu) / (time.perf_counter() - started))
    idle = min(windows)  # /proc counts in 10 ms ticks: within 0.02 s a second of the truth
    print(f"    idle: {1000 * idle:.0f} ms of CPU a second", flush=True)
    steps: list[Step] = []
    kept = behind = None
    rate, left = first, bisections
    while left >= 0 and len(steps) < 12:
        cpu, started = scale.process_cpu(pid), time.perf_counter()
        step = await churn(rate, len(steps))
        if step is None:
            print("    (no pending pods left for a step at that rate)", flush=True)
            break
        cpu = scale.process_cpu(pid) - cpu - idle * (time.perf_counter() - started)
        step = dataclasses.replace(step, cpu=cpu)
        steps.append(step)
        print("   ", step, flush=True)
        if step.kept_up:
            kept = rate if kept is None else max(kept, rate)
        else:
            behind = rate if behind is None else min(behind, rate)
        if kept is not None and behind is not None:
            rate, left = (kept + behind) / 2, left - 1
        else:
            rate = rate * 2 if behind is None else rate / 2
    return steps


def ceiling(steps: list[Step], unit: str) -> str:
    kept = [s for s in steps if s.kept_up]
    if not kept:
        return "none kept up with"
    best = max(kept, key=lambda s: s.reached)
    above = [s.reached for s in steps if not s.kept_up and s.rate > best.rate]
    return (
        f"{best.reached:,.0f} {unit}/s kept up with"
        + (f" (not {min(above):,.0f})" if above else " (none above tried)")
        + f", {1000 * best.cpu / max(1, best.events):.3f} ms of operator CPU per {unit[:-1]}"
    )


async def both_budgets(
    url: str,
    first: Callable[[], Awaitable[None]],
    churn: Churn,
    starts: tuple[float, float],
    bisections: int,
) -> dict[str, list[Step]]:
    """The search with the operator's rate limit off, from `starts[0]`, then with it
    restarted at its default budget, from `starts[1]`; `first`: awaited once the first
    operator is ready, until everything is right."""
    results: dict[str, list[Step]] = {}
    with tempfile.TemporaryDirectory() as scratch:
        for (name, flags), rate in zip(BUDGETS, starts, strict=True):
            operator, probes = scale.start(url, Path(scratch), *flags)
            try:
                await scale.ready(probes, operator, timeout=600)
                if not results:
                    await first()
                print(f"  {name}:", flush=True)
                results[name] = await search(churn, rate, bisections, operator.pid)
                await settled(probes)
            finally:
                operator.send_signal(signal.SIGTERM)
                operator.wait(60)
    return results


async def settled(probes: str, timeout: float = 600) -> None:
    """Until the operator has no write pending (its `elastic_quota_writes_pending`): a search's
    last step ends when as many labels as binds were written, while labels of pods that the
    binds moved across their group's min may still be due, and an operator restarted after
    it would write them at its budget's pace while its CPU at rest is measured."""
    deadline = time.time() + timeout
    async with aiohttp.ClientSession() as session:
        while time.time() < deadline:
            async with session.get(probes + "/metrics") as response:
                page = await response.text()
            if not any(s.value for s in samples(page, "elastic_quota_writes_pending")):
                return
            await asyncio.sleep(0.1)
    raise TimeoutError(f"writes still pending after {timeout} s")


SECONDS = {"creates": 3.0, "binds": 1.5}
"""How long each step's churn lasts."""


async def creates_and_deletes(bisections: int) -> dict[str, list[Step]]:
    receive, send = multiprocessing.Pipe()
    server = multiprocessing.Process(target=budget.serve, args=(send,), daemon=True)
    server.start()
    url = receive.recv()

    async def first() -> None:
        receive.send("started")
        await asyncio.to_thread(receive.recv)  # the first labelling done

    async def churn(rate: float, number: int) -> Step:
        receive.send((rate, SECONDS["creates"], 100 + number))
        r = await asyncio.to_thread(receive.recv)
        return Step(rate, r["offered"], int(rate * SECONDS["creates"]), r["groups"], r["labels"])

    print("pod creates and deletes, 2,000 pods, 108 groups", flush=True)
    try:
        return await both_budgets(url, first, churn, (2000.0, 10.0), bisections)
    finally:
        server.terminate()


async def binds(pods: int, bisections: int) -> dict[str, list[Step]]:
    receive, send = multiprocessing.Pipe()
    server = multiprocessing.Process(target=scale.serve, args=(pods, 1, send), daemon=True)
    server.start()  # it seeds while this process computes what the engine wants
    made = scale.objects(pods)
    pending = sum(1 for p in made[1] if not p["spec"].get("nodeName"))
    want = scale.expected(pods, 1, made=made)
    url = receive.recv()
    receive.send(want)
    bound = 0

    async def first() -> None:
        await asyncio.to_thread(receive.recv)  # every group right, every label written

    async def churn(rate: float, number: int) -> Step | None:
        nonlocal bound
        seconds = SECONDS["binds"]
        count = int(rate * seconds)
        if count < 1 or bound + count > pending:
            return None
        after, _, _ = scale.expected(pods, 1, bound=bound + count, made=made)
        bound += count
        receive.send(("churn", rate, after, seconds))
        r = await asyncio.to_thread(receive.recv)
        return Step(rate, r["offered"], int(r["bound"]), r["groups"], r["drain"])

    print(f"binds that each need a label, {pods:,} pods ({pending:,} pending), 11,110 groups")
    try:
        return await both_budgets(url, first, churn, (1000.0, 32.0), bisections)
    finally:
        server.terminate()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--only", choices=("creates", "binds"), default=None)
    parser.add_argument("--pods", type=int, default=100_000, help="for the binds")
    parser.add_argument(
        "--bisections", type=int, default=2, help="steps between the rates kept up and not"
    )
    args = parser.parse_args(argv)
    prepare()
    started = time.perf_counter()
    results: dict[str, dict[str, list[Step]]] = {}
    if args.only in (None, "creates"):
        results["events: pod creates and deletes on 2,000 pods"] = asyncio.run(
            creates_and_deletes(args.bisections)
        )
    if args.only in (None, "binds"):
        results[f"binds: each needing its label, on {args.pods:,} pods"] = asyncio.run(
            binds(args.pods, args.bisections)
        )
    print(f"ceilings: groups right within {KEPT_UP:g} s of the churn's end")
    for shape, runs in results.items():
        for name, steps in runs.items():
            print(f"  {shape}, {name}: {ceiling(steps, shape.split(':')[0])}")
    print(f"  ({time.perf_counter() - started:.0f} s in all)")


if __name__ == "__main__":
    main()
