"""Over-quota labels (DESIGN.md): which scheduled pods run on the group's guarantee.

A group's scheduled pods are ordered most important first: non-preemptible, then higher
priority, then earlier start, then name. A pod is `in-quota` while the running sum of requests
fits inside the group's effective min (its min, scaled down where min scaling applies), and
`over-quota` from the first pod that does not fit. Min 4 cpu, pods of 2, 2, 1 cpu in that
order: in-quota, in-quota, over-quota.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from .objects import Pod


def importance(pod: Pod) -> tuple[bool, int, float, str, str]:
    """Sort key, most important first; reclaim walks the same order backwards."""
    started = math.inf if pod.start_time is None else pod.start_time
    return (pod.preemptible, -pod.priority, started, pod.namespace, pod.name)


def fits_in_min(requests: Iterable[Sequence[int]], effective_min: Sequence[int]) -> list[bool]:
    """For requests (most important first): whether each pod is in-quota.

    Plain integers: groups hold a handful of pods, where numpy's per-call cost dominates.
    Requests are never negative, so once the running sum leaves the min it stays out.
    """
    running = [0] * len(effective_min)
    fits, inside = [], True
    for request in requests:
        if inside:
            running = [total + amount for total, amount in zip(running, request, strict=True)]
            inside = all(
                total <= limit for total, limit in zip(running, effective_min, strict=True)
            )
        fits.append(inside)
    return fits
