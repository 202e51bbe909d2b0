"""Taking borrowed capacity back: evict what the engine's reclaim plans name, with Events.

Reclaim is paced by windows, as Koordinator's revoke is: a group whose used has stayed above
its runtime for a whole delay loses up to `max_evictions` pods, least important first, through
the policy/v1 Eviction API (PodDisruptionBudgets are honoured), and that round starts a new
window: the group is judged again only after another whole delay. So a group loses at most
`max_evictions` pods per delay, and a replacement that runs ungated (gating off, the webhook
down) is judged only after a delay of its own, instead of being evicted as soon as it runs.

The window belongs to the group, not to the leader: before a round's first eviction the leader
stamps the group's ElasticQuota (the `last-reclaim` annotation), and waits for the write to be
taken. Every replica watches that annotation, and a replica that sees it change starts the
group's window there, on its own clock (as with the Lease, clocks of two nodes are never
compared). So a new leader, whether the old one gave the Lease up or was killed mid-round,
never evicts from a group less than a delay after the old leader's round began.

A round's evictions (`evicting.Evictions.take`) are each decided on the engine as the watch has
it at that moment: a pod that the watch has since made in-quota, or a group no longer over its
runtime, is left alone; refused evictions are tried again after a backoff, and a refusal never
lets an in-quota pod be taken instead.

Every replica keeps the over-use clocks from what it watches; only the leader evicts. A replica
that becomes leader has been timing the groups all along, so losing the Lease for a moment does
not start the clocks over.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection

from eq_engine import Snapshot
from eq_engine.decisions import Candidate, GroupReclaim, reclaims
from eq_kit.kube import micro_time

from .evicting import Cluster, Evictions, Purpose, shown
from .metrics import Metrics
from .settings import ReclaimSettings
from .view import ClusterView


class Reclaimer:
    def __init__(
        self,
        view: ClusterView,
        cluster: Cluster,
        evictions: Evictions,
        settings: ReclaimSettings,
        metrics: Metrics,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._view, self._cluster, self._evictions = view, cluster, evictions
        self._settings, self._clock = settings, clock
        self._purpose = Purpose.named(
            "Reclaimed",
            "Reclaim",
            others="over-quota pods",
            attempts=metrics.evictions,
            gangs=metrics.gang_evictions,
        )
        self._over_since: dict[str, float] = {}
        self._stamps: dict[str, tuple[str, float]] = {}
        """Each group's `last-reclaim` stamp as last seen, and since when (this clock)."""
        self._own: dict[str, str] = {}
        """The stamps this replica wrote: they start no window, `_over_since` times its own."""

    def _date_stamps(self, now: float) -> None:
        """Date the groups' stamps that changed since the last look."""
        stamps, seen = self._view.reclaim_stamps, self._stamps
        self._stamps = {
            group: seen[group]
            if group in seen and seen[group][0] == stamp
            else (stamp, float("-inf") if self._own.get(group) == stamp else now)
            for group, stamp in stamps.items()
        }
        self._own = {g: stamp for g, stamp in self._own.items() if g in self._view.quota_refs}

    async def round(self, *, refresh: Callable[[], Snapshot | None], acting: bool = True) -> None:
        """Time every group over its runtime; when `acting` (leading), evict where due.
        `refresh` brings the engine up to date with the watch and hands back its snapshot (the
        loop's recompute; None before every kind's first LIST)."""
        now = self._clock()
        self._evictions.forget(now)
        self._date_stamps(now)
        # The loop's awaits since its last recompute may have let the watch in.
        snapshot = refresh()
        if snapshot is None:
            return
        plans = self._plans(snapshot, self._evictions.evicted)
        for group in list(self._over_since):
            if group not in plans:
                del self._over_since[group]
        for group, plan in plans.items():
            since = self._over_since.setdefault(group, now)
            window = max(since, self._stamps.get(group, ("", since))[1])
            if not acting or now - window < self._settings.delay or not plan.candidates:
                continue
            over_for = now - since

            def replan(leaving: Collection[str], group: str = group) -> GroupReclaim | None:
                snapshot = refresh()  # on what the watch shows now, never on an old plan
                return (
                    None if snapshot is None else self._plans(snapshot, leaving, group).get(group)
                )

            def reason(plan: GroupReclaim, _: Candidate, over_for: float = over_for) -> str:
                return (
                    f"group {plan.group} uses {shown(plan.used)}, above its runtime "
                    f"{shown(plan.runtime)}, for {over_for:.0f}s; "
                )

            async def start(group: str = group) -> bool:
                return await self._stamp(group)

            taken = await self._evictions.take(
                plan,
                replan,
                purpose=self._purpose,
                phrase="to return borrowed capacity",
                reason=reason,
                start=start,
            )
            if taken:
                self._over_since[group] = self._clock()  # a new window: a whole delay

    def _plans(
        self, snapshot: Snapshot, leaving: Collection[str], only: str | None = None
    ) -> dict[str, GroupReclaim]:
        """Every group over its runtime, or `only` that one."""
        return reclaims(
            snapshot,
            leaving=leaving,
            now=time.time(),
            only=only,
        )

    async def _stamp(self, group: str) -> bool:
        """Start the group's window in the cluster, before its first eviction."""
        quota = self._view.quota_refs.get(group)
        if quota is None:
            return False
        stamp = micro_time()
        if not await self._cluster.stamp(quota, stamp):
            return False
        self._own[group] = stamp
        return True
