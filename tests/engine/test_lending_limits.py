"""Lending and borrowing limits inside the split, and Kueue's own cases of them.

Kueue's cases (sigs.k8s.io/kueue v0.17.0, pkg/cache/scheduler) are transcribed with their
numbers. A ClusterQueue is a leaf group with its nominal quota as min; a cohort is a parent
whose min is its subtree's quota (its own nominal quota plus its children's), so that its own
quota is what its runtime has left after its children's mins. Kueue's `potentialAvailable`, what
a queue could use with nobody else using anything, is the group's runtime when it asks for the
whole cluster and the others ask for nothing. Kueue's `available` under usage is not transcribed:
Kueue admits first come, first served, where this split shares what is left by weight and takes
back what a group borrowed beyond its share (docs/how-it-works.md, "Lending and borrowing
limits").
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.manifests import pod, quota, run, runtime

BIG = 1_000  # a max no case reaches: Kueue's queues have none besides their borrowing limit


def group(
    name: str,
    nominal: int,
    *,
    parent: str | None = None,
    is_parent: bool = False,
    lending: int | None = None,
    borrowing: int | None = None,
) -> dict[str, Any]:
    """A Kueue queue or cohort of `nominal` cpu as an ElasticQuota (cpu in cores)."""
    return quota(
        name,
        parent=parent,
        is_parent=is_parent,
        min={"cpu": nominal},
        max={"cpu": BIG},
        lending_limit=None if lending is None else {"cpu": lending},
        borrowing_limit=None if borrowing is None else {"cpu": borrowing},
    )


def potentially_available(groups: list[dict[str, Any]], total: int, asking: str) -> int:
    """The cpu (cores) `asking` gets when it asks for `total` and nobody else asks."""
    engine = run(*groups, pod("all", quota=asking, node=None, cpu=total), capacity={"cpu": total})
    cpu = runtime(engine, asking)
    assert cpu is not None
    return cpu["cpu"] // 1000


# TestAvailable's cases (resource_test.go), red flavor's cpu, `wantPotentiallyAvailable`.
KUEUE_AVAILABLE = {
    "cqs with cohort": (
        # cohort 10; cq1 10; cq2 10, lending limit 9
        [group("cq1", 10), group("cq2", 10, lending=9)],
        30,
        {"cq1": 29, "cq2": 30},
    ),
    "cq borrows from cohort": ([group("cq1", 10)], 20, {"cq1": 20}),
    "cq oversubscription spills into cohort": (
        # cq2: borrowing limit 0 and lending limit 0
        [group("cq1", 10), group("cq2", 10, borrowing=0, lending=0)],
        30,
        {"cq1": 20, "cq2": 10},
    ),
    "lending and borrowing limits respected": (
        # cohort 10; cq1 10; cq2 10, borrowing limit 2; cq3 10, lending limit 5
        [group("cq1", 10), group("cq2", 10, borrowing=2), group("cq3", 10, lending=5)],
        40,
        {"cq1": 35, "cq2": 12, "cq3": 40},
    ),
    "hierarchical cohort": (
        # root { left 10 { cq1 10 }, right 10 { cq2 10, lending limit 0 } }
        [
            group("left", 20, is_parent=True),
            group("cq1", 10, parent="left"),
            group("right", 20, is_parent=True),
            group("cq2", 10, parent="right", lending=0),
        ],
        40,
        {"cq1": 30, "cq2": 40},
    ),
    "hierarchical cohort respects borrowing limit": (
        # root { left 10, borrowing limit 5 { left-cq1 10, left-cq2 10, borrowing limit 5 },
        #        right 10 { right-cq 10 } }
        [
            group("left", 30, is_parent=True, borrowing=5),
            group("left-cq1", 10, parent="left"),
            group("left-cq2", 10, parent="left", borrowing=5),
            group("right", 20, is_parent=True),
            group("right-cq", 10, parent="right"),
        ],
        50,
        {"left-cq1": 35, "left-cq2": 15, "right-cq": 50},
    ),
    "hierarchical cohort respects lending limit": (
        # root { root-cq 0, left 0, lending limit 5 { left-cq1 10, lending limit 5,
        #        left-cq2 10 }, right 0 { right-cq 0 } }
        [
            group("root-cq", 0),
            group("left", 20, is_parent=True, lending=5),
            group("left-cq1", 10, parent="left", lending=5),
            group("left-cq2", 10, parent="left"),
            group("right", 0, is_parent=True),
            group("right-cq", 0, parent="right"),
        ],
        20,
        {"left-cq1": 20, "left-cq2": 15, "right-cq": 5, "root-cq": 5},
    ),
}


@pytest.mark.parametrize("case", sorted(KUEUE_AVAILABLE))
def test_kueue_potentially_available(case: str) -> None:
    groups, total, want = KUEUE_AVAILABLE[case]
    got = {name: potentially_available(groups, total, name) for name in want}
    assert got == want


def test_kueue_cohort_lendable() -> None:
    # TestCohortLendable (resource_node_test.go): cq1 cpu 8 lending limit 8, gpu 3 lending
    # limit 3; cq2 cpu 2 lending limit 2: the cohort may lend cpu 10 and 3 GPUs. Here: what
    # its queues may lend, and what a third queue with no min gets of it while they are idle.
    cq1 = quota(
        "cq1",
        parent="cohort",
        min={"cpu": 8, "nvidia.com/gpu": 3},
        max={"cpu": BIG, "nvidia.com/gpu": BIG},
        lending_limit={"cpu": 8, "nvidia.com/gpu": 3},
    )
    cq2 = quota("cq2", parent="cohort", min={"cpu": 2}, max={"cpu": BIG}, lending_limit={"cpu": 2})
    borrower = quota("borrower", parent="cohort", max={"cpu": BIG, "nvidia.com/gpu": BIG})
    cohort = quota(
        "cohort",
        is_parent=True,
        min={"cpu": 10, "nvidia.com/gpu": 3},
        max={"cpu": 10, "nvidia.com/gpu": 3},
    )
    engine = run(
        cohort,
        cq1,
        cq2,
        borrower,
        pod("all", quota="borrower", node=None, cpu=10, nvidia_com_gpu=3),
        capacity={"cpu": 10, "nvidia.com/gpu": 3},
    )
    lendable = [engine.status(name).lendable for name in ("cq1", "cq2")]
    assert {r: sum(g.get(r, 0) for g in lendable) for r in ("cpu", "nvidia.com/gpu")} == {
        "cpu": 10_000,
        "nvidia.com/gpu": 3,
    }
    assert runtime(engine, "borrower") == {"cpu": 10_000, "nvidia.com/gpu": 3}


def test_kueue_add_remove_workload_with_lending_limit() -> None:
    # TestSnapshotAddRemoveWorkloadWithLendingLimit (snapshot_test.go): lend-a and lend-b, 10
    # cpu each, lending limits 4 and 6; lend-a runs 1 + 9 + 6, lend-b 4. lend-a uses all 6 that
    # lend-b may lend; once lend-a-2 (9) is gone, lend-a uses 7 of its own 10.
    groups = [group("lend-a", 10, lending=4), group("lend-b", 10, lending=6)]
    workloads = {"lend-a-1": ("lend-a", 1), "lend-a-2": ("lend-a", 9), "lend-a-3": ("lend-a", 6)}
    workloads["lend-b-1"] = ("lend-b", 4)

    def with_workloads(names: list[str]) -> Any:
        pods = [pod(n, quota=workloads[n][0], cpu=workloads[n][1]) for n in names]
        return run(*groups, *pods, capacity={"cpu": 20})

    engine = with_workloads(sorted(workloads))
    a, b = engine.status("lend-a"), engine.status("lend-b")
    assert (runtime(engine, "lend-a"), runtime(engine, "lend-b")) == (
        {"cpu": 16_000},
        {"cpu": 4_000},
    )
    assert (a.borrowed, b.lent, b.lendable) == ({"cpu": 6_000}, {"cpu": 6_000}, {"cpu": 6_000})

    engine = with_workloads(["lend-a-1", "lend-a-3", "lend-b-1"])
    a, b = engine.status("lend-a"), engine.status("lend-b")
    assert (a.borrowed, a.lent, b.lent) == ({}, {"cpu": 3_000}, {"cpu": 6_000})


# ------------------------------------------------------------------------ the product's own


def test_a_lending_limit_keeps_the_rest_of_the_min_for_its_owner() -> None:
    engine = run(
        quota("owner", min={"cpu": 6}, max={"cpu": 10}, lending_limit={"cpu": 2}),
        quota("borrower", max={"cpu": 10}),
        pod("b", quota="borrower", node=None, cpu=10),
        capacity={"cpu": 10},
    )
    assert runtime(engine, "borrower") == {"cpu": 6_000}  # the 4 free cores, and 2 lent
    owner = engine.status("owner")
    assert runtime(engine, "owner") == {"cpu": 4_000}  # kept though it asks for nothing
    assert (owner.request, owner.lendable, owner.lent) == (
        {"cpu": 4_000},
        {"cpu": 2_000},
        {"cpu": 2_000},
    )


def test_lending_limit_0_is_allow_lent_false_and_the_whole_min_is_no_limit() -> None:
    def numbers(**owner: Any) -> tuple[object, ...]:
        engine = run(
            quota(
                "owner", min={"cpu": 6, "memory": "6Gi"}, max={"cpu": 10, "memory": "10Gi"}, **owner
            ),
            quota("borrower", max={"cpu": 10, "memory": "10Gi"}),
            pod("o", quota="owner", node=None, cpu=1, memory="1Gi"),
            pod("b", quota="borrower", node=None, cpu=10, memory="10Gi"),
            capacity={"cpu": 10, "memory": "10Gi"},
        )
        return tuple((s.request, s.runtime) for s in engine.statuses())

    assert numbers(lending_limit={"cpu": 0, "memory": 0}) == numbers(lend=False)
    assert numbers(lending_limit={"cpu": 6, "memory": "6Gi"}) == numbers()
    assert numbers(lending_limit={"cpu": 0}) != numbers(lend=False)  # memory is still lent


def test_a_borrowing_limit_caps_runtime_at_min_plus_the_limit_below_max() -> None:
    engine = run(
        quota("a", min={"cpu": 2}, max={"cpu": 8}, borrowing_limit={"cpu": 3}),
        quota("b", min={"cpu": 2}, max={"cpu": 8}, borrowing_limit={"cpu": 9}),
        pod("a", quota="a", node=None, cpu=8),
        pod("b", quota="b", node=None, cpu=8),
        capacity={"cpu": 20},
    )
    assert runtime(engine, "a") == {"cpu": 5_000}
    assert runtime(engine, "b") == {"cpu": 8_000}  # its max is lower than min + limit
    assert engine.status("a").request == {"cpu": 8_000}  # its own request, as Koordinator's


def test_what_a_capped_group_cannot_take_goes_to_its_siblings() -> None:
    engine = run(
        quota("capped", max={"cpu": 10}, borrowing_limit={"cpu": 1}),
        quota("other", max={"cpu": 10}),
        pod("c", quota="capped", node=None, cpu=10),
        pod("o", quota="other", node=None, cpu=10),
        capacity={"cpu": 10},
    )
    assert (runtime(engine, "capped"), runtime(engine, "other")) == (
        {"cpu": 1_000},
        {"cpu": 9_000},
    )


def test_a_parents_borrowing_limit_caps_its_subtree() -> None:
    engine = run(
        quota("dept", is_parent=True, min={"cpu": 4}, max={"cpu": 20}, borrowing_limit={"cpu": 2}),
        quota("team", parent="dept", min={"cpu": 4}, max={"cpu": 20}),
        pod("t", quota="team", node=None, cpu=20),
        capacity={"cpu": 20},
    )
    assert runtime(engine, "dept") == runtime(engine, "team") == {"cpu": 6_000}


def test_a_scaled_min_is_kept_up_to_its_scaled_amount() -> None:
    # mins 10 + 10 over a total of 10 scale to 5 each: the owner keeps 5 - never more than
    # its scaled min - though its lending limit alone would keep 8
    engine = run(
        quota("owner", min={"cpu": 10}, max={"cpu": 10}, lending_limit={"cpu": 2}),
        quota("borrower", min={"cpu": 10}, max={"cpu": 10}),
        pod("b", quota="borrower", node=None, cpu=10),
        capacity={"cpu": 10},
    )
    assert (runtime(engine, "owner"), runtime(engine, "borrower")) == (
        {"cpu": 5_000},
        {"cpu": 5_000},
    )
