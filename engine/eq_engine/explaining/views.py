"""Gangs as a user checks them: the form that declares each one, its pods against its minimum,
its summed request, how far it got through the admission gate, and what keeps it from being
judged.

Pure reads of a recompute's snapshot (its gang index and PodGroups), for
`explain` and the CLI's reports; the decisions are `admission.py`'s, and a view repeats none of
them. A gang of 4 pods of 500m, minimum 4, none admitted: `pods` the 4 keys in queue order,
`request` cpu 2, `core_request` cpu 2 (its first 4 pods, which go together), `gated` all 4.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from ..decisions import queue_order
from ..model import POD_GROUP_KINDS, PodGroupKind, gangs
from ..state import Member, Snapshot, gang_minimum, gang_problem, gang_unready


@dataclass(frozen=True, slots=True)
class GangView:
    key: str
    """`source:namespace/name` (`gangs.GangRef.key`): the same name in two forms is two gangs."""
    name: str
    """`namespace/name`."""
    source: str
    """The form that declares it, as a user finds it on the pods or the PodGroup."""
    groups: tuple[str, ...]
    """The quota groups of its pods: one, unless the gang is split."""
    pods: tuple[str, ...]
    """Its pods (those not finished), in queue order: the first `minimum` go together."""
    minimum: int | None
    """None: it has no valid one (`problem` says why)."""
    minimum_from: str
    """Where the minimum is written."""
    gated: tuple[str, ...]
    """Its pods still behind the admission gate."""
    bound: int
    """Its pods bound to a node."""
    request: Mapping[str, int]
    """The summed request of all its pods."""
    core_request: Mapping[str, int]
    """The summed request of its first `minimum` pods (all, without a minimum): what the gate
    admits together."""
    unready: str | None
    """Why a gang not admitted yet cannot be judged now (pods in several groups, no valid
    minimum, fewer pods than its minimum); None: it can."""
    problem: str | None
    """What is wrong with the gang itself (split across groups, a missing or malformed
    minimum), as `Snapshot.problems` reports it; None: nothing."""

    @property
    def admitted(self) -> bool:
        """Some of its pods are past the gate: its members behind it go as single pods."""
        return len(self.gated) < len(self.pods)


def gang_view(snapshot: Snapshot, key: str) -> GangView:
    """The gang `key` (`gangs.GangRef.key`) as the engine holds it; KeyError: no pod names it."""
    members = sorted(
        (snapshot.pods[k] for k in snapshot.gangs[key]), key=lambda m: queue_order(m.pod)
    )
    minimum = gang_minimum(snapshot, key, members)
    groups = tuple(sorted({snapshot.tree.groups[m.group].name for m in members}))
    unready = gang_unready(snapshot, key, members)
    if len(groups) > 1:
        problem = unready
    elif minimum is None:
        problem = gang_problem(snapshot, key, members)
    else:
        problem = None
    keys = tuple(m.pod.key for m in members)
    core = keys[: minimum or len(keys)]
    return GangView(
        key=key,
        name=key.partition(":")[2],
        source=_source(key, members),
        groups=groups,
        pods=keys,
        minimum=minimum,
        minimum_from=_minimum_from(key, members),
        gated=tuple(k for k in keys if k in snapshot.gated),
        bound=sum(bool(m.pod.node_name) for m in members),
        request=_summed(snapshot, keys),
        core_request=_summed(snapshot, core),
        unready=unready,
        problem=problem,
    )


def gang_views(snapshot: Snapshot) -> Iterator[GangView]:
    """Every gang the engine holds, by key."""
    for key in sorted(snapshot.gangs):
        yield gang_view(snapshot, key)


def _summed(snapshot: Snapshot, keys: Sequence[str]) -> dict[str, int]:
    total: dict[str, int] = {}
    for key in keys:
        for name, amount in snapshot.pod_request(key).items():
            total[name] = total.get(name, 0) + amount
    return total


def _source(key: str, members: Sequence[Member]) -> str:
    """`annotation gang.scheduling.koordinator.sh/name (Koordinator)`, or the PodGroup API and
    how its pods name the object."""
    source = key.partition(":")[0]
    if source == gangs.KOORDINATOR:
        field = (
            f"label {gangs.LIGHT_NAME}"
            if any(m.pod.labels.get(gangs.LIGHT_NAME) for m in members)
            else f"annotation {gangs.NAME}"
        )
        return f"{field} (Koordinator)"
    kind = _kind(source)
    named = f"label {kind.label}" if kind.label else "spec.schedulingGroup.podGroupName"
    return f"PodGroup {kind.api_version}, named by the pods' {named}"


def _minimum_from(key: str, members: Sequence[Member]) -> str:
    source = key.partition(":")[0]
    if source == gangs.KOORDINATOR:
        oldest = sorted(members, key=lambda m: (m.pod.created, m.pod.key))
        setting = next((m.pod for m in oldest if m.pod.gang and m.pod.gang.minimum), None)
        if setting is None:
            return f"its pods' annotation {gangs.MIN_AVAILABLE}"
        light = setting.labels.get(gangs.LIGHT_MIN_AVAILABLE)
        field = (
            f"label {gangs.LIGHT_MIN_AVAILABLE}" if light else f"annotation {gangs.MIN_AVAILABLE}"
        )
        return f"{field} of {setting.key}, its oldest pod declaring one"
    return f"{'.'.join(_kind(source).minimum)} of PodGroup {key.partition(':')[2]}"


def _kind(source: str) -> PodGroupKind:
    return next(kind for kind in POD_GROUP_KINDS if kind.source == source)
