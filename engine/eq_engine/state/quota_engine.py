"""The quota engine: cluster objects in, group numbers and pod labels out, incrementally.

`QuotaEngine` is what the edges hold. They feed it events (`set_quota`, `set_pod`,
`remove_pod`, `set_node`, ...) and call `recompute()`, which hands back a `Snapshot`: only what
changed, and the state the decisions read, good until the next event. A pod
event touches its group and the path to the root (requests and used go up), then the splits
whose inputs moved (runtime goes down); a quota event rebuilds the tree (keeping the pods
placed when only its numbers moved). Each gives exactly the numbers of a recompute from
scratch. The work is done by its parts, one job each:

- `store.Store`: the objects fed in, which group each pod counts in, what changed since;
- `numbers.Accounting`: the numbers of every group of one tree, and the two sweeps;
- `classification.Labels`: the pods' capacity labels;
- `publishing.Publisher`: the statuses the edges read.

Reclaim plans and admission decisions are functions of a snapshot (`decisions.reclaims`,
`decisions.admissions`); nothing outside this package reaches the store.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Set

from ..model import (
    Changes,
    DisruptionBudget,
    EngineConfig,
    GroupStatus,
    Node,
    Pod,
    PodGroup,
    Problem,
    Quota,
    ResourceList,
)
from ..numbers import USED, Accounting, columns
from ..tree import DEFAULT, SYSTEM, Tree, build_tree, checks
from .classification import Labels
from .pod_groups import gang_problems
from .publishing import Publisher
from .queries import Queries
from .snapshot import Snapshot
from .store import Store


class QuotaEngine(Queries):
    """Every rule of the quota accounting, on state fed in by events. No I/O."""

    def __init__(self, config: EngineConfig | None = None) -> None:
        self.config = config or EngineConfig()
        self._store = Store(self._accounting(build_tree((), self.config), ()))
        self._labels = Labels()
        self._publisher = Publisher()

    def _state(self) -> tuple[Store, Publisher]:
        return self._store, self._publisher

    def _accounting(self, tree: Tree, names: tuple[str, ...]) -> Accounting:
        return Accounting(tree, names, min_scaling=self.config.min_scaling)

    # ---------------------------------------------------------------- events

    def set_quota(self, quota: Quota) -> None:
        """Add or update a group; an unchanged one (e.g. only its status moved) costs nothing."""
        self._store.set_quota(quota)

    def remove_quota(self, namespace: str, name: str) -> None:
        self._store.remove_quota(namespace, name)

    def set_node(self, node: Node) -> None:
        self._store.set_node(node)

    def remove_node(self, name: str) -> None:
        self._store.remove_node(name)

    def set_capacity(self, capacity: ResourceList | None) -> None:
        """Use `capacity` as the cluster's total instead of the nodes' allocatable sum."""
        self._store.set_capacity(capacity)

    def set_pod(self, pod: Pod, held_label: str | None = None) -> None:
        """Add or update a pod; a finished pod counts nowhere and loses its label.
        `held_label`: the capacity label the pod holds in the cluster, kept with it (the
        edges that write labels compare it with `capacity_label`)."""
        if pod.terminal:
            member = self._store.pods.get(pod.key)
            if member is not None:
                self._labels.finish(member)
            self.remove_pod(pod.key)
        else:
            self._labels.resume(pod.key)
            self._store.set_pod(pod, held_label)

    def remove_pod(self, key: str) -> None:
        self._store.remove_pod(key)

    def set_pod_group(self, group: PodGroup) -> None:
        """Add or update a PodGroup object: the minimum of the gang it names."""
        self._store.set_pod_group(group)

    def remove_pod_group(self, key: str) -> None:
        self._store.remove_pod_group(key)

    def set_disruption_budget(self, budget: DisruptionBudget) -> None:
        """Add or update a PodDisruptionBudget: reclaim skips what it would not let go."""
        self._store.set_disruption_budget(budget)

    def remove_disruption_budget(self, key: str) -> None:
        self._store.remove_disruption_budget(key)

    # ---------------------------------------------------------------- queries

    @property
    def problems(self) -> list[Problem]:
        """What is wrong with the configuration: the links the tree repaired, every rule the
        admission webhook enforces (`checks.audit`), then the pods' problems, sorted."""
        return [
            *self.tree.problems,
            *checks.audit(self.tree.catalog),
            *sorted([*self._store.pod_problems.values(), *gang_problems(self._store)]),
        ]

    def holds(self, pod_key: str) -> bool:
        """Whether the engine holds the pod: fed, readable and not finished."""
        return pod_key in self._store.pods

    def pod_keys(self) -> Collection[str]:
        """The pods the engine holds."""
        return self._store.pods.keys()

    def gang_keys(self) -> Set[str]:
        """The gangs the engine holds (`source:namespace/name`)."""
        return self._store.gangs.keys()

    def held_label(self, pod_key: str) -> str | None:
        """The capacity label the pod holds in the cluster, as last fed (KeyError: not held)."""
        return self._store.pods[pod_key].held

    def hold_label(self, pod_key: str, label: str | None) -> None:
        """The pod now holds `label` (a write's answer); nothing if the engine no longer holds
        it."""
        member = self._store.pods.get(pod_key)
        if member is not None:
            member.held = label

    def lends(self, name: str) -> bool:
        """Whether the group lends the min it does not use (`allow-lent-resource`)."""
        tree = self.tree
        return tree.groups[tree.index[name]].allow_lent

    def pods(self) -> Iterator[tuple[Pod, str, str | None]]:
        """Every pod with its group and capacity label (`None` while pending)."""
        groups = self.tree.groups
        for member in self._store.pods.values():
            yield member.pod, groups[member.group].name, member.label

    # ---------------------------------------------------------------- recompute

    def recompute(self) -> Snapshot:
        """Bring every number and label up to date; hand back what changed since the last call
        with the state the decisions read."""
        changes = self._recompute()
        return Snapshot(changes, self.config, self._store, self._publisher)

    def _recompute(self) -> Changes:
        store = self._store
        if store.tree_dirty:
            return self._rebuild()
        if store.settings_dirty:
            return self._resettle()
        accounts = store.accounts
        touched, resplit = accounts.refresh_requests(store.dirty_groups)
        moved, shifted = accounts.refresh_runtime(
            resplit,
            capacity=store.capacity(),
            total_changed=store.capacity_dirty or bool(touched & {SYSTEM, DEFAULT}),
        )
        touched |= moved
        classified = store.dirty_members | shifted
        store.clean()
        labels = self._relabel(classified)
        return Changes(groups=self._publish(touched | classified), pod_labels=labels)

    def _rebuild(self) -> Changes:
        store = self._store
        tree = build_tree(store.quotas.values(), self.config)
        capacity = store.capacity()
        accounts = self._accounting(tree, columns(tree, capacity))
        store.regroup(accounts)
        self._labels.regroup(tree.size)
        everything = set(range(tree.size))
        accounts.refresh_requests(None)
        accounts.refresh_runtime(everything, capacity=capacity, total_changed=True)
        store.clean()
        labels = self._relabel(everything)
        removed = self._publisher.prune(accounts)
        return Changes(groups=self._publish(everything), removed_groups=removed, pod_labels=labels)

    def _resettle(self) -> Changes:
        """Groups' numbers moved, nothing of the tree's shape: a new tree and accounting on
        the same columns, the pods' sums carried over, every sum and split again, and the labels
        of the groups whose effective min moved."""
        store = self._store
        old = store.accounts
        tree = build_tree(store.quotas.values(), self.config)
        if tuple(g.name for g in tree.groups) != tuple(g.name for g in old.tree.groups):
            return self._rebuild()  # the order moved (it should not): place the pods again
        accounts = self._accounting(tree, old.names)
        store.resettle(accounts)
        everything = set(range(tree.size))
        accounts.refresh_requests(None)
        accounts.refresh_runtime(everything, capacity=store.capacity(), total_changed=True)
        shifted = (accounts.effective_min != old.effective_min).any(axis=1)
        classified = {int(g) for g in shifted.nonzero()[0]} | store.dirty_members
        store.clean()
        labels = self._relabel(classified)
        return Changes(groups=self._publish(everything), pod_labels=labels)

    def _relabel(self, groups: set[int]) -> dict[str, str | None]:
        store = self._store
        accounts = store.accounts
        used = accounts.own[:, accounts.block(USED)]
        return self._labels.relabel(groups, store.members, accounts.effective_min, used)

    def _publish(self, groups: set[int]) -> tuple[GroupStatus, ...]:
        return self._publisher.publish(groups, self._store.accounts, self._labels.over_quota)
