"""Admission of pod groups (issue 24): 2,000 gangs of 8 pods (16,000 gated pods) over 100
groups, next to the same 16,000 pods as single pods.

    python -m benchmarks.gangs [--runs 3] [--rounds 5]

Each gang is 8 pods of 1 CPU with Koordinator's annotations (`gang.scheduling.koordinator.sh/
name`, `min-available` 8); each group has 20 gangs. Two measures:

- the engine's admission round: `admissions(snapshot)` over the whole cluster, in this process,
  `--rounds` times on the same state, when every group has room for all of its 160 pods (all
  admitted), when it has room for 7 CPUs (every gang waits behind the first, with its reason),
  and when every gang is one pod short of its minimum (min-available 9); the same pods without
  the annotations, as single pods, for comparison;
- end to end, as `benchmarks/admission.py` measures single pods (`admission.admit`): the real
  operator process (`--api-qps 0`) against the emulated API server, the pods created through
  the API, every group with room for all of them, until every gate is lifted; `--runs` runs
  each of the gangs made gang after gang (a Job's pods in a burst, as the Job controller makes
  them), the gangs interleaved (every gang's first pod, then every gang's second, ...: every
  gang is short of pods until the last 2,000 pods come), and the single pods.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import itertools
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

from eq_engine.decisions import admissions

from benchmarks import admission
from benchmarks.preparing import prepare
from tests.manifests import pod, run

GANGS, SIZE = 20, 8
"""Per group: gangs, and pods per gang."""
PODS = admission.GROUPS * GANGS * SIZE
ROOMY, TIGHT = GANGS * SIZE, SIZE - 1
"""CPUs per group: room for every pod, or for one pod short of a gang."""


def gated_pods(
    *, gangs: bool = True, minimum: int = SIZE, interleaved: bool = False
) -> list[dict[str, Any]]:
    """Every group's gangs' pods, gang after gang (`interleaved`: every gang's first pod, then
    every gang's second, ...); `gangs` False: the same pods without the gang annotations."""
    places = itertools.product(range(GANGS), range(admission.GROUPS), range(SIZE))
    pods = []
    for j, g, i in sorted(places, key=lambda p: (p[2], p[0], p[1]) if interleaved else p):
        raw = pod(
            f"train-{j:02}-{i}",
            namespace=f"team-{g:03}",
            node=None,
            gated=True,
            cpu="1",
            priority=j % 7,
        )
        if gangs:
            raw["metadata"]["annotations"] = {
                "gang.scheduling.koordinator.sh/name": f"train-{j:02}",
                "gang.scheduling.koordinator.sh/min-available": str(minimum),
            }
        pods.append(raw)
    return pods


def groups(per_group: int) -> list[dict[str, Any]]:
    """The groups with room for `per_group` CPUs each, on nodes with room for every pod."""
    return admission.groups(per_group, nodes=PODS // 1000 + 1)


def engine_rounds(
    pods: Sequence[dict[str, Any]], per_group: int, rounds: int
) -> tuple[list[float], int]:
    """The seconds of `rounds` admission rounds on one engine, and the pods a round admits."""
    snapshot = run(*groups(per_group), *pods).recompute()
    times, admitted = [], 0
    for _ in range(rounds):
        gc.collect()  # not the building's garbage
        started = time.perf_counter()
        decided = admissions(snapshot)
        times.append(time.perf_counter() - started)
        admitted = len(decided.admitted)
    return times, admitted


Pods = Callable[[], list[dict[str, Any]]]
ENGINE_CASES: dict[str, tuple[Pods, int]] = {
    "gangs, room for all": (lambda: gated_pods(), ROOMY),
    "gangs, room for 7 CPUs": (lambda: gated_pods(), TIGHT),
    "gangs, each short of a pod": (lambda: gated_pods(minimum=SIZE + 1), ROOMY),
    "single pods, room for all": (lambda: gated_pods(gangs=False), ROOMY),
    "single pods, room for 7 CPUs": (lambda: gated_pods(gangs=False), TIGHT),
}
END_TO_END: dict[str, Pods] = {
    "gangs, gang after gang": lambda: gated_pods(),
    "gangs, interleaved": lambda: gated_pods(interleaved=True),
    "single pods": lambda: gated_pods(gangs=False),
}


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="end-to-end runs of each kind")
    parser.add_argument("--rounds", type=int, default=5, help="engine rounds of each kind")
    return parser.parse_args()


async def main() -> None:
    options = arguments()
    prepare()
    print(f"engine admission round, {PODS:,} gated pods in {admission.GROUPS} groups")
    print(f"{'':<40} {'ms (' + str(options.rounds) + ' rounds)':>14}   µs a pod   admitted")
    for what, (pods, per_group) in ENGINE_CASES.items():
        times, admitted = engine_rounds(pods(), per_group, options.rounds)
        each = statistics.median(times) / PODS * 1e6
        took = admission.span([t * 1000 for t in times], ".0f")
        print(f"  {what:<38} {took:>14}   {each:8.1f}   {admitted:>8,}")
    for what, pods in END_TO_END.items():
        print(f"\nend to end: {what}")
        runs = [await admission.admit(groups(ROOMY), pods()) for _ in range(options.runs)]
        admission.report(runs, "gated pods")


if __name__ == "__main__":
    asyncio.run(main())
