"""Pods that may run in any of several node pools: which pool's group the gate gives each.

A group that lists `pools` (`keys.POOLS`: groups, in order, each in a tree of its own) holds no
pods itself: each of its pods goes to one of them. Until the gate chooses, a pod is counted in
the first, where its request stands and reclaim makes room for it (`Catalog.membership`). Each
round, once every group's own queue is decided (`admission.admit`), the gate takes these pods
most important first and gives each the first of its pools whose group has room for it within
its min, without borrowing; else the first whose group has room within its runtime, borrowing.
A group's room counts what the pod would add to its request (`Accounting.runtime_with`), so an
idle pool's group has room for it up to its share. It skips a pool none of whose nodes the
pod's own node selector and affinity let it go to, and a group whose own pods wait (those came
first). A gang goes whole to one pool, and its later pods to the pool it went to. The operator
labels each pod with the group chosen (`keys.POOL_QUOTA`) and narrows its node affinity to that
pool as it lifts the gate.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..model import LabelSelector, Pod, may_use
from ..numbers import Accounting, amounts
from ..state import Snapshot
from .queueing import Budget, Cause, Entry, Wait, queue_order, sums


@dataclass(frozen=True, slots=True)
class Choosing:
    """An entry of pods that may go to any of `pools` (group indices, in order)."""

    entry: Entry
    pools: tuple[int, ...]
    home: str
    """The group that lists the pools."""


@dataclass
class Placed:
    """What the gate made of the pods choosing a pool, one round."""

    admitted: list[str] = dataclasses.field(default_factory=list)
    placed: dict[str, str] = dataclasses.field(default_factory=dict)
    """Pod key to the group it goes to."""
    waiting: dict[str, Wait] = dataclasses.field(default_factory=dict)


def choice(
    snapshot: Snapshot,
    entry: Entry,
    placed: Mapping[str, str],
    selectors: Mapping[str, LabelSelector],
) -> Choosing | None:
    """The groups an entry may go to, when its pods' group lists pools and the gate has not
    chosen yet (`placed`: where it sent pods a moment ago, whose label is on its way); None
    for any other entry."""
    index = snapshot.tree.index
    pod = entry.pods[0][0]
    home, pools = snapshot.tree.catalog.open_pools(pod)
    if not pools:
        return None
    went = _gang_pool(snapshot, pod, placed, pools) if not entry.gang else None
    candidates = (index[went],) if went else tuple(index[name] for name in pools)
    core = [p for p, _ in entry.pods[: entry.minimum]]
    return Choosing(entry, _usable(core, candidates, snapshot.accounts, selectors), home)


def _gang_pool(
    snapshot: Snapshot, pod: Pod, placed: Mapping[str, str], pools: Sequence[str]
) -> str | None:
    """The pool group a pod's gang went to already, if any: its later pods go there too."""
    if pod.gang is None:
        return None
    for key in snapshot.gangs[pod.gang.key]:
        other = snapshot.pods[key].pod
        went = other.pool_quota if other.pool_quota in pools else placed.get(key)
        if went in pools:
            return went
    return None


def _usable(
    pods: Sequence[Pod],
    pools: Sequence[int],
    accounts: Accounting,
    selectors: Mapping[str, LabelSelector],
) -> tuple[int, ...]:
    """The groups of `pools` whose pool every one of `pods` may go to: a tree without a
    selector (the default tree, a tree no profile makes) takes any pod."""
    groups = accounts.tree.groups
    return tuple(
        group
        for group in pools
        if (selector := selectors.get(groups[group].tree_id)) is None
        or all(may_use(pod.node_terms, selector) for pod in pods)
    )


def request_in(accounts: Accounting, pod: Pod, group: int) -> list[int]:
    """What `pod` would count for in `group`: its request on the group's resources."""
    keys = accounts.request_keys[group]
    return [
        amount if key else 0
        for amount, key in zip(amounts(pod.request, accounts.names).tolist(), keys, strict=True)
    ]


