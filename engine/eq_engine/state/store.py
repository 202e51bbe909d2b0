"""The pod and group store: what the events fed in, which group each pod counts in, and what
has changed since the last recompute.

`Store` keeps the ElasticQuotas, the nodes' allocatable (summed as nodes come and go) and every
pod that has not finished. A pod event places the pod in its group (`Tree.group_of`), counts it
in that group's own sums (`Accounting.count`) and marks the group dirty; a quota event, or a
resource the accounting has no column for, marks the whole tree dirty, and the next recompute
builds a new tree and places every pod again (`regroup`). The store computes nothing itself.
"""

from __future__ import annotations

import collections

import msgspec

from ..model import DisruptionBudget, Node, Pod, PodGroup, Problem, Quota, ResourceList, clamp
from ..numbers import Accounting

_INTERNED = 1024
"""Request vectors kept for sharing beyond two per pod, before the table starts over."""


class Member(msgspec.Struct, gc=False, eq=False):
    """A pod the accounting knows: its group, its request masked to that group's max, its
    capacity label (`classification.Labels`; None while it is not scheduled), and the label
    it holds in the cluster as the edge last saw it (`held`: what is wanted and what is
    written side by side, in the one record of the pod).

    `request` is a tuple shared by every member with the same one (see `Store._place`): an
    engine holds every pod of the cluster, so a member must stay small, and what the engine
    knows of a pod lives here, in one map, not in one map per part. A msgspec struct out of
    the garbage collector's sight, as `Pod` is (64 B of the heap, a dataclass 80 B); compared,
    and hashed in the groups' maps, by identity.
    """

    pod: Pod
    group: int = -1
    request: tuple[int, ...] = ()
    label: str | None = None
    held: str | None = None


