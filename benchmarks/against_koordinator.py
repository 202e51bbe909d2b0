"""Koordinator itself and the product given the same quota trees and pods on live objects, each
on a control plane of its own (the same binaries), their numbers compared group by group:

    python -m benchmarks.run against-koordinator [--trees 20] [--seed 1] [--dir DIR]

Koordinator's side is koord-scheduler v1.8.0 (koordinator_peer.py) scheduling pods that name it;
the product's is the chart installed by `helm install`, its webhook and operator, and the stock
kube-scheduler. Both planes have the same four kwok nodes (the chart's own Deployments scaled to
nothing, so that no pod of either plane is outside the trees).

For each tree of koordinator_trees.py, on both planes at once: the scheduler (koord-scheduler;
the operator) is stopped, the last tree and its pods are deleted, the new tree and the
borrowers' pods are made, and the scheduler is started again, so that it sees every request at
once and admits by the final runtimes, not by the order pods arrive in. Once both are settled,
each group's `runtime` and `request` annotations and `status.used` are compared. Then the owners'
pods are made, both take back what was lent (Koordinator's revoke, the product's reclaim, each
after the same delay and with no cap on evictions a round), and once settled the numbers are
compared again, with the pods each evicted. Pods of one group, priority and kind are alike, so
the evicted are compared as counts of those. docs/koordinator.md says what differs, and why.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks import koordinator_trees as trees
from benchmarks.koordinator_sides import (
    FIELDS,
    GROUPS,
    PODS,
    PROFILES,
    SETTLE_TIMEOUT,
    Reading,
    Side,
    depth,
    koordinator_side,
    product_side,
    shown,
)
from benchmarks.plane_api import Api, Unexpected
from scripts.control_plane.build import build

# -- one tree ----------------------------------------------------------------------------------


@dataclass
class Outcome:
    tree: trees.Tree
    readings: dict[str, list[Reading]] = field(default_factory=dict)  # by side: phase 1, 2

    def evicted(self, side: str) -> Counter[tuple[str, str, bool]]:
        """The borrowers' pods gone between the two readings, as (group, priority, preemptible)."""
        first, second = self.readings[side]
        kinds = {
            name: (s.group, s.priority or "(none)", s.preemptible)
            for s in self.tree.pods
            for name in self.tree.pod_names(s)
        }
        return Counter(kinds[name] for name in set(first.pods) - set(second.pods))

    def compared(self, phase: int) -> list[tuple[str, str, Any, Any]]:
        """(group, field, Koordinator's value, the product's) for every group and field."""
        a, b = (readings[phase] for readings in self.readings.values())
        return [
            (group, name, a.groups.get(group, {}).get(name), b.groups.get(group, {}).get(name))
            for group in sorted(set(a.groups) | set(b.groups))
            for name in FIELDS
        ]

    def differences(self) -> list[str]:
        sides = list(self.readings)
        found = [
            f"{self.tree.id} phase {phase + 1} {group} {name}: "
            f"{sides[0]} {shown(left)}, {sides[1]} {shown(right)}"
            for phase in (0, 1)
            for group, name, left, right in self.compared(phase)
            if left != right
        ]
        for side in sides:
            for phase, reading in enumerate(self.readings[side]):
                for group, values in reading.unsettled.items():
                    found.append(
                        f"{self.tree.id} phase {phase + 1} {group}: {side} still changing "
                        f"after {SETTLE_TIMEOUT:.0f} s: " + " / ".join(values)
                    )
        gone = [self.evicted(s) for s in sides]
        if gone[0] != gone[1]:
            both = ", ".join(f"{s} {_kinds(g)}" for s, g in zip(sides, gone, strict=True))
            found.append(f"{self.tree.id} evicted: {both}")
        return found


def _kinds(counter: Counter[tuple[str, str, bool]]) -> str:
    if not counter:
        return "none"
    return ", ".join(
        f"{n} of {g} at {p}{'' if pre else ' non-preemptible'}"
        for (g, p, pre), n in sorted(counter.items())
    )


