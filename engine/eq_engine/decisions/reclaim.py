"""Which pods to evict from a group whose used exceeds its runtime (Koordinator's revoke).

Pass 1 walks the preemptible pods least important first, taking each away while used is still
above runtime. If that is not enough, every pod taken is evicted. Otherwise pass 2 puts the
taken pods back, most important first, and keeps each one that still fits: only the rest are
evicted. Runtime cpu 50; pods (priority, cpu, memory) 10/20/0, 9/10/1, 8/20/0, 7/40/0; runtime
memory 0: pass 1 takes 7, 8 and 9; pass 2 keeps 8 and evicts 9 and 7. The plan lists the
evicted pods least important first (7, then 9), the order in which they should go.

Used is compared on the runtime's resources only (a resource the runtime lacks is not
limited). Unlike Koordinator, the working sum is not narrowed to each pod's own resources after
a subtraction, which could declare a group satisfied while it still exceeds its runtime.

`reclaims` decides, on a recompute's snapshot, the reclaim of every over-used group.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from ..model import DisruptionBudget, Pod, keys
from ..numbers import USED, Amounts
from ..state import Member, Snapshot, running_units
from ..tree import SYSTEM


def exceeds(used: Amounts, runtime: Amounts, limited: npt.NDArray[np.bool_]) -> bool:
    """Whether `used` is above `runtime` on any limited resource."""
    return bool(((used > runtime) & limited).any())


def plan(
    *,
    used: Amounts,
    runtime: Amounts,
    limited: npt.NDArray[np.bool_],
    candidates: Sequence[Amounts],
) -> list[int]:
    """Indices into `candidates` (preemptible pods, least important first) to evict, in order."""
    remaining = used.copy()
    taken: list[int] = []
    for index, request in enumerate(candidates):
        if not exceeds(remaining, runtime, limited):
            break
        remaining -= request
        taken.append(index)
    if exceeds(remaining, runtime, limited):
        return taken
    evicted = []
    for index in reversed(taken):
        remaining += candidates[index]
        if exceeds(remaining, runtime, limited):
            remaining -= candidates[index]
            evicted.append(index)
    return evicted[::-1]


@dataclass(frozen=True, slots=True)
class Victim:
    """A pod a reclaim may evict: its key, uid and what it counts for in its group."""

    key: str
    uid: str
    request: dict[str, int]
    budgets: tuple[str, ...] = ()
    """The PodDisruptionBudgets that cover it (`namespace/name`)."""


@dataclass(frozen=True, slots=True)
class Candidate:
    """What a reclaim takes at once: one pod, or every running pod of a gang (`gang`, its
    `namespace/name`), which counts as one eviction against the round's limit."""

    pods: tuple[Victim, ...]
    gang: str = ""

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(pod.key for pod in self.pods)

    def request(self, resources: Sequence[str]) -> Amounts:
        return np.array(
            [sum(pod.request.get(name, 0) for pod in self.pods) for name in resources],
            dtype=np.int64,
        ).reshape(len(resources))