class Store:
    """The cluster as the events describe it, placed on the accounting's tree."""

    def __init__(self, accounts: Accounting) -> None:
        self.accounts = accounts
        """The numbers of the current tree; replaced by `regroup`."""
        self.quotas: dict[tuple[str, str], Quota] = {}
        self._nodes: dict[str, ResourceList] = {}
        self._node_total: dict[str, tuple[int, int]] = {}  # resource: (sum, nodes having it)
        self._capacity_override: ResourceList | None = None
        self.pods: dict[str, Member] = {}
        self.pod_problems: dict[str, Problem] = {}
        self.gated: set[str] = set()
        """Pods waiting behind the admission gate."""
        self.gangs: dict[str, set[str]] = {}
        """Gang key to its pods (`gangs.py`)."""
        self.pod_groups: dict[str, PodGroup] = {}
        """PodGroup objects by gang key: the minimum of the gangs that name one."""
        self.budgets: dict[str, DisruptionBudget] = {}
        """PodDisruptionBudgets by `namespace/name`, for reclaim."""
        self.members: list[dict[Member, None]] = []
        """Per group: its own pods, in the order they came (a dict holds a group's few members
        in about half the memory of a set)."""
        self._vectors: dict[tuple[int, ...], tuple[int, ...]] = {}
        self.version = 0
        """Counts the events that changed something: a snapshot is good while it stands still."""
        self.tree_dirty = True
        self.settings_dirty = False
        """Only groups' numbers moved: the tree is built again, the pods stay placed."""
        self.capacity_dirty = True
        self.dirty_groups: set[int] = set()
        """Groups whose own sums moved."""
        self.dirty_members: set[int] = set()
        """Groups whose pods' labels must be decided again."""

    # ---------------------------------------------------------------- quotas and nodes

    def set_quota(self, quota: Quota) -> None:
        """Add or update a group; an unchanged one (e.g. only its status moved) costs nothing,
        one whose numbers alone moved (min, max amounts, weight, a pool's total) keeps its
        pods where they are (`settings_dirty`)."""
        key = (quota.namespace, quota.name)
        old = self.quotas.get(key)
        if old == quota:
            return
        self.version += 1
        self.quotas[key] = quota
        if old is None or _shape(old) != _shape(quota) or not self._has_columns(quota):
            self.tree_dirty = True
        else:
            self.settings_dirty = True

    def _has_columns(self, quota: Quota) -> bool:
        return {*quota.min, *quota.max, *(quota.total_resource or ())} <= set(self.accounts.names)

    def remove_quota(self, namespace: str, name: str) -> None:
        if self.quotas.pop((namespace, name), None) is not None:
            self.version += 1
            self.tree_dirty = True

    def set_node(self, node: Node) -> None:
        old = self._nodes.get(node.name)
        if old != node.allocatable:
            self.version += 1
            self._add_allocatable(old or {}, -1)
            self._add_allocatable(node.allocatable, +1)
            self._nodes[node.name] = node.allocatable
            self._capacity_changed(node.allocatable)

    def remove_node(self, name: str) -> None:
        old = self._nodes.pop(name, None)
        if old is not None:
            self.version += 1
            self._add_allocatable(old, -1)
            self.capacity_dirty = True

    def _add_allocatable(self, allocatable: ResourceList, sign: int) -> None:
        for name, amount in allocatable.items():
            total, nodes = self._node_total.get(name, (0, 0))
            if nodes + sign:
                self._node_total[name] = (total + sign * amount, nodes + sign)
            else:  # no node has it any more
                del self._node_total[name]

    def set_capacity(self, capacity: ResourceList | None) -> None:
        """Use `capacity` as the cluster's total instead of the nodes' allocatable sum."""
        self.version += 1
        self._capacity_override = capacity
        self._capacity_changed(capacity or {})

    def _capacity_changed(self, resources: ResourceList) -> None:
        self.capacity_dirty = True
        if not set(resources) <= set(self.accounts.names):  # a new resource: new columns
            self.tree_dirty = True

    def capacity(self) -> dict[str, int]:
        """The cluster's total: the override, or the sum of every node's allocatable."""
        if self._capacity_override is not None:
            return dict(self._capacity_override)
        return {name: total for name, (total, _) in self._node_total.items()}

    # ---------------------------------------------------------------- pods

    def set_pod(self, pod: Pod, held: str | None = None) -> None:
        """Add or update a pod that has not finished; `held`: its capacity label in the
        cluster."""
        old = self.pods.get(pod.key)
        if old is not None and old.pod == pod:
            # Nothing read moved (the echo of a label written, a condition): the pod already
            # held is kept, as a long-lived object replaced on every echo scatters the heap.
            old.held = held
            return
        self.version += 1
        if pod.gated:
            self.gated.add(pod.key)
        else:
            self.gated.discard(pod.key)
        if old is not None and old.pod.gang != pod.gang:
            self._leave_gang(old.pod)
        if pod.gang is not None:
            self.gangs.setdefault(pod.gang.key, set()).add(pod.key)
        member = Member(pod, label=None if old is None else old.label, held=held)
        self.pods[pod.key] = member
        if self.tree_dirty:
            return
        self._place(member)
        if old is None:
            self._count(member, +1)
        elif (old.group, old.pod.scheduled, old.pod.preemptible) != (
            member.group,
            pod.scheduled,
            pod.preemptible,
        ) or old.request != member.request:
            self._count(old, -1)
            self._count(member, +1)
        else:  # same sums; the order of the group's pods may still change
            self.members[member.group].pop(old, None)
            self.members[member.group][member] = None
            self.dirty_members.add(member.group)

    def remove_pod(self, key: str) -> None:
        if key in self.pods or key in self.pod_problems or key in self.gated:
            self.version += 1
        member = self.pods.pop(key, None)
        self.pod_problems.pop(key, None)
        self.gated.discard(key)
        if member is not None:
            self._leave_gang(member.pod)
        if member is not None and not self.tree_dirty:
            self._count(member, -1)

    def _leave_gang(self, pod: Pod) -> None:
        if pod.gang is not None:
            members = self.gangs[pod.gang.key]
            members.discard(pod.key)
            if not members:
                del self.gangs[pod.gang.key]

    def set_pod_group(self, group: PodGroup) -> None:
        self.version += 1
        self.pod_groups[group.key] = group

    def remove_pod_group(self, key: str) -> None:
        self.version += 1
        self.pod_groups.pop(key, None)

    def set_disruption_budget(self, budget: DisruptionBudget) -> None:
        self.version += 1
        self.budgets[budget.key] = budget

    def remove_disruption_budget(self, key: str) -> None:
        self.version += 1
        self.budgets.pop(key, None)

    def regroup(self, accounts: Accounting) -> None:
        """Place every pod on the new tree of `accounts`, and count it there: the pods of a
        group alike (one request, both flags) in one addition."""
        self.accounts = accounts
        self.members = [{} for _ in accounts.tree.groups]
        self._vectors = {}
        seen: dict[tuple[int, int], tuple[int, ...]] = {}  # the pods' request dicts stay alive
        alike: collections.Counter[tuple[int, tuple[int, ...], bool, bool]] = collections.Counter()
        for member in self.pods.values():
            self._place(member, seen)
            pod = member.pod
            self.members[member.group][member] = None
            alike[member.group, member.request, pod.scheduled, not pod.preemptible] += 1
        accounts.add_all(alike)

    def resettle(self, accounts: Accounting) -> None:
        """The same tree with new numbers: the pods keep their groups and request vectors (the
        groups' order and max keys are the same), their sums carry over."""
        accounts.own[:] = self.accounts.own
        self.accounts = accounts

    def clean(self) -> None:
        """Everything that changed is accounted for: the recompute is done."""
        self.tree_dirty = self.settings_dirty = self.capacity_dirty = False
        self.dirty_groups, self.dirty_members = set(), set()

    def _place(
        self, member: Member, seen: dict[tuple[int, int], tuple[int, ...]] | None = None
    ) -> None:
        """Put the pod in its group, with its request on the group's columns. `seen`: the
        vectors made so far by (the group's `request_shape`, request dict), while no pod leaves
        (pods of a workload share one request dict, `requests.shared`)."""
        accounts = self.accounts
        group, problem = accounts.tree.group_of(member.pod)
        if problem is None:
            self.pod_problems.pop(member.pod.key, None)
        else:
            self.pod_problems[member.pod.key] = problem
        member.group = group
        request = member.pod.request
        shape = accounts.request_shape[group]
        made = None if seen is None else seen.get((shape, id(request)))
        if made is not None:
            member.request = made
            return
        vector = tuple(
            clamp(request.get(name, 0)) if keep else 0
            for name, keep in zip(accounts.names, accounts.request_keys[group], strict=True)
        )
        if len(self._vectors) > 2 * len(self.pods) + _INTERNED:
            # Shapes of pods long gone: start over (members keep the tuples they hold).
            self._vectors = {}
        member.request = self._vectors.setdefault(vector, vector)
        if seen is not None:
            seen[shape, id(request)] = member.request

    def _count(self, member: Member, sign: int) -> None:
        self.accounts.count(member.group, member.pod, member.request, sign)
        members = self.members[member.group]
        if sign > 0:
            members[member] = None
        else:
            members.pop(member, None)
        self.dirty_groups.add(member.group)
        self.dirty_members.add(member.group)


def _shape(quota: Quota) -> tuple[object, ...]:
    """What places the group and its pods: where it sits, which pods are its, the resources its
    pods count on (its max keys), and which trees there are. A change of anything else (the
    amounts of min and max, the weight, a pool's total) keeps every pod where it is."""
    return (
        quota.parent,
        quota.parent_labels,
        quota.is_parent,
        quota.namespaces,
        quota.tree_id,
        quota.is_root,
        quota.ignore_default_tree,
        frozenset(quota.max),
    )