async def play(side: Side, tree: trees.Tree) -> list[Reading]:
    """The tree on one plane: made with its scheduler stopped, then settled once with the
    borrowers' pods and once more with the owners' too."""
    await side.stop()
    await side.clear()
    groups = [trees.quota(tree, g) for g in tree.groups]
    if tree.pool:
        if not side.roots_from_profiles:
            await side.create(GROUPS, [trees.pool_root(tree)])
        else:
            await side.create(PROFILES, [trees.profile(tree)])
            await side.start()
            await _exists(side.api, f"{GROUPS}/{tree.root}")
            await side.stop()
    for level in (1, 2):  # parents before their children
        await side.create(GROUPS, [g for g in groups if depth(g) == level])
    await side.create(PODS, trees.pods(tree, 1, side.scheduler))
    await side.start()
    first = await side.settled(tree)
    await side.create(PODS, trees.pods(tree, 2, side.scheduler))
    second = await side.settled(tree)
    return [first, second]


async def _exists(api: Api, path: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            await api.send("GET", path)
            return
        except Unexpected as answer:
            if answer.status != 404 or time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.2)


# -- the command -----------------------------------------------------------------------------


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.run against-koordinator")
    parser.add_argument("--trees", type=int, default=20, help="how many trees (default 20)")
    parser.add_argument("--seed", type=int, default=1, help="the trees' seed (default 1)")
    parser.add_argument("--first", type=int, default=0, help="the first tree's index")
    parser.add_argument("--dir", help="keep the planes' files here (default: removed)")
    arguments = parser.parse_args(argv)
    asyncio.run(compare(arguments))


async def compare(arguments: argparse.Namespace) -> None:
    built = build()
    with tempfile.TemporaryDirectory(prefix="eq-against-koordinator-") as scratch:
        home = Path(arguments.dir or scratch)
        async with (
            koordinator_side(built, home / "koordinator") as koordinator,
            product_side(built, home / "elastic-quota") as ours,
        ):
            outcomes = []
            for index in range(arguments.first, arguments.first + arguments.trees):
                tree = trees.tree(index, arguments.seed)
                print(tree.describe(), flush=True)
                outcome = Outcome(tree)
                played = await asyncio.gather(play(koordinator, tree), play(ours, tree))
                outcome.readings = {koordinator.name: played[0], ours.name: played[1]}
                outcomes.append(outcome)
                for line in outcome.differences() or [f"{tree.id}: the same"]:
                    print("  " + line, flush=True)
            print(summary(outcomes))
            if arguments.dir:
                (home / "readings.json").write_text(json.dumps(_dump(outcomes), indent=1))


def _dump(outcomes: list[Outcome]) -> dict[str, Any]:
    return {
        o.tree.id: {side: [dataclasses.asdict(r) for r in rs] for side, rs in o.readings.items()}
        for o in outcomes
    }


def summary(outcomes: list[Outcome]) -> str:
    rows = []
    for outcome in outcomes:
        sides = list(outcome.readings)
        cells = []
        for phase in (0, 1):
            compared = outcome.compared(phase)
            for name in FIELDS:
                values = [(left, right) for _, field_, left, right in compared if field_ == name]
                cells.append(f"{sum(left == right for left, right in values)}/{len(values)}")
        bound = [
            " / ".join(str(sum(outcome.readings[s][phase].pods.values())) for s in sides)
            for phase in (0, 1)
        ]
        evicted = " / ".join(str(sum(outcome.evicted(s).values())) for s in sides)
        rows.append([outcome.tree.id, *cells, *bound, evicted])
    header = [
        "tree",
        *(f"{f} {p}" for p in ("1", "2") for f in FIELDS),
        *(f"bound {p} K / EQ" for p in ("1", "2")),
        "evicted K / EQ",
    ]
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    return "\n".join(
        "  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True))
        for row in [header, *rows]
    )