@dataclass(frozen=True, slots=True)
class GroupReclaim:
    """One over-used group's reclaim, decided on one snapshot of the engine.

    It holds its own numbers, so the edge may await evictions while the watch changes the
    engine, and re-plan after refusals without asking the engine again: `victims(refused)` is a
    pure function of this object. Candidates are the group's preemptible over-quota pods and
    gangs only, least important first; pods already leaving are taken off `used` (`remaining`).
    """

    group: str
    used: dict[str, int]
    runtime: dict[str, int]
    candidates: tuple[Candidate, ...]
    remaining: tuple[int, ...]
    """Used minus what the pods already leaving return, per resource of `resources`."""
    limits: tuple[int, ...]
    limited: tuple[bool, ...]
    resources: tuple[str, ...]
    allowed: Mapping[str, int] = field(default_factory=dict)
    """Disruptions each PodDisruptionBudget covering a candidate allows now."""
    whole: bool = False
    """Victims only if together they bring `remaining` within the limits (a preemption makes
    its whole room or evicts nobody); False: as many as may go (a reclaim takes back what it
    can)."""

    def victims(
        self,
        refused: Collection[str] = (),
        leaving: Collection[str] = (),
        *,
        budgets: bool = True,
    ) -> list[Candidate]:
        """The candidates to evict, in order, leaving those with a `refused` pod where they
        are and counting the `leaving` pods (evicted a moment ago) as returned: used 10,
        runtime 4, candidates a/2, b/2, c/2, d/2: [a, b, c]; with a refused: [b, c, d]; with
        a leaving: [b, c]. A gang with some pods leaving is the rest of its pods. A candidate
        that a PodDisruptionBudget would not let go now is skipped, least important first
        (`kept_by_budgets` names them); `budgets` False: as if no budget existed."""
        width = len(self.resources)
        remaining = np.array(self.remaining, dtype=np.int64).reshape(width)
        left: list[Candidate] = []
        requests: list[Amounts] = []
        for candidate in self.candidates:
            gone = tuple(pod for pod in candidate.pods if pod.key in leaving)
            if gone:
                remaining -= Candidate(gone).request(self.resources)
                rest = tuple(pod for pod in candidate.pods if pod.key not in leaving)
                if not rest:
                    continue
                candidate = Candidate(rest, candidate.gang)
            if not any(key in refused for key in candidate.keys):
                left.append(candidate)
        if budgets:
            kept = self.kept_by_budgets(left)
            left = [c for c in left if c.keys not in kept]
        requests = [candidate.request(self.resources) for candidate in left]
        limits = np.array(self.limits, dtype=np.int64).reshape(width)
        limited = np.array(self.limited, dtype=np.bool_).reshape(width)
        chosen = plan(used=remaining, runtime=limits, limited=limited, candidates=requests)
        freed = sum((requests[index] for index in chosen), np.zeros(width, dtype=np.int64))
        if self.whole and exceeds(remaining - freed, limits, limited):
            return []
        return [left[index] for index in chosen]

    def kept_by_budgets(self, candidates: Sequence[Candidate]) -> dict[tuple[str, ...], str]:
        """The `candidates` (least important first) that their budgets would not let go, by
        their pods' keys, each with the budget that keeps it: every budget's allowance is
        spent by the candidates before it, a gang needing one disruption per pod of it that
        the budget covers."""
        allowance = dict(self.allowed)
        kept: dict[tuple[str, ...], str] = {}
        for candidate in candidates:
            needs = Counter(name for pod in candidate.pods for name in pod.budgets)
            short = next((name for name, n in needs.items() if allowance[name] < n), None)
            if short is None:
                allowance.update((name, allowance[name] - n) for name, n in needs.items())
            else:
                kept[candidate.keys] = short
        return kept


def coverage(snapshot: Snapshot) -> Callable[[Pod], tuple[str, ...]]:
    """The PodDisruptionBudgets that cover a pod, by `namespace/name` (a budget covers pods of
    its own namespace only: they are looked up there)."""
    budgets: dict[str, list[DisruptionBudget]] = {}
    for budget in snapshot.budgets.values():
        budgets.setdefault(budget.namespace, []).append(budget)

    def covering(pod: Pod) -> tuple[str, ...]:
        return tuple(
            b.key for b in budgets.get(pod.namespace, ()) if b.covers(pod.namespace, pod.labels)
        )

    return covering


def candidate_of(
    unit: Sequence[Member], snapshot: Snapshot, covering: Callable[[Pod], tuple[str, ...]]
) -> Candidate:
    """A running unit (`running_units`: a pod, or a gang's running pods) as a candidate."""
    pods = tuple(
        Victim(m.pod.key, m.pod.uid, snapshot.pod_request(m.pod.key), covering(m.pod)) for m in unit
    )
    gang = unit[0].pod.gang
    return Candidate(pods, gang.name if gang else "")


def is_young(unit: Sequence[Member], now: float, min_runtime: float) -> bool:
    """Whether a candidate (a pod, or a gang: any of its pods) started less than `min_runtime`
    seconds before `now` (0: no minimum)."""
    return min_runtime > 0 and any(
        m.pod.start_time is None or now - m.pod.start_time < min_runtime for m in unit
    )


