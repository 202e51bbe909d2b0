"""Reclaim against the emulator: an eviction refused whatever the budgets say (the emulator's
429), a dry run, and at most `--max-evictions` per round.

The borrower's least important pods evicted after the delay, non-preemptible pods kept, and
real PodDisruptionBudgets with the API server's own 429: on the real control plane
(tests/control_plane/test_reclaim.py)."""

from __future__ import annotations

import itertools
from datetime import datetime
from typing import Any

import pytest
from eq_engine.model import keys

from tests.apiserver import ApiError, ApiServer, disruption_budget
from tests.kube import EVENTS, QUOTAS, store, stored
from tests.manifests import node, pod, quota
from tests.operator.conftest import eventually, start_operator

RES = {"cpu": 10}


def borrowing() -> list[dict[str, Any]]:
    """The lender is idle; the borrower runs five 2-cpu pods on the lender's 6 cpu."""
    return [
        quota("lender", namespace="lender", min={"cpu": 6}, max=RES),
        quota("borrower", namespace="borrower", min={"cpu": 4}, max=RES),
        *(pod(f"b{i}", namespace="borrower", cpu="2", priority=10 - i) for i in range(5)),
        node("n1", cpu="10"),
    ]


class Evictions:
    """The Eviction API records each eviction; the emulator deletes the pod unless told to
    refuse (a PodDisruptionBudget's 429)."""

    def __init__(self, api: ApiServer, client: Any, *, refuse: set[str] = frozenset()) -> None:
        self.names: list[str] = []
        self.stamps: list[str | None] = []
        """The borrower's last-reclaim stamp at each eviction: each round writes its own."""
        self._api, self._refuse = api, refuse
        api.evictions = self.react

    def react(self, pod: dict[str, Any]) -> ApiError | None:
        name = pod["metadata"]["name"]
        self.names.append(name)
        self.stamps.append(annotation(self._api, "borrower", keys.LAST_RECLAIM))
        return disruption_budget() if name in self._refuse else None


def events(api: Any, reason: str) -> list[dict[str, Any]]:
    return [e for e in stored(api, EVENTS) if e.get("reason") == reason]


def annotation(api: Any, name: str, key: str) -> str | None:
    (found,) = [q for q in stored(api, QUOTAS) if q["metadata"]["name"] == name]
    return (found["metadata"].get("annotations") or {}).get(key)


async def lender_comes_back(client: Any) -> None:
    """The lender's pod, within its min: the borrower is over its runtime from now on."""
    await client.create(pod("l0", namespace="lender", cpu="6", node=None))


async def test_a_refused_eviction_moves_to_the_next_over_quota_pod_never_an_in_quota_one(
    api, client, tmp_path
):
    store(api, *borrowing())
    evictions = Evictions(api, client, refuse={"b3"})
    operator = await start_operator(tmp_path, api, "--reclaim-delay", "0.5")
    try:
        await lender_comes_back(client)
        await eventually(
            lambda: {"b4", "b2"} <= set(evictions.names), what="evictions around the refused pod"
        )
        assert evictions.names[:3] == ["b4", "b3", "b2"]
        # b0 and b1 fit the borrower's min (in-quota): never taken in b3's place.
        assert not {"b0", "b1"} & set(evictions.names)
        await eventually(lambda: bool(events(api, "ReclaimBlocked")), what="a ReclaimBlocked Event")
        blocked = events(api, "ReclaimBlocked")
        assert "refused (PodDisruptionBudget)" in blocked[0]["message"]
        # b3 is asked again after its backoff; its Event counts the refusals.
        await eventually(lambda: evictions.names.count("b3") >= 2, what="b3 asked again")

        def b3_blocked() -> list[dict[str, Any]]:
            return [e for e in events(api, "ReclaimBlocked") if e["involvedObject"]["name"] == "b3"]

        await eventually(lambda: b3_blocked()[0].get("count") == 2, what="the count raised")
        assert len(b3_blocked()) == 1
    finally:
        await operator.stop()


@pytest.mark.parametrize("flag", ["--dry-run", "--dry-run=true"])
async def test_dry_run_evicts_nothing_and_records_events(api, client, tmp_path, flag):
    store(api, *borrowing())
    evictions = Evictions(api, client)
    operator = await start_operator(tmp_path, api, "--reclaim-delay", "0.5", flag)
    try:
        await lender_comes_back(client)
        await eventually(
            lambda: len(events(api, "ReclaimDryRun")) >= 6,
            what="dry-run Events on the pods and the group",
        )
        assert evictions.names == []
        messages = {e["message"] for e in events(api, "ReclaimDryRun")}
        assert any(
            m.startswith("Dry run: would evict pod borrower/b4: group borrower uses")
            for m in messages
        )

        def labels() -> dict[str, str | None]:
            return {
                p["metadata"]["name"]: p["metadata"]["labels"].get(keys.CAPACITY)
                for p in stored(api, "v1/pods")
                if p["metadata"]["namespace"] == "borrower"
            }

        over = {"b2": "over-quota", "b3": "over-quota", "b4": "over-quota"}
        labelled = {"b0": "in-quota", "b1": "in-quota", **over}
        await eventually(lambda: labels() == labelled, what="the labels (their own writes)")
    finally:
        await operator.stop()


async def test_at_most_max_evictions_per_group_per_round(api, client, tmp_path):
    store(api, *borrowing())
    evictions = Evictions(api, client)
    operator = await start_operator(
        tmp_path, api, "--reclaim-delay", "0.5", "--reclaim-interval", "1", "--max-evictions", "1"
    )
    try:
        await lender_comes_back(client)
        await eventually(lambda: len(evictions.names) >= 3, what="three evictions")
        assert evictions.names[:3] == ["b4", "b3", "b2"]
        # One per round: each round stamps the group before its first eviction, so evictions
        # of one round would share a stamp. (How far apart the rounds are depends on how long
        # each took under load; test_reclaim_pacing.py holds their pace.)
        stamps = evictions.stamps[:3]
        assert None not in stamps, stamps
        moments = [datetime.fromisoformat(stamp).timestamp() for stamp in stamps if stamp]
        assert all(a < b for a, b in itertools.pairwise(moments)), stamps
    finally:
        await operator.stop()
