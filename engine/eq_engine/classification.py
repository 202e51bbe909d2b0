"""Over-quota labels (DESIGN.md): which scheduled pods run on the group's guarantee.

A group's scheduled pods are ordered most important first: non-preemptible, then higher
priority, then earlier start, then name. A pod is `in-quota` while the running sum of requests
fits inside the group's effective min (its min, scaled down where min scaling applies), and
`over-quota` from the first pod that does not fit. Min 4 cpu, pods of 2, 2, 1 cpu in that
order: in-quota, in-quota, over-quota.
"""

from __future__ import annotations

import math

import numpy as np

from .integers import Amounts
from .objects import Pod


def importance(pod: Pod) -> tuple[bool, int, float, str, str]:
    """Sort key, most important first; reclaim walks the same order backwards."""
    started = math.inf if pod.start_time is None else pod.start_time
    return (pod.preemptible, -pod.priority, started, pod.namespace, pod.name)


def fits_in_min(requests: Amounts, effective_min: Amounts) -> list[bool]:
    """For requests (rows, most important first): whether each pod is in-quota."""
    if not len(requests):
        return []
    running = np.cumsum(requests, axis=0)
    fits: list[bool] = np.all(running <= effective_min, axis=1).tolist()
    return fits
