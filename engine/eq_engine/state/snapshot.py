"""What one recompute left: the engine as the decisions read it.

`QuotaEngine.recompute()` hands back a `Snapshot`: the changes it made, and read-only views of
the pods, groups, gangs and budgets with the numbers that recompute left. Admission, reclaim,
the gang views and the explanations read it, never the store. It shares the engine's
structures instead of copying them (an engine holds every pod of the cluster; a copy on each
recompute would cost more than the recompute), so it holds only until the next event: a read
after one raises `StaleSnapshot`, and no decision mixes the numbers of one moment with the pods
of another.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence, Set

from ..model import Changes, DisruptionBudget, EngineConfig, PodGroup
from ..numbers import Accounting
from .publishing import Publisher
from .queries import Queries
from .store import Member, Store


class StaleSnapshot(RuntimeError):
    """The engine took an event after this snapshot: recompute, and decide on the new one."""


class Snapshot(Queries):
    """The engine as its last recompute left it, good until its next event."""

    __slots__ = ("_publisher", "_store", "_version", "changes", "config")

    def __init__(
        self, changes: Changes, config: EngineConfig, store: Store, publisher: Publisher
    ) -> None:
        self.changes = changes
        """What this recompute changed: the groups' statuses and the pods' labels to write."""
        self.config = config
        self._store, self._publisher, self._version = store, publisher, store.version

    def _state(self) -> tuple[Store, Publisher]:
        if self._store.version != self._version:
            raise StaleSnapshot("the engine took an event since this snapshot: recompute first")
        return self._store, self._publisher

    @property
    def accounts(self) -> Accounting:
        """Every group's numbers (request, used, runtime) on the current tree."""
        return self._state()[0].accounts

    @property
    def pods(self) -> Mapping[str, Member]:
        """Every pod that has not finished, by `namespace/name`."""
        return self._state()[0].pods

    @property
    def members(self) -> Sequence[Mapping[Member, None]]:
        """Per group (by index in `tree.groups`): its own pods, in the order they came."""
        return self._state()[0].members

    @property
    def gated(self) -> Set[str]:
        """The pods waiting behind the admission gate."""
        return self._state()[0].gated

    @property
    def gangs(self) -> Mapping[str, Set[str]]:
        """Gang key (`source:namespace/name`) to its pods."""
        return self._state()[0].gangs

    @property
    def pod_groups(self) -> Mapping[str, PodGroup]:
        """PodGroup objects by gang key."""
        return self._state()[0].pod_groups

    @property
    def budgets(self) -> Mapping[str, DisruptionBudget]:
        """PodDisruptionBudgets by `namespace/name`."""
        return self._state()[0].budgets