def reclaims(
    snapshot: Snapshot,
    *,
    leaving: Collection[str] = (),
    now: float = 0.0,
    only: str | None = None,
) -> dict[str, GroupReclaim]:
    """Each group whose used exceeds its runtime, with its reclaim decided on this state.

    Pods already terminating, and those in `leaving` (just evicted), count as returned: they
    are not evicted twice, and nothing else is evicted in their place. Only preemptible
    over-quota pods are candidates, so a refusal (a PodDisruptionBudget) never lets an in-quota
    pod be chosen instead; a gang is a candidate only when all its running pods in the group
    may go (`classification.running_units` labels it as a whole). A group whose plan has no
    victims is over its runtime but has nothing of its own left to evict. With the config's
    `reclaim_min_runtime`, a candidate that started less than that many seconds before `now`
    (a gang: any of its pods) comes after every older one, or, `reclaim_min_runtime_hard`, is
    not a candidate. `only`: that group's
    plan alone (a round planning again after each eviction need not plan every other group
    over its runtime).
    """
    accounts, tree = snapshot.accounts, snapshot.tree
    used = accounts.total[:, accounts.block(USED)]
    over = np.any((used > accounts.runtime) & accounts.has_runtime, axis=1)
    over[tree.roots] = False
    over[SYSTEM] = False
    if only is not None:  # (a group gone meanwhile has no plan)
        over &= np.arange(len(over)) == tree.index.get(only, -1)
    plans: dict[str, GroupReclaim] = {}
    width = len(accounts.names)
    covering = coverage(snapshot)
    min_runtime = snapshot.config.reclaim_min_runtime
    hard = snapshot.config.reclaim_min_runtime_hard
    for group in np.flatnonzero(over).tolist():
        members = [m for m in snapshot.members[group] if m.pod.scheduled]
        going = {m.pod.key for m in members if m.pod.terminating or m.pod.key in leaving}
        returned = [m.request for m in members if m.pod.key in going]
        candidates: list[tuple[bool, Candidate]] = []
        for unit in reversed(running_units(m for m in members if m.pod.key not in going)):
            if all(
                m.pod.preemptible
                and not m.pod.node_pinned  # it would come back on its node at once
                and snapshot.capacity_label(m.pod.key) == keys.OVER_QUOTA  # never in-quota ones
                for m in unit
            ):
                young = is_young(unit, now, min_runtime)
                if not (young and hard):
                    candidates.append((young, candidate_of(unit, snapshot, covering)))
        candidates.sort(key=lambda entry: entry[0])  # stable: the young ones last
        still_used = used[group] - np.array(returned, dtype=np.int64).reshape(
            len(returned), width
        ).sum(axis=0)
        status = snapshot.status(tree.groups[group].name)
        plans[status.name] = GroupReclaim(
            group=status.name,
            used=dict(status.used),
            runtime=dict(status.runtime or {}),
            candidates=tuple(candidate for _, candidate in candidates),
            remaining=tuple(still_used.tolist()),
            limits=tuple(accounts.runtime[group].tolist()),
            limited=tuple(accounts.has_runtime[group].tolist()),
            resources=accounts.names,
            allowed={
                name: snapshot.budgets[name].allowed
                for _, candidate in candidates
                for pod in candidate.pods
                for name in pod.budgets
            },
        )
    return plans


def reclaim_plan(
    snapshot: Snapshot,
    *,
    keep: Collection[str] = (),
    leaving: Collection[str] = (),
    now: float = 0.0,
) -> dict[str, list[str]]:
    """For each group whose used exceeds its runtime: the pods to evict, in order, only ever
    over-quota ones (`reclaims`, with the `keep` pods refused; `now` for the minimum run
    time)."""
    return {
        name: [key for victim in plan.victims(keep) for key in victim.keys]
        for name, plan in reclaims(snapshot, leaving=leaving, now=now).items()
    }
