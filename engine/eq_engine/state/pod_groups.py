"""The gangs the store holds: their minimum, whether they can be judged yet, their problems.

Pure reads of the gangs index and the PodGroups, of the store (the problems the engine
reports) or of a snapshot (the admission decision, `explain`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence, Set
from typing import Protocol

from ..model import KOORDINATOR, PodGroup, Problem
from ..numbers import Accounting
from .store import Member


class Gangs(Protocol):
    """What these reads need: a `Store`, or a `Snapshot` of it."""

    @property
    def pods(self) -> Mapping[str, Member]: ...
    @property
    def gangs(self) -> Mapping[str, Set[str]]: ...
    @property
    def pod_groups(self) -> Mapping[str, PodGroup]: ...
    @property
    def accounts(self) -> Accounting: ...


def gang_minimum(state: Gangs, gang: str, members: Sequence[Member]) -> int | None:
    """The gang's minimum: its PodGroup's, or (Koordinator's form) the first one its pods
    declare, oldest pod first."""
    if not gang.startswith(KOORDINATOR + ":"):
        group = state.pod_groups.get(gang)
        return None if group is None else group.minimum
    oldest = sorted(members, key=lambda m: (m.pod.created, m.pod.key))
    return next((m.pod.gang.minimum for m in oldest if m.pod.gang and m.pod.gang.minimum), None)


def gang_unready(state: Gangs, gang: str, members: Sequence[Member]) -> str | None:
    """Why a gang not admitted yet cannot be judged now; None: it can."""
    name = gang.partition(":")[2]
    groups = sorted({m.group for m in members})
    if len(groups) > 1:
        names = " and ".join(state.accounts.tree.groups[g].name for g in groups)
        return f"gang {name} has pods in groups {names}; a gang is admitted within one group"
    minimum = gang_minimum(state, gang, members)
    if minimum is None:
        return f"gang {name} has no valid minimum: {gang_problem(state, gang, members)}"
    if len(members) < minimum:
        return f"gang {name}: {len(members)} of its minimum {minimum} pods exist"
    return None


def gang_problem(state: Gangs, gang: str, members: Sequence[Member]) -> str:
    """What is wrong with the minimum of a gang that has none."""
    source, _, name = gang.partition(":")
    if source != KOORDINATOR:
        group = state.pod_groups.get(gang)
        if group is None:
            return f"its PodGroup {name} ({source}) does not exist"
        return f"PodGroup {name} ({source}) {group.problem}"
    problems = (m.pod.gang.problem for m in members if m.pod.gang and m.pod.gang.problem)
    return next(problems, "no minimum")


def gang_problems(state: Gangs) -> Iterator[Problem]:
    """One problem per gang whose pods sit in several groups or whose minimum is malformed,
    on its oldest pod (the one a user looks at first)."""
    for gang, keys in state.gangs.items():
        members = sorted(
            (state.pods[key] for key in keys), key=lambda m: (m.pod.created, m.pod.key)
        )
        oldest = members[0].pod
        field = "gang"
        if len({m.group for m in members}) > 1:
            why = gang_unready(state, gang, members)
        elif gang_minimum(state, gang, members) is None and _malformed(state, gang, members):
            why = gang_problem(state, gang, members)
            field = "gang minimum"
        else:
            continue
        yield Problem("Pod", oldest.key, field, why or "")


def _malformed(state: Gangs, gang: str, members: Sequence[Member]) -> bool:
    """Its minimum is written wrong (not merely its PodGroup not seen yet)."""
    if gang.startswith(KOORDINATOR + ":"):
        return True
    group = state.pod_groups.get(gang)
    return group is not None and group.problem is not None