def _asks(accounts: Accounting, pods: Sequence[Pod], group: int) -> tuple[list[int], list[int]]:
    """What `pods` together would count for in `group`, and the non-preemptible part of it."""
    return sums([(pod, request_in(accounts, pod, group)) for pod in pods], len(accounts.names))


def place(
    choosing: Sequence[Choosing],
    budget_of: Callable[[int], Budget],
    accounts: Accounting,
    counted: Callable[[str], int],
    busy: Mapping[int, str],
) -> Placed:
    """Give each entry of `choosing`, most important first, a group of its pools (see the
    module). `budget_of`: a group's budget as its own queue left it, taken from as pods are
    placed; `counted`: each pod's group now; `busy`: groups whose own pods wait, and why."""
    result = Placed()
    names = [group.name for group in accounts.tree.groups]
    added: dict[int, list[int]] = {}  # placed this round where they are not counted
    for choice in sorted(choosing, key=lambda c: c.entry.order):
        entry = choice.entry
        core = [pod for pod, _ in entry.pods[: entry.minimum]]
        what = (
            f"gang {entry.gang} ({len(entry.pods)} pods seen, minimum {entry.minimum})"
            if entry.gang
            else "this pod"
        )
        reasons: list[str] = []
        asks: dict[int, tuple[list[int], list[int]]] = {}  # what it would count for, by group
        chosen: int | None = None
        borrowing: int | None = None
        for group in choice.pools:
            if group in busy:
                reasons.append(f"{names[group]}: {busy[group]}")
                continue
            request, fixed = asks[group] = _asks(accounts, core, group)
            trial = _room(budget_of(group), accounts, group, request, core, counted, added)
            why = trial.shortfall(request, fixed, what)
            if why is not None:
                reasons.append(f"{names[group]} {why}")
            elif trial.within_min(request):
                chosen = group
                break
            elif borrowing is None:
                borrowing = group
        chosen = borrowing if chosen is None else chosen
        if chosen is None:
            wait = Wait(
                Cause.QUOTA, f"no pool of {choice.home} has room: {'; '.join(reasons) or 'none'}"
            )
            result.waiting.update((pod.key, wait) for pod, _ in entry.pods)
            continue
        budget = budget_of(chosen)
        request, fixed = asks[chosen]
        budget.take(request, fixed)
        _admit(result, core, names[chosen])
        _count(added, chosen, core, request, counted)
        for pod in sorted((pod for pod, _ in entry.pods[entry.minimum :]), key=queue_order):
            request, fixed = _asks(accounts, [pod], chosen)
            why = budget.shortfall(request, fixed, "this pod")
            if why is None:
                budget.take(request, fixed)
                _admit(result, [pod], names[chosen])
                _count(added, chosen, [pod], request, counted)
            else:
                result.waiting[pod.key] = Wait(Cause.QUOTA, f"{names[chosen]} {why}")
    return result


def _count(
    added: dict[int, list[int]],
    group: int,
    pods: Sequence[Pod],
    request: Sequence[int],
    counted: Callable[[str], int],
) -> None:
    """`pods`, placed in `group`, add `request` to what it will ask once they are counted
    there, unless they are already."""
    if all(counted(pod.key) == group for pod in pods):
        return
    before = added.get(group, [0] * len(request))
    added[group] = [a + b for a, b in zip(before, request, strict=True)]


def _admit(result: Placed, pods: Sequence[Pod], group: str) -> None:
    result.admitted.extend(pod.key for pod in pods)
    result.placed.update((pod.key, group) for pod in pods)


def _room(
    budget: Budget,
    accounts: Accounting,
    group: int,
    request: Sequence[int],
    pods: Sequence[Pod],
    counted: Callable[[str], int],
    added: Mapping[int, Sequence[int]],
) -> Budget:
    """The group's budget with the runtime it would have were `pods` counted in it, as well as
    the pods placed there this round (`added`): as it is where they are counted already."""
    if all(counted(pod.key) == group for pod in pods):
        return budget
    more = np.array(request, dtype=np.int64) + np.array(added.get(group, 0), dtype=np.int64)
    runtime = accounts.runtime_with(group, more).tolist()
    return dataclasses.replace(budget, runtime=runtime)
