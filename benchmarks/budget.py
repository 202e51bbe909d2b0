"""The operator within the default write budget (`--api-qps` 50, `--api-burst` 100), against the
emulated API server (tests/apiserver): issue 26's scenario, as a new user would run it.

    python -m benchmarks.budget [--runs 3] [--rate 4500] [--seconds 10] [--api-qps 50]

2,000 pods in 108 groups (benchmarks/cluster.py: 5 departments x 4 teams x 4 sub-teams of 25
pods, about 3 in 4 running, and the 3 built-in groups the operator creates) and 1,500 nodes are
in the API server before the real `elastic-quota operator` process starts with its default
flags. Printed for each run: the first labelling (pods labelled, seconds from the start until
every label was right, against the budget's pace: two writes per group and one per label, less
the burst, at `--api-qps`), then churn: `rate` pod events a second
for `seconds` (in turn the creation of a running pod, which needs its label, and the deletion
of a random one), and the seconds from the churn's last event until every group's annotations
were right, then their `status.used` too, then every pod's label. The emulator runs in a child
process and judges on its own objects, a look every 0.05 s.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import random
import signal
import tempfile
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from eq_operator.settings import OperatorSettings

from benchmarks import cluster, emulator
from benchmarks.preparing import prepare
from benchmarks.scale import ready, start
from tests.apiserver import ApiServer
from tests.kube import NODES, PODS, QUOTAS, stored
from tests.operator.test_accounting import actual, computed

SHAPE = {"departments": 5, "teams": 4, "subteams": 4}
PER_SUBTEAM = 25
DEFAULTS = OperatorSettings()
"""The operator's defaults: its `--api-qps` and `--api-burst` set the budget's pace."""
LOOK = 0.05
"""Seconds between two looks at the objects (a look at 2,000 pods costs the emulator ~1 ms)."""


def annotation_fields(groups: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The groups' fields without `status.used`."""
    return {name: {k: v for k, v in f.items() if k != "status.used"} for name, f in groups.items()}


class Judge:
    """What the emulator holds against what the engine computes from the same objects."""

    def __init__(self, api: ApiServer, pods: list[dict[str, Any]] | None = None) -> None:
        """`pods`: those the emulator will hold (by default, those it holds)."""
        self.api = api
        want_groups, self.want_labels = computed(
            stored(api, QUOTAS), stored(api, NODES), stored(api, PODS) if pods is None else pods
        )
        self.want_groups = want_groups
        self.want_annotations = annotation_fields(want_groups)

    def look(self) -> tuple[bool, bool, bool]:
        """Whether the annotations, the groups' fields and the labels are right."""
        groups, labels = actual(self.api)
        have = {name: fields for name, fields in groups.items() if name in self.want_groups}
        return (
            annotation_fields(have) == self.want_annotations,
            have == self.want_groups,
            labels == self.want_labels,
        )


async def until_right(judge: Judge, since: float, timeout: float = 600) -> list[float]:
    """Seconds after `since` when the annotations, then the groups, then the labels were
    right (each the first look that found it so)."""
    found: list[float | None] = [None, None, None]
    while None in found:
        now = time.perf_counter()
        if now - since > timeout:
            raise TimeoutError(f"not right {timeout:.0f} s after: {found}")
        for i, right in enumerate(judge.look()):
            if right and found[i] is None:
                found[i] = now - since
        await asyncio.sleep(LOOK)
    return [f for f in found if f is not None]


