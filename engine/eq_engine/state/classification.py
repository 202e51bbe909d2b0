"""Over-quota labels (docs/how-it-works.md, "The numbers"): which scheduled pods run on the
group's guarantee.

A group's scheduled pods are ordered most important first: non-preemptible, then higher
priority, then earlier start, then name. A pod is `in-quota` while the running sum of requests
fits inside the group's effective min (its min, scaled down where min scaling applies), and
`over-quota` from the first pod that does not fit. Min 4 cpu, pods of 2, 2, 1 cpu in that
order: in-quota, in-quota, over-quota. The running pods of a gang are one unit, in the place of
its most important pod: all in-quota or all over-quota. Each pod's label is kept on its member
(`state.Member.label`), to report only the ones that change.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Sequence

import numpy as np

from ..model import Pod, keys
from ..numbers import Amounts
from ..tree import SYSTEM
from .store import Member


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


def running_units(members: Iterable[Member]) -> list[tuple[Member, ...]]:
    """A group's scheduled pods as units, most important first: a pod alone, or the running
    pods of one gang together, in the place of its most important pod. A gang is labelled, and
    reclaimed, as a whole: half a gang is of no use to anybody."""
    scheduled = [m for m in members if m.pod.scheduled]
    if not any(m.pod.gang for m in scheduled):  # the common case, kept cheap
        return [(m,) for m in sorted(scheduled, key=lambda m: importance(m.pod))]
    units: dict[str, list[Member]] = {}
    for member in scheduled:
        gang = member.pod.gang
        units.setdefault(member.pod.key if gang is None else gang.key, []).append(member)
    ordered = [sorted(unit, key=lambda m: importance(m.pod)) for unit in units.values()]
    ordered.sort(key=lambda unit: importance(unit[0].pod))
    return [tuple(unit) for unit in ordered]


def unit_request(unit: Sequence[Member]) -> Sequence[int]:
    if len(unit) == 1:
        return unit[0].request
    return [sum(amounts) for amounts in zip(*(m.request for m in unit), strict=True)]


class Labels:
    """Decides the capacity labels of the members of a group, kept on each member, and counts
    per group how many are over-quota."""

    def __init__(self) -> None:
        self._finished: dict[str, None] = {}  # labelled pods that finished: label to remove
        self.over_quota: list[int] = []
        """Per group: its pods labelled over-quota."""

    def finish(self, member: Member) -> None:
        """The pod finished: its label, if it has one, is removed at the next `relabel`."""
        if member.label is not None:
            self._finished[member.pod.key] = None

    def resume(self, key: str) -> None:
        """The pod runs again (a namesake of a finished one): its label is not removed."""
        self._finished.pop(key, None)

    def regroup(self, groups: int) -> None:
        """A new tree of `groups` groups: no count carries over."""
        self.over_quota = [0] * groups

    def relabel(
        self,
        groups: Iterable[int],
        members: Sequence[Collection[Member]],
        effective_min: Amounts,
        used: Amounts,
    ) -> dict[str, str | None]:
        """Decide again the labels of the pods of `groups` (`members` per group, on the
        accounting's columns, and `used`, the sum of their scheduled pods' requests); return the
        ones that changed, and the removals of the labels of pods that finished since the last
        call."""
        # A group whose scheduled pods all fit in its min has them all in-quota, in any order:
        # its running sums never exceed the last, requests being never negative.
        order = list(groups)  # the mask of these only: one pod's event relabels a few of 11,000
        fit: list[bool] = np.all(used[order] <= effective_min[order], axis=1).tolist()
        changes: dict[str, str | None] = {}
        for group, fits_all in zip(order, fit, strict=True):
            own = members[group]
            labels: dict[str, str | None]
            if group == SYSTEM:  # outside quota: no label
                labels = {m.pod.key: None for m in own if m.pod.scheduled}
            elif fits_all:
                labels = {m.pod.key: keys.IN_QUOTA for m in own if m.pod.scheduled}
            else:
                units = running_units(own)
                fits = fits_in_min((unit_request(u) for u in units), effective_min[group].tolist())
                labels = {
                    m.pod.key: keys.IN_QUOTA if ok else keys.OVER_QUOTA
                    for unit, ok in zip(units, fits, strict=True)
                    for m in unit
                }
            self.over_quota[group] = sum(1 for label in labels.values() if label == keys.OVER_QUOTA)
            for member in own:
                label = labels.get(member.pod.key)
                if member.label != label:
                    changes[member.pod.key] = label
                    member.label = label
        finished, self._finished = self._finished, {}
        return {**finished, **changes}
