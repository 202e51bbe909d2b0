"""Over-quota labels (docs/how-it-works.md, "The numbers"): which scheduled pods run on the
group's guarantee.

A group's scheduled pods are ordered most important first: non-preemptible, then higher
priority, then earlier start, then name. A pod is `in-quota` while the running sum of requests
fits inside the group's effective min (its min, scaled down where min scaling applies), and
`over-quota` from the first pod that does not fit. Min 4 cpu, pods of 2, 2, 1 cpu in that
order: in-quota, in-quota, over-quota. `Labels` keeps every pod's label, to report only the
ones that change.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Sequence

from .integers import Amounts
from .keys import IN_QUOTA, OVER_QUOTA
from .objects import Pod
from .state import Member
from .tree import SYSTEM


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


class Labels:
    """The capacity label of every scheduled pod, and per group how many are over-quota."""

    def __init__(self) -> None:
        self._labels: dict[str, str] = {}
        self._finished: dict[str, None] = {}  # labelled pods that finished: label to remove
        self.over_quota: list[int] = []
        """Per group: its pods labelled over-quota."""

    def get(self, key: str) -> str | None:
        return self._labels.get(key)

    def finish(self, key: str) -> None:
        """The pod finished: its label, if it has one, is removed at the next `relabel`."""
        if key in self._labels:
            self._finished[key] = None

    def resume(self, key: str) -> None:
        """The pod runs again (a namesake of a finished one): its label is not removed."""
        self._finished.pop(key, None)

    def forget(self, key: str) -> None:
        self._labels.pop(key, None)

    def regroup(self, groups: int) -> None:
        """A new tree of `groups` groups: no count carries over."""
        self.over_quota = [0] * groups

    def relabel(
        self, groups: Iterable[int], members: Sequence[Collection[Member]], effective_min: Amounts
    ) -> dict[str, str | None]:
        """Decide again the labels of the pods of `groups` (`members` per group, on the
        accounting's columns); return the ones that changed, and the removals of the labels of
        pods that finished since the last call."""
        changes: dict[str, str | None] = {}
        for group in groups:
            own = members[group]
            scheduled = sorted((m for m in own if m.pod.scheduled), key=lambda m: importance(m.pod))
            labels: dict[str, str | None]
            if group == SYSTEM:  # outside quota: no label
                labels = {m.pod.key: None for m in scheduled}
            else:
                fits = fits_in_min((m.request for m in scheduled), effective_min[group].tolist())
                labels = {
                    m.pod.key: IN_QUOTA if ok else OVER_QUOTA
                    for m, ok in zip(scheduled, fits, strict=True)
                }
            self.over_quota[group] = sum(1 for label in labels.values() if label == OVER_QUOTA)
            for member in own:
                label = labels.get(member.pod.key)
                if self._labels.get(member.pod.key) != label:
                    changes[member.pod.key] = label
                    if label is None:
                        del self._labels[member.pod.key]
                    else:
                        self._labels[member.pod.key] = label
        finished, self._finished = self._finished, {}
        return {**finished, **changes}