async def churn(api: ApiServer, rate: float, seconds: float, seed: int = 7) -> dict[str, float]:
    """`rate` pod events a second for `seconds`: a running pod created, a random one deleted,
    in turn; then the seconds until everything was right, and the writes meanwhile. The events
    and what the engine computes after them are made beforehand: only storing them is timed.
    Churns one after another on the same emulator each want their own `seed` (the created
    pods' names are drawn from it)."""
    resource = api.catalog.named("pods")
    rng = random.Random(seed)
    live = {f"{p['metadata']['namespace']}/{p['metadata']['name']}": p for p in stored(api, PODS)}
    leaves = sorted({body["metadata"]["namespace"] for body in live.values()})
    intensity = {leaf: rng.uniform(0.2, 2.5) for leaf in leaves}
    total = int(rate * seconds)
    events: list[dict[str, Any] | str] = []  # a pod to create, or the key of one to delete
    for i in range(total):
        if i % 2 == 0:
            leaf = rng.choice(leaves)
            body = cluster.pod(rng, leaf, 1000 + i // 2, intensity[leaf], scheduled=True)
            live[f"{leaf}/{body['metadata']['name']}"] = body
            events.append(body)
        else:
            key = rng.choice(list(live))
            del live[key]
            events.append(key)
    judge = Judge(api, list(live.values()))

    def group_writes() -> int:
        return api.count("patch", "elasticquotas") + api.count("patch", "elasticquotas", "status")

    labels, groups = api.count("patch", "pods"), group_writes()
    done, start = 0, time.perf_counter()
    while done < total:
        due = min(total, int((time.perf_counter() - start) * rate))
        for event in events[done:due]:
            if isinstance(event, str):
                api.storage.remove(resource, event)
            else:
                api.storage.put(resource, event, type="ADDED")
        done = max(done, due)
        await asyncio.sleep(0.005)
    ended = time.perf_counter()
    during = {"labels": api.count("patch", "pods") - labels, "groups": group_writes() - groups}
    found = await until_right(judge, ended)
    return {
        "offered": total / (ended - start),
        "label_writes": during["labels"] / (ended - start),
        "group_writes": during["groups"] / (ended - start),
        "annotations": found[0],
        "groups": found[1],
        "labels": found[2],
    }


def serve(conn: Connection) -> None:
    """The emulator: seeded, then timing the first labelling from the operator's start (told
    on `conn`), then a churn on each request `(rate, seconds, seed)`, its figures sent back."""

    async def main() -> None:
        api = ApiServer()
        api.seed(
            *cluster.quotas(**SHAPE),
            *cluster.nodes(),
            *cluster.pods(per_subteam=PER_SUBTEAM, **SHAPE),
        )
        await api.start()
        conn.send(api.url)
        await asyncio.to_thread(conn.recv)  # the operator started
        started = time.perf_counter()
        while api.count("create", "elasticquotas") < 3:  # the built-in groups
            await asyncio.sleep(LOOK)
        judge = Judge(api)
        first = await until_right(judge, started)
        labelled = sum(1 for label in judge.want_labels.values() if label is not None)
        report: dict[str, Any] = {
            "labelled": labelled,
            "group_count": len(judge.want_groups),
            "first_groups": first[1],
            "first_labels": first[2],
        }
        conn.send(report)
        while True:
            rate, seconds, seed = await asyncio.to_thread(conn.recv)
            conn.send(await churn(api, rate, seconds, seed))

    emulator.run(main)


async def run(rate: float, seconds: float, qps: float | None) -> dict[str, Any]:
    receive, send = multiprocessing.Pipe()
    server = multiprocessing.Process(target=serve, args=(send,), daemon=True)
    server.start()
    url = receive.recv()
    flags = () if qps is None else ("--api-qps", f"{qps:g}")
    with tempfile.TemporaryDirectory() as scratch:
        receive.send("started")
        operator, probes = start(url, Path(scratch), *flags)
        try:
            await ready(probes, operator, timeout=120)
            result: dict[str, Any] = await asyncio.to_thread(receive.recv)
            receive.send((rate, seconds, 7))
            result.update(await asyncio.to_thread(receive.recv))
        finally:
            operator.send_signal(signal.SIGTERM)
            operator.wait(60)
    server.terminate()
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--rate", type=float, default=4500.0, help="pod events/s of churn")
    parser.add_argument("--seconds", type=float, default=10.0, help="how long the churn lasts")
    parser.add_argument("--api-qps", type=float, default=None, help="default: the operator's")
    args = parser.parse_args()
    prepare()
    budget = "default budget" if args.api_qps is None else f"--api-qps {args.api_qps:g}"
    qps = DEFAULTS.api_qps if args.api_qps is None else args.api_qps
    for run_ in range(args.runs):
        r = asyncio.run(run(args.rate, args.seconds, args.api_qps))
        print(f"run {run_ + 1}: {r['group_count']} groups, 2,000 pods, {budget}")
        pace = (2 * r["group_count"] + r["labelled"] - DEFAULTS.api_burst) / qps
        print(
            f"  first labelling: {r['labelled']:,} pods, every label right after "
            f"{r['first_labels']:.1f} s (the budget's pace, (2G + N - burst) / qps: {pace:.1f} s;"
            f" every group right after {r['first_groups']:.1f} s)"
        )
        print(
            f"  churn: {r['offered']:,.0f} pod events/s for {args.seconds:g} s; meanwhile "
            f"{r['label_writes']:.0f} label and {r['group_writes']:.0f} group writes/s"
        )
        print(
            f"  after the churn's end: every group's annotations right after "
            f"{r['annotations']:.2f} s (target <= 5 s), with status.used {r['groups']:.2f} s, "
            f"every label {r['labels']:.1f} s"
        )


if __name__ == "__main__":
    main()
