"""The quota engine: cluster objects in, group numbers and pod labels out, incrementally.

`QuotaEngine` holds the cluster as the quota accounting sees it. Edges feed it events
(`set_quota`, `set_pod`, `remove_pod`, `set_node`, ...) and call `recompute()`, which returns
only what changed. A pod event touches its group and the path to the root (requests and used
go up), then the splits whose inputs moved (runtime goes down); a quota event rebuilds the tree.
Both give exactly the numbers of a recompute from scratch.

Numbers live in int64 arrays indexed by (group, resource), in the order of `tree.py`.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass

import numpy as np

from . import admission, checks, classification
from .admission import Admissions, Budget
from .config import EngineConfig
from .integers import Amounts, amounts, clamp, present
from .keys import IN_QUOTA, OVER_QUOTA
from .objects import Node, Pod, Quota
from .problems import Problem
from .quantities import ResourceList
from .reclaim import GroupReclaim, Victim
from .runtime import Index, Mask, Runs, scale_min, split
from .status import Changes, GroupStatus
from .tree import DEFAULT, ROOT, SYSTEM, Tree, build_tree

_REQUEST, _USED, _NP_REQUEST, _NP_USED = range(4)
"""The four blocks of a group's accounting row: request, used, non-preemptible request/used."""
_INTERNED = 1024
"""Request vectors kept for sharing beyond two per pod, before the table starts over."""


@dataclass(slots=True, eq=False)
class _Member:
    """A pod the accounting knows: its group and its request masked to that group's max.

    `request` is a tuple shared by every member with the same one (see `_place`): an engine
    holds every pod of the cluster, so a member must stay small.
    """

    pod: Pod
    group: int = -1
    request: tuple[int, ...] = ()

    def rows(self, sign: int = 1) -> Amounts:
        """This pod's share of the four accounting blocks, side by side (negated: -1)."""
        request = list(self.request) if sign > 0 else [-amount for amount in self.request]
        zero = [0] * len(request)
        scheduled, locked = self.pod.scheduled, not self.pod.preemptible
        return np.array(
            request
            + (request if scheduled else zero)
            + (request if locked else zero)
            + (request if locked and scheduled else zero),
            dtype=np.int64,
        )


@dataclass(slots=True)
class _Arrays:
    """Settings (fixed per tree) and computed values of every group, by (group, resource)."""

    names: tuple[str, ...]
    request_keys: Mask  # a pod's request counts on its group's max keys (all: unlimited groups)
    ceiling: Mask  # clip to max: bounded groups on their max keys (never the built-ins)
    max: Amounts
    floor: Mask  # raise request to min: non-lending groups on their min keys
    min: Amounts
    weight: Amounts
    lend: Mask
    tie_rank: Index
    has_runtime: Mask
    own: Amounts  # pods bound to the group itself: the four blocks side by side
    total: Amounts  # own + what the children pass up
    passed_up: Amounts  # request clipped to max, then used and non-preemptible, unclipped
    request: Amounts
    effective_min: Amounts
    runtime: Amounts


