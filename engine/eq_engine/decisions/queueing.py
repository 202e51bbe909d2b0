"""A group's queue behind the admission gate: its order, the budget each decision takes from,
and why a pod waits. Shared by a group's own decision (`admission`) and by the choice of a pool
for the pods that may use several (`placing`)."""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..model import Pod, format_quantity, listing


def queue_order(pod: Pod) -> tuple[int, float, str]:
    """Sort key of a group's waiting pods: higher priority first, then older first."""
    return (-pod.priority, pod.created, pod.key)


@dataclass(slots=True)
class Budget:
    """What a group may still admit: the headroom of its runtime and of its min. A tally for
    one decision: admitting a pod adds it to `taken` (and `locked`)."""

    names: Sequence[str]
    limited: Sequence[bool]
    """Per resource: the runtime limits it (a resource outside the max is not limited)."""
    runtime: Sequence[int]
    taken: list[int]
    """Used plus admitted and not yet scheduled, per resource."""
    min: Sequence[int]
    locked: list[int]
    """The same for non-preemptible pods, which must fit inside the min."""
    holders: list[str] = field(default_factory=list)
    """Pods admitted and not bound yet: named when a pod waits, since they hold the budget."""
    guaranteed: Sequence[bool] = ()
    """Per resource: the group's min names it (`within_min` looks at these only)."""

    def shortfall(self, request: Sequence[int], fixed: Sequence[int], what: str) -> str | None:
        """Why `request` (of which `fixed` is non-preemptible) does not fit now; None: it fits.
        `what` names what asks ("this pod", "gang team-a/job's 4 pods")."""
        short = [
            f"runtime {name} {_q(name, limit)}, used or admitted {_q(name, taken)}, "
            f"{what} {_q(name, want)}"
            for name, limited, limit, taken, want in zip(
                self.names, self.limited, self.runtime, self.taken, request, strict=True
            )
            if limited and want and taken + want > limit
        ]
        short += [
            f"min {name} {_q(name, floor)}, "
            f"non-preemptible used or admitted {_q(name, locked)}, {what} {_q(name, want)}"
            for name, limited, floor, locked, want in zip(
                self.names, self.limited, self.min, self.locked, fixed, strict=True
            )
            if limited and want and locked + want > floor
        ]
        if short and self.holders:
            short.append(f"admitted, not bound yet: {listing(sorted(self.holders))}")
        return "; ".join(short) or None

    def within_min(self, request: Sequence[int]) -> bool:
        """Whether `request` fits what the group's min leaves of what is taken, on each
        resource its min names: it borrows none of what others are guaranteed. (A resource
        its min leaves out, as a pool's cpu beside the GPUs a team is guaranteed, is nobody's
        guarantee at the team's level.)"""
        return all(
            not limited or not named or not want or taken + want <= floor
            for limited, named, taken, want, floor in zip(
                self.limited, self.guaranteed, self.taken, request, self.min, strict=True
            )
        )

    def hold(self, key: str, request: Sequence[int], preemptible: bool) -> None:
        """Count a pod admitted earlier that the scheduler has not bound yet."""
        self.take(request, request if not preemptible else [0] * len(request))
        self.holders.append(key)

    def take(self, request: Sequence[int], fixed: Sequence[int]) -> None:
        for i, want in enumerate(request):
            self.taken[i] += want
            self.locked[i] += fixed[i]


class Cause(enum.Enum):
    """What a pod behind the gate waits for."""

    QUOTA = "waiting for quota"
    """Room in its group: the pod (or its gang, or a pod ahead of it) does not fit now."""
    GANG = "waiting"
    """Its gang, which cannot be judged yet (too few pods, no minimum, several groups)."""
    REQUEUED = "requeued"
    """Its gang's backoff: taken back whole for not starting in time (`requeue`)."""


@dataclass(frozen=True, slots=True)
class Wait:
    """Why one pod waits: its cause, and the numbers or the gang that make it wait."""

    cause: Cause
    detail: str

    @property
    def message(self) -> str:
        """As the pod's Event says it: `waiting for quota: team-a needs cpu 500m more ...`."""
        return f"{self.cause.value}: {self.detail}"


@dataclass(frozen=True, slots=True)
class Entry:
    """One place in a group's queue: a pod, or the pods of a gang not admitted yet (in queue
    order), of which the first `minimum` go together."""

    pods: tuple[tuple[Pod, Sequence[int]], ...]
    gang: str = ""
    """The gang's `namespace/name`; empty: a single pod."""
    minimum: int = 1

    @property
    def order(self) -> tuple[int, float, str]:
        return queue_order(self.pods[0][0])


def sums(pods: Sequence[tuple[Pod, Sequence[int]]], width: int) -> tuple[list[int], list[int]]:
    """The summed request of `pods`, and of the non-preemptible ones among them."""
    request, fixed = [0] * width, [0] * width
    for pod, amounts in pods:
        for i, want in enumerate(amounts):
            request[i] += want
            if not pod.preemptible:
                fixed[i] += want
    return request, fixed


def _q(name: str, amount: int) -> str:
    return format_quantity(name, amount)
