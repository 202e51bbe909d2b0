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

from collections.abc import Iterator, Mapping, Sequence, Set
from typing import TYPE_CHECKING

from ..model import Changes, DisruptionBudget, EngineConfig, GroupStatus, Pod, PodGroup
from ..numbers import Accounting
from ..tree import Tree
from .store import Member, Store

if TYPE_CHECKING:
    from .quota_engine import QuotaEngine


class StaleSnapshot(RuntimeError):
    """The engine took an event after this snapshot: recompute, and decide on the new one."""


class Snapshot:
    """The engine as its last recompute left it, good until its next event."""

    __slots__ = ("_engine", "_store", "_version", "changes")

    def __init__(self, engine: QuotaEngine, store: Store, changes: Changes) -> None:
        self.changes = changes
        """What this recompute changed: the groups' statuses and the pods' labels to write."""
        self._engine, self._store, self._version = engine, store, store.version

    def _fresh(self) -> Store:
        store = self._store
        if store.version != self._version:
            raise StaleSnapshot("the engine took an event since this snapshot: recompute first")
        return store

    @property
    def config(self) -> EngineConfig:
        return self._engine.config

    @property
    def tree(self) -> Tree:
        return self._fresh().accounts.tree

    @property
    def accounts(self) -> Accounting:
        """Every group's numbers (request, used, runtime) on the current tree."""
        return self._fresh().accounts

    @property
    def pods(self) -> Mapping[str, Member]:
        """Every pod that has not finished, by `namespace/name`."""
        return self._fresh().pods

    @property
    def members(self) -> Sequence[Mapping[Member, None]]:
        """Per group (by index in `tree.groups`): its own pods, in the order they came."""
        return self._fresh().members

    @property
    def gated(self) -> Set[str]:
        """The pods waiting behind the admission gate."""
        return self._fresh().gated

    @property
    def gangs(self) -> Mapping[str, Set[str]]:
        """Gang key (`source:namespace/name`) to its pods."""
        return self._fresh().gangs

    @property
    def pod_groups(self) -> Mapping[str, PodGroup]:
        """PodGroup objects by gang key."""
        return self._fresh().pod_groups

    @property
    def budgets(self) -> Mapping[str, DisruptionBudget]:
        """PodDisruptionBudgets by `namespace/name`."""
        return self._fresh().budgets

    def capacity(self) -> dict[str, int]:
        self._fresh()
        return self._engine.capacity()

    def pod(self, key: str) -> Pod | None:
        self._fresh()
        return self._engine.pod(key)

    def status(self, name: str) -> GroupStatus:
        self._fresh()
        return self._engine.status(name)

    def statuses(self) -> Iterator[GroupStatus]:
        self._fresh()
        return self._engine.statuses()

    def pod_request(self, key: str) -> dict[str, int]:
        self._fresh()
        return self._engine.pod_request(key)

    def capacity_label(self, key: str) -> str | None:
        self._fresh()
        return self._engine.capacity_label(key)

    def group_pods(self, name: str) -> list[tuple[Pod, dict[str, int]]]:
        self._fresh()
        return self._engine.group_pods(name)
