"""Gangs that cannot start: a gang the gate admitted whose minimum is not Ready within a timeout
is taken back whole, and waits behind the gate again after a backoff (Kueue's `waitForPodsReady`
and its requeuing strategy; Koordinator's gang waiting time; YuniKorn's placeholder timeout).

The gate admits a gang on quota alone; whether its pods run is the nodes' to decide, and a gang
placed in part holds its group's room and does nothing. `stalled` names the gangs admitted
`timeout` seconds ago or more whose Ready pods are fewer than their minimum, each with every pod
of it (those on no node too: they hold the room); the edge evicts them, their controllers make
them again behind the gate, and `admissions` leaves a requeued gang waiting until its backoff
ends (`backoff`: doubling per requeue, capped), without holding its group's queue: the room it
held is for others meanwhile. `started` says which gangs need no more timing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ..state import Member, Snapshot, gang_minimum


@dataclass(frozen=True, slots=True)
class Stall:
    """An admitted gang that did not start in time."""

    gang: str
    """Its key (`GangRef.key`)."""
    group: str
    pods: tuple[str, ...]
    """Every pod of it that is not leaving, by key."""
    ready: int
    minimum: int

    @property
    def name(self) -> str:
        """`namespace/name`, as users write it."""
        return self.gang.partition(":")[2]


def stalled(
    snapshot: Snapshot, admitted: Mapping[str, float], *, now: float, timeout: float
) -> list[Stall]:
    """The gangs admitted at the given times (seconds since the epoch, by key) whose minimum is
    not Ready `timeout` seconds after: a gang admitted at 100 with minimum 4 and 3 Ready pods
    is not stalled at 350 (timeout 300), and is at 400."""
    stalls = []
    for gang, since in admitted.items():
        if now - since < timeout:
            continue
        members, minimum = _members(snapshot, gang)
        ready = sum(m.pod.ready for m in members)
        if minimum is not None and ready < minimum:
            keys = tuple(sorted(m.pod.key for m in members))
            group = snapshot.tree.groups[members[0].group].name
            stalls.append(Stall(gang, group, keys, ready, minimum))
    return stalls


def started(snapshot: Snapshot, gangs: Iterable[str]) -> dict[str, bool | None]:
    """Of each of `gangs`: True once its minimum is Ready, False while not, None when it has no
    pods (or no minimum): gone, or between its pods and those its controller makes again."""
    found: dict[str, bool | None] = {}
    for gang in gangs:
        members, minimum = _members(snapshot, gang)
        found[gang] = None if minimum is None else sum(m.pod.ready for m in members) >= minimum
    return found


def _members(snapshot: Snapshot, gang: str) -> tuple[list[Member], int | None]:
    """The gang's pods that are not leaving, and its minimum (None: no pods, or no minimum)."""
    pods = snapshot.pods
    members = [pods[k] for k in snapshot.gangs.get(gang, ()) if k in pods]
    members = [m for m in members if not m.pod.terminating]
    return members, gang_minimum(snapshot, gang, members) if members else None


def backoff(times: int, *, base: float, cap: float) -> float:
    """Seconds a gang requeued `times` times waits before the gate admits it again: `base`
    doubling per requeue, at most `cap` (60, 120, 240, ... 3,600 by default, Kueue's)."""
    return min(cap, base * float(2 ** min(64, max(0, times - 1))))