class QuotaEngine:
    """Every rule of the quota accounting, on state fed in by events. No I/O."""

    def __init__(self, config: EngineConfig | None = None) -> None:
        self.config = config or EngineConfig()
        self._quotas: dict[tuple[str, str], Quota] = {}
        self._nodes: dict[str, ResourceList] = {}
        self._node_total: dict[str, tuple[int, int]] = {}  # resource: (sum, nodes having it)
        self._capacity_override: ResourceList | None = None
        self._pods: dict[str, _Member] = {}
        self._pod_problems: dict[str, Problem] = {}
        self._tree = build_tree((), self.config)
        self._resources: tuple[str, ...] = ()
        self._arrays: _Arrays | None = None
        self._request_keys: list[list[bool]] = []  # arrays.request_keys, for building statuses
        self._depths: list[int] = []  # tree.depth, as plain integers for the sweeps
        self._members: list[set[_Member]] = []
        self._over_quota: list[int] = []  # per group: its pods labelled over-quota
        self._vectors: dict[tuple[int, ...], tuple[int, ...]] = {}
        self._published: dict[str, GroupStatus] = {}
        self._labels: dict[str, str] = {}
        self._finished: dict[str, None] = {}  # labelled pods that finished: label to remove
        self._gated: set[str] = set()  # pods waiting behind the admission gate
        self._tree_dirty = True
        self._capacity_dirty = True
        self._dirty_groups: set[int] = set()
        self._dirty_members: set[int] = set()

    # ---------------------------------------------------------------- events

    def set_quota(self, quota: Quota) -> None:
        """Add or update a group; an unchanged one (e.g. only its status moved) costs nothing."""
        key = (quota.namespace, quota.name)
        if self._quotas.get(key) != quota:
            self._quotas[key] = quota
            self._tree_dirty = True

    def remove_quota(self, namespace: str, name: str) -> None:
        if self._quotas.pop((namespace, name), None) is not None:
            self._tree_dirty = True

    def set_node(self, node: Node) -> None:
        old = self._nodes.get(node.name)
        if old != node.allocatable:
            self._add_allocatable(old or {}, -1)
            self._add_allocatable(node.allocatable, +1)
            self._nodes[node.name] = node.allocatable
            self._capacity_changed(node.allocatable)

    def remove_node(self, name: str) -> None:
        old = self._nodes.pop(name, None)
        if old is not None:
            self._add_allocatable(old, -1)
            self._capacity_dirty = True

    def _add_allocatable(self, allocatable: ResourceList, sign: int) -> None:
        for name, amount in allocatable.items():
            total, nodes = self._node_total.get(name, (0, 0))
            if nodes + sign:
                self._node_total[name] = (total + sign * amount, nodes + sign)
            else:  # no node has it any more
                del self._node_total[name]

    def set_capacity(self, capacity: ResourceList | None) -> None:
        """Use `capacity` as the cluster's total instead of the nodes' allocatable sum."""
        self._capacity_override = capacity
        self._capacity_changed(capacity or {})

    def _capacity_changed(self, resources: ResourceList) -> None:
        self._capacity_dirty = True
        if not set(resources) <= set(self._resources):  # a new resource: new columns
            self._tree_dirty = True

    def set_pod(self, pod: Pod) -> None:
        """Add or update a pod; a finished pod counts nowhere and loses its label."""
        old = self._pods.get(pod.key)
        if old is not None and old.pod == pod:
            return  # e.g. only its label or its status conditions moved
        if pod.terminal:
            if pod.key in self._labels:
                self._finished[pod.key] = None
            self.remove_pod(pod.key)
            return
        self._finished.pop(pod.key, None)
        if pod.gated:
            self._gated.add(pod.key)
        else:
            self._gated.discard(pod.key)
        member = _Member(pod)
        self._pods[pod.key] = member
        if self._tree_dirty:
            return
        self._place(member)
        if old is None:
            self._account(member, +1)
        elif (old.group, old.pod.scheduled, old.pod.preemptible) != (
            member.group,
            pod.scheduled,
            pod.preemptible,
        ) or old.request != member.request:
            self._account(old, -1)
            self._account(member, +1)
        else:  # same sums; the order of the group's pods may still change
            self._members[member.group].discard(old)
            self._members[member.group].add(member)
            self._dirty_members.add(member.group)

    def remove_pod(self, key: str) -> None:
        member = self._pods.pop(key, None)
        self._pod_problems.pop(key, None)
        self._labels.pop(key, None)
        self._gated.discard(key)
        if member is not None and not self._tree_dirty:
            self._account(member, -1)

    def _place(self, member: _Member) -> None:
        group, problem = self._tree.group_of(member.pod)
        if problem is None:
            self._pod_problems.pop(member.pod.key, None)
        else:
            self._pod_problems[member.pod.key] = problem
        member.group = group
        request = member.pod.request
        vector = tuple(
            clamp(request.get(name, 0)) if keep else 0
            for name, keep in zip(self._resources, self._request_keys[group], strict=True)
        )
        if len(self._vectors) > 2 * len(self._pods) + _INTERNED:
            # Shapes of pods long gone: start over (members keep the tuples they hold).
            self._vectors = {}
        member.request = self._vectors.setdefault(vector, vector)

    def _account(self, member: _Member, sign: int) -> None:
        arrays = self._arrays
        assert arrays is not None
        arrays.own[member.group] += member.rows(sign)
        members = self._members[member.group]
        if sign > 0:
            members.add(member)
        else:
            members.discard(member)
        self._dirty_groups.add(member.group)
        self._dirty_members.add(member.group)

    # ---------------------------------------------------------------- queries

    @property
    def tree(self) -> Tree:
        return self._tree

    @property
    def problems(self) -> list[Problem]:
        """What is wrong with the configuration: the links the tree repaired, every rule the
        admission webhook enforces (`checks.audit`), then the pods' problems, sorted."""
        return [
            *self._tree.problems,
            *checks.audit(self._tree.catalog),
            *sorted(self._pod_problems.values()),
        ]

    def capacity(self) -> dict[str, int]:
        """The cluster's total: the override, or the sum of every node's allocatable."""
        if self._capacity_override is not None:
            return dict(self._capacity_override)
        return {name: total for name, (total, _) in self._node_total.items()}

    def status(self, name: str) -> GroupStatus:
        return self._published[name]

    def statuses(self) -> Iterator[GroupStatus]:
        """Every group, in tree order: root, system, default, then level by level (none before
        the first recompute). Safe to read from another thread (the metrics' scrape) while the
        engine recomputes: each status is replaced whole, never changed."""
        published, groups = self._published, self._tree.groups
        return (status for g in groups if (status := published.get(g.name)) is not None)

    def pod_request(self, pod_key: str) -> dict[str, int]:
        """What the pod counts for in its group: its request on the group's resources."""
        member = self._pods[pod_key]
        return {n: v for n, v in zip(self._resources, member.request, strict=True) if v}

    def pod(self, pod_key: str) -> Pod | None:
        """The pod as the engine knows it; None when it is gone (or finished)."""
        member = self._pods.get(pod_key)
        return None if member is None else member.pod

    def capacity_label(self, pod_key: str) -> str | None:
        """The pod's `in-quota`/`over-quota` label; None while pending, finished or unknown."""
        return self._labels.get(pod_key)

    def lends(self, name: str) -> bool:
        """Whether the group lends the min it does not use (`allow-lent-resource`)."""
        return self._tree.groups[self._tree.index[name]].allow_lent

    def group_pods(self, name: str) -> list[tuple[Pod, dict[str, int]]]:
        """The group's own pods with what each counts for, most important first (the order of
        the capacity labels; reclaim walks it backwards)."""
        members = sorted(
            self._members[self._tree.index[name]], key=lambda m: classification.importance(m.pod)
        )
        return [(m.pod, self.pod_request(m.pod.key)) for m in members]

    def pods(self) -> Iterator[tuple[Pod, str, str | None]]:
        """Every pod with its group and capacity label (`None` while pending)."""
        for key, member in self._pods.items():
            yield member.pod, self._tree.groups[member.group].name, self._labels.get(key)

    def reclaim_plan(
        self, *, keep: Collection[str] = (), leaving: Collection[str] = ()
    ) -> dict[str, list[str]]:
        """For each group whose used exceeds its runtime: the pods to evict, in order, only
        ever over-quota ones (`reclaims`, with the `keep` pods refused)."""
        return {
            name: [victim.key for victim in plan.victims(keep)]
            for name, plan in self.reclaims(leaving=leaving).items()
        }

    def reclaims(self, *, leaving: Collection[str] = ()) -> dict[str, GroupReclaim]:
        """Each group whose used exceeds its runtime, with its reclaim decided on this state.

        Pods already terminating, and those in `leaving` (just evicted), count as returned:
        they are not evicted twice, and nothing else is evicted in their place. Only
        preemptible over-quota pods are candidates, so a refusal (a PodDisruptionBudget) never
        lets an in-quota pod be chosen instead. A group whose plan has no victims is over its
        runtime but has nothing of its own left to evict.
        """
        arrays = self._arrays
        assert arrays is not None and not self._tree_dirty
        used = arrays.total[:, self._block(_USED)]
        over = np.any((used > arrays.runtime) & arrays.has_runtime, axis=1)
        over[[ROOT, SYSTEM]] = False
        plans: dict[str, GroupReclaim] = {}
        width = len(self._resources)
        for group in np.flatnonzero(over).tolist():
            members = [m for m in self._members[group] if m.pod.scheduled]
            going = {m.pod.key for m in members if m.pod.terminating or m.pod.key in leaving}
            returned = [m.request for m in members if m.pod.key in going]
            candidates = sorted(
                (
                    m
                    for m in members
                    if m.pod.preemptible
                    and not m.pod.node_pinned  # it would come back on its node at once
                    and self._labels.get(m.pod.key) == OVER_QUOTA  # never in-quota ones
                    and m.pod.key not in going
                ),
                key=lambda m: classification.importance(m.pod),
                reverse=True,
            )
            still_used = used[group] - np.array(returned, dtype=np.int64).reshape(
                len(returned), width
            ).sum(axis=0)
            status = self._published[self._tree.groups[group].name]
            plans[status.name] = GroupReclaim(
                group=status.name,
                used=dict(status.used),
                runtime=dict(status.runtime or {}),
                candidates=tuple(
                    Victim(m.pod.key, m.pod.uid, self.pod_request(m.pod.key)) for m in candidates
                ),
                remaining=tuple(still_used.tolist()),
                limits=tuple(arrays.runtime[group].tolist()),
                limited=tuple(arrays.has_runtime[group].tolist()),
                resources=self._resources,
            )
        return plans

    def admissions(self, holding: Collection[str] = ()) -> Admissions:
        """For every group with pods behind the admission gate: which may go now (`admission`).

        `holding`: pods the edge admitted a moment ago. Those the scheduler has not bound yet
        count as taken, also while the watch still shows their gate, so calling this again
        after the edge lifted the gates admits nobody twice. An unbound pod not in `holding`
        counts only once bound.
        """
        arrays = self._arrays
        assert arrays is not None and not self._tree_dirty
        queues: dict[int, list[_Member]] = {}
        for key in self._gated.difference(holding):
            member = self._pods[key]
            queues.setdefault(member.group, []).append(member)
        admitted: list[str] = []
        waiting: dict[str, str] = {}
        counts: dict[str, int] = {}
        for group, queue in queues.items():
            name = self._tree.groups[group].name
            budget = Budget(
                names=self._resources,
                limited=arrays.has_runtime[group].tolist(),
                runtime=arrays.runtime[group].tolist(),
                taken=arrays.total[group, self._block(_USED)].tolist(),
                min=arrays.effective_min[group].tolist(),
                locked=arrays.total[group, self._block(_NP_USED)].tolist(),
            )
            for member in self._members[group]:
                pod = member.pod
                if pod.key in holding and not pod.scheduled:
                    budget.hold(pod.key, member.request, pod.preemptible)
            decided = admission.admit(name, budget, [(m.pod, m.request) for m in queue])
            admitted += decided.admitted
            waiting.update(decided.waiting)
            counts.update(decided.waiting_per_group)
        return Admissions(tuple(admitted), waiting, counts)

    # ---------------------------------------------------------------- recompute

    def recompute(self) -> Changes:
        """Bring every number and label up to date; return what changed since the last call."""
        if self._tree_dirty:
            return self._rebuild()
        touched, resplit = self._refresh_requests(self._dirty_groups)
        total_changed = self._capacity_dirty or bool(touched & {SYSTEM, DEFAULT})
        touched |= self._refresh_runtime(resplit, total_changed=total_changed)
        self._capacity_dirty = False
        self._dirty_groups = set()
        classified = self._dirty_members
        labels = self._classify(classified)
        self._dirty_members = set()
        return Changes(groups=self._publish(touched | classified), pod_labels=self._finish(labels))

    def _finish(self, labels: dict[str, str | None]) -> dict[str, str | None]:
        """Add the label removals of pods that finished since the last recompute."""
        finished, self._finished = self._finished, {}
        return {**finished, **labels}

    def _rebuild(self) -> Changes:
        tree = self._tree = build_tree(self._quotas.values(), self.config)
        resources = set(self.capacity())
        for group in tree.groups:
            resources.update(group.max or (), group.min)
        self._resources = names = tuple(sorted(resources))
        self._arrays = arrays = self._settings(tree, names)
        self._request_keys = arrays.request_keys.tolist()
        self._members = [set() for _ in tree.groups]
        self._over_quota = [0] * tree.size
        self._vectors = {}
        for member in self._pods.values():
            self._place(member)
            self._members[member.group].add(member)
            arrays.own[member.group] += member.rows()
        self._depths = tree.depth.tolist()
        everything = set(range(tree.size))
        self._refresh_requests(None)
        self._refresh_runtime(everything, total_changed=True)
        self._tree_dirty = self._capacity_dirty = False
        self._dirty_groups, self._dirty_members = set(), set()
        labels = self._classify(everything)
        removed = tuple(sorted(set(self._published) - {g.name for g in tree.groups}))
        for name in removed:
            del self._published[name]
        return Changes(
            groups=self._publish(everything),
            removed_groups=removed,
            pod_labels=self._finish(labels),
        )

    def _settings(self, tree: Tree, names: tuple[str, ...]) -> _Arrays:
        groups = tree.groups
        rows = len(groups)

        def matrix(values: Iterable[Amounts | np.ndarray]) -> np.ndarray:
            return np.array(list(values)).reshape(rows, len(names))

        has_max = matrix(present(g.max, names) for g in groups)
        bounded = np.array([g.max is not None for g in groups])
        lend = np.array([g.allow_lent for g in groups])
        has_runtime = has_max.copy()
        has_runtime[ROOT] = True
        has_runtime[SYSTEM] = False
        tree_rows = slice(DEFAULT + 1, rows)
        split_keys = has_max & bounded[:, None]  # a parent's split covers its max keys...
        split_keys[ROOT] = True  # ...the root's, every resource
        has_runtime[tree_rows] &= split_keys[tree.parent_index[tree_rows]]
        if not bounded[DEFAULT]:
            has_runtime[DEFAULT] = False
        ceiling = has_max & bounded[:, None]
        ceiling[[SYSTEM, DEFAULT]] = False  # their whole request goes up (2.2)
        has_min = matrix(present(g.min, names) for g in groups)
        order = sorted(range(rows), key=lambda i: groups[i].name)
        tie_rank = np.empty(rows, dtype=np.intp)
        tie_rank[order] = np.arange(rows)
        width = 4 * len(names)
        arrays = _Arrays(
            names=tuple(g.name for g in groups),
            request_keys=has_max,
            ceiling=ceiling,
            max=matrix(amounts(g.max, names) for g in groups),
            floor=has_min & ~lend[:, None],
            min=matrix(amounts(g.min, names) for g in groups),
            weight=matrix(amounts(g.shared_weight, names) for g in groups),
            lend=lend,
            tie_rank=tie_rank,
            has_runtime=has_runtime,
            own=np.zeros((rows, width), dtype=np.int64),
            total=np.zeros((rows, width), dtype=np.int64),
            passed_up=np.zeros((rows, width), dtype=np.int64),
            request=np.zeros((rows, len(names)), dtype=np.int64),
            effective_min=np.zeros((rows, len(names)), dtype=np.int64),
            runtime=np.zeros((rows, len(names)), dtype=np.int64),
        )
        arrays.effective_min[:] = arrays.min
        arrays.runtime[DEFAULT] = np.where(has_runtime[DEFAULT], arrays.max[DEFAULT], 0)
        return arrays

    def _block(self, block: int) -> slice:
        width = len(self._resources)
        return slice(block * width, (block + 1) * width)

    def _by_depth(self, groups: Iterable[int]) -> dict[int, set[int]]:
        depth = self._depths
        found: dict[int, set[int]] = {}
        for group in groups:
            found.setdefault(depth[group], set()).add(group)
        return found

    def _refresh_requests(self, dirty: set[int] | None) -> tuple[set[int], set[int]]:
        """Request, used and non-preemptible sums, bottom-up from `dirty` groups (None: all of
        them) (2.2, 3.3).

        Returns the groups whose values changed, and the parents whose split must rerun: those
        with a child whose request moved, unless the child stays short of its new and old
        request on every resource that moved. Such a child is never capped in the split's
        rounds either way, so its parent's split gives the same numbers (2.4).
        """
        arrays = self._arrays
        assert arrays is not None
        tree = self._tree
        pending = {} if dirty is None else self._by_depth(dirty)
        changed: set[int] = set()
        resplit: set[int] = set()
        request_block = self._block(_REQUEST)
        for depth in range(max(len(tree.levels), 1), -1, -1):  # system/default sit at depth 1
            if dirty is None:
                groups = np.arange(*tree.span(depth))
            elif depth in pending:
                groups = np.array(sorted(pending[depth]), dtype=np.intp)
            else:
                continue
            total = arrays.own[groups]
            rows, starts, owners = tree.children_of(groups)
            if len(rows):
                total[np.searchsorted(groups, owners)] += np.add.reduceat(
                    arrays.passed_up[rows], starts, axis=0
                )
            if depth == 0:  # the root also counts the system and default groups' pods
                total += arrays.passed_up[SYSTEM] + arrays.passed_up[DEFAULT]
            request = total[:, request_block]
            request = np.where(
                arrays.floor[groups], np.maximum(request, arrays.min[groups]), request
            )
            passed = total.copy()
            passed[:, request_block] = np.where(
                arrays.ceiling[groups], np.minimum(request, arrays.max[groups]), request
            )
            moved = (passed != arrays.passed_up[groups]).any(axis=1)
            before, after = arrays.passed_up[groups, request_block], passed[:, request_block]
            short_of_both = arrays.has_runtime[groups] & (
                arrays.runtime[groups] < np.minimum(before, after)
            )
            reshares = ((before != after) & ~short_of_both).any(axis=1)
            differs = (
                moved
                | (request != arrays.request[groups]).any(axis=1)
                | (total != arrays.total[groups]).any(axis=1)
            )
            arrays.total[groups], arrays.request[groups], arrays.passed_up[groups] = (
                total,
                request,
                passed,
            )
            if dirty is None:
                continue  # everything is recomputed and reported anyway
            changed.update(groups[differs].tolist())
            parents = [p for p in tree.parent_index[groups[moved]].tolist() if p >= 0]
            changed.update(parents)
            if parents:
                pending.setdefault(depth - 1, set()).update(parents)
            resplit.update(p for p in tree.parent_index[groups[reshares]].tolist() if p >= 0)
        if dirty is None:
            return set(range(tree.size)), set(range(tree.size))
        return changed, resplit

    def _refresh_runtime(self, resplit: set[int], *, total_changed: bool) -> set[int]:
        """Runtime top-down (2.3-2.8): reruns the split of the parents in `resplit`, of the
        root if the total changed, and of every parent whose own runtime changes on the way.
        Returns the groups whose runtime or effective min changed."""
        arrays = self._arrays
        assert arrays is not None
        tree = self._tree
        used = self._block(_USED)
        changed: set[int] = set()
        rerun = self._by_depth(resplit)
        if total_changed:
            capacity = amounts(self.capacity(), self._resources)
            total = np.maximum(
                capacity - arrays.total[SYSTEM, used] - arrays.total[DEFAULT, used], 0
            )
            if not np.array_equal(total, arrays.runtime[ROOT]):
                arrays.runtime[ROOT] = total
                changed.add(ROOT)
                rerun.setdefault(0, set()).add(ROOT)
        for depth in range(len(tree.levels)):
            if depth not in rerun:
                continue
            parents = np.array(sorted(rerun[depth]), dtype=np.intp)
            rows, starts, owners = tree.children_of(parents)
            if not len(rows):
                continue
            runs = Runs.of(starts, len(rows), len(self._resources))
            scalable = arrays.has_runtime[owners] & self.config.min_scaling
            if depth == 0:  # the root scales only what the cluster has; the rest keep their min
                scalable &= present(self.capacity(), self._resources)
            parent_total = runs.flat(
                np.where(arrays.has_runtime[owners], arrays.runtime[owners], 0)
            )
            effective_min = scale_min(
                total=parent_total,
                scalable=runs.flat(scalable),
                min_=runs.flat(arrays.min[rows]),
                runs=runs,
            )
            flat_runtime = split(
                total=parent_total,
                request=runs.flat(arrays.passed_up[rows, self._block(_REQUEST)]),
                min_=effective_min,
                weight=runs.flat(arrays.weight[rows]),
                lend=runs.per_child(arrays.lend[rows]),
                tie_rank=runs.per_child(arrays.tie_rank[rows]),
                runs=runs,
            )
            runtime = np.where(arrays.has_runtime[rows], runs.matrix(flat_runtime), 0)
            effective_min = runs.matrix(effective_min)
            shifted = (effective_min != arrays.effective_min[rows]).any(axis=1)
            moved = (runtime != arrays.runtime[rows]).any(axis=1) | shifted
            self._dirty_members.update(rows[shifted].tolist())  # their labels follow the min
            arrays.runtime[rows], arrays.effective_min[rows] = runtime, effective_min
            moved_rows = rows[moved].tolist()
            changed.update(moved_rows)
            if moved_rows:  # their own children's split reruns, if they have any
                rerun.setdefault(depth + 1, set()).update(moved_rows)
        return changed

    # ---------------------------------------------------------------- labels and publishing

    def _classify(self, groups: Iterable[int]) -> dict[str, str | None]:
        """Recompute the capacity labels of the pods of `groups`; return the ones that changed."""
        arrays = self._arrays
        assert arrays is not None
        changes: dict[str, str | None] = {}
        for group in groups:
            members = self._members[group]
            scheduled = sorted(
                (m for m in members if m.pod.scheduled),
                key=lambda m: classification.importance(m.pod),
            )
            labels: dict[str, str | None]
            if group == SYSTEM:  # outside quota: no label
                labels = {m.pod.key: None for m in scheduled}
            else:
                fits = classification.fits_in_min(
                    (m.request for m in scheduled), arrays.effective_min[group].tolist()
                )
                labels = {
                    m.pod.key: IN_QUOTA if ok else OVER_QUOTA
                    for m, ok in zip(scheduled, fits, strict=True)
                }
            self._over_quota[group] = sum(1 for label in labels.values() if label == OVER_QUOTA)
            for member in members:
                label = labels.get(member.pod.key)
                if self._labels.get(member.pod.key) != label:
                    changes[member.pod.key] = label
                    if label is None:
                        del self._labels[member.pod.key]
                    else:
                        self._labels[member.pod.key] = label
        return changes

    def _publish(self, groups: Iterable[int]) -> tuple[GroupStatus, ...]:
        changed = []
        for group in sorted(groups):
            status = self._status(group)
            if self._published.get(status.name) != status:
                self._published[status.name] = status
                changed.append(status)
        return tuple(changed)

    def _status(self, index: int) -> GroupStatus:
        arrays = self._arrays
        assert arrays is not None
        group = self._tree.groups[index]
        names = self._resources
        width = len(names)
        shown = self._request_keys[index]
        total = arrays.total[index].tolist()

        def values(row: list[int], keys: list[bool] | None = None) -> dict[str, int]:
            """The resources among `keys`, and any other that is not zero."""
            if keys is None:
                return {name: amount for name, amount in zip(names, row, strict=True) if amount}
            return {
                name: amount
                for name, amount, key in zip(names, row, keys, strict=True)
                if amount or key
            }

        runtime = None
        if index != SYSTEM and not (index == DEFAULT and group.max is None):
            runtime = values(arrays.runtime[index].tolist(), arrays.has_runtime[index].tolist())
        effective_min = arrays.effective_min[index].tolist()
        return GroupStatus(  # the settings are shared, not copied: nothing mutates them
            name=group.name,
            namespace=group.namespace,
            parent=group.parent,
            is_parent=group.is_parent,
            min=group.min,
            max=group.max,
            shared_weight=group.shared_weight,
            request=values(arrays.request[index].tolist(), shown),
            runtime=runtime,
            used=values(total[_USED * width : (_USED + 1) * width], shown),
            effective_min={
                name: effective_min[names.index(name)] for name in group.min if name in names
            },
            non_preemptible_request=values(total[_NP_REQUEST * width : (_NP_REQUEST + 1) * width]),
            non_preemptible_used=values(total[_NP_USED * width : (_NP_USED + 1) * width]),
            over_quota_pods=self._over_quota[index],
        )
