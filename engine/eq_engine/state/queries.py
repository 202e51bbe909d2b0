"""The reads that the façade and its snapshots share, written once.

`QuotaEngine` answers them on the state as it is (the edges' live questions: is this pod still
there, what does this group hold); a `Snapshot` on the state its recompute left, refusing once
the engine has moved on. Each says which state it reads (`_state`); the rules are here.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..model import GroupStatus, Pod
from ..tree import Tree
from .classification import importance
from .publishing import Publisher
from .store import Store


class Queries:
    """Reads of a store and the statuses published from it."""

    __slots__ = ()

    def _state(self) -> tuple[Store, Publisher]:
        raise NotImplementedError

    @property
    def tree(self) -> Tree:
        return self._state()[0].accounts.tree

    def capacity(self) -> dict[str, int]:
        """The cluster's total: the override, or the sum of every node's allocatable."""
        return self._state()[0].capacity()

    def status(self, name: str) -> GroupStatus:
        return self._state()[1].status(name)

    def statuses(self) -> Iterator[GroupStatus]:
        """Every group, in tree order: root, system, default, then level by level (none before
        the first recompute). Safe to read from another thread (the metrics' scrape) while the
        engine recomputes: each status is replaced whole, never changed."""
        store, publisher = self._state()
        return publisher.statuses(store.accounts.tree.groups)

    def pod_request(self, pod_key: str) -> dict[str, int]:
        """What the pod counts for in its group: its request on the group's resources."""
        store = self._state()[0]
        member = store.pods[pod_key]
        return {n: v for n, v in zip(store.accounts.names, member.request, strict=True) if v}

    def pod(self, pod_key: str) -> Pod | None:
        """The pod as the engine knows it; None when it is gone (or finished)."""
        member = self._state()[0].pods.get(pod_key)
        return None if member is None else member.pod

    def capacity_label(self, pod_key: str) -> str | None:
        """The pod's `in-quota`/`over-quota` label; None while pending, finished or unknown."""
        member = self._state()[0].pods.get(pod_key)
        return None if member is None else member.label

    def group_pods(self, name: str) -> list[tuple[Pod, dict[str, int]]]:
        """The group's own pods with what each counts for, most important first (the order of
        the capacity labels; reclaim walks it backwards)."""
        store = self._state()[0]
        group = store.accounts.tree.index[name]
        members = sorted(store.members[group], key=lambda m: importance(m.pod))
        return [(m.pod, self.pod_request(m.pod.key)) for m in members]
