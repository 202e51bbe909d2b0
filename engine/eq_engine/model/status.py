"""What the engine tells the edges: per-group numbers, pod labels, and what changed."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import msgspec

from .quantities import ResourceList


class GroupStatus(msgspec.Struct, frozen=True):
    """One group's settings and computed values, in canonical units. A msgspec struct: made in
    C (a frozen dataclass sets each of its 16 fields through `object.__setattr__`), at every
    recompute for each group whose numbers moved."""

    name: str
    namespace: str
    parent: str | None
    is_parent: bool
    min: ResourceList
    max: ResourceList | None
    """`None`: no ceiling (the root, the system group, an unconfigured default group)."""
    shared_weight: ResourceList
    request: ResourceList
    """The group's own request, not clipped by its own max (as in Koordinator)."""
    runtime: ResourceList | None
    """What the group may use now, on its max's resources; `None`: unlimited."""
    used: ResourceList
    effective_min: ResourceList
    """The min after scaling (2.8): the share that in-quota pods run on."""
    non_preemptible_request: ResourceList
    non_preemptible_used: ResourceList
    over_quota_pods: int = 0
    """Its own scheduled pods labelled over-quota: what reclaim could take."""
    tree: str = ""
    """The tree id of its quota tree (one per node pool); "": the default tree."""
    lendable: ResourceList = msgspec.field(default_factory=dict)
    """What of its min it may lend, per resource of its min: its lending limit, all of its min
    without one, nothing when it does not lend."""
    borrowing_limit: ResourceList | None = None
    """The most its runtime may exceed its min by, per resource it names; None: no limit."""

    @property
    def borrowed(self) -> dict[str, int]:
        """Used above its (effective) min, on the resources its runtime covers; the root
        borrows from nobody."""
        if self.parent is None:
            return {}
        return {
            name: used - self.effective_min.get(name, 0)
            for name, used in self.used.items()
            if self.runtime is not None
            and name in self.runtime
            and used > self.effective_min.get(name, 0)
        }

    @property
    def lent(self) -> dict[str, int]:
        """Min it does not ask for, which its siblings may use: never more than it may lend,
        as its request is raised to the min it keeps."""
        return {
            name: floor - self.request.get(name, 0)
            for name, floor in self.effective_min.items()
            if self.request.get(name, 0) < floor
        }


@dataclass(frozen=True, slots=True)
class Changes:
    """The result of one recompute: only what differs from the previous one."""

    groups: tuple[GroupStatus, ...] = ()
    """Groups that are new or whose status changed."""
    removed_groups: tuple[str, ...] = ()
    pod_labels: Mapping[str, str | None] = field(default_factory=dict)
    """Pod key (`namespace/name`) to its new capacity label; `None` removes the label."""
