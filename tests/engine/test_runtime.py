"""The runtime split, case by case (koordinator-semantics.md 2.3-2.9 and 7)."""

import pytest
from eq_engine import EngineConfig

from tests.manifests import load, node, pod, quota, run, runtime

ROOT = EngineConfig().root_name


def test_the_seed_example_gives_5_20_35_40():
    # total 100; (min, request, weight): A 10/5/40, B 15/20/60, C 20/40/50, D 15/70/80
    rows = {"a": (10, 5, 40), "b": (15, 20, 60), "c": (20, 40, 50), "d": (15, 70, 80)}
    objects = []
    for name, (min_, request, weight) in rows.items():
        objects.append(
            quota(name, min={"cpu": f"{min_}m"}, max={"cpu": "1"}, weight={"cpu": f"{weight}m"})
        )
        objects.append(pod(f"{name}-0", quota=name, node=None, cpu=f"{request}m"))
    engine = run(*objects, capacity={"cpu": "100m"})
    assert {n: runtime(engine, n)["cpu"] for n in rows} == {"a": 5, "b": 20, "c": 35, "d": 40}


def test_largest_remainder_loses_no_unit_and_breaks_ties_by_name():
    # 3 GPUs, six equal hungry groups: round-half-up would hand out 6, truncation 0.
    objects = [quota(f"g{i}", max={"nvidia.com/gpu": 8}) for i in range(6)]
    objects += [pod(f"p{i}", quota=f"g{i}", node=None, nvidia_com_gpu="2") for i in range(6)]
    engine = run(*objects, capacity={"nvidia.com/gpu": 3})
    assert [runtime(engine, f"g{i}")["nvidia.com/gpu"] for i in range(6)] == [1, 1, 1, 0, 0, 0]


def test_hungry_group_with_zero_weight_gets_nothing_and_capacity_stays_unassigned():
    engine = run(
        quota("busy", min={"cpu": "30m"}, max={"cpu": 1}, weight={"cpu": 0, "memory": 1}),
        quota("idle", min={"cpu": "50m"}, max={"cpu": 1}),
        pod("p", quota="busy", node=None, cpu="1"),
        capacity={"cpu": "100m"},
    )
    # weight is all-zero on cpu but not overall: the annotation holds, cpu weight 0
    assert runtime(engine, "busy") == {"cpu": 30}
    assert runtime(engine, "idle") == {"cpu": 0}  # 70 of 100 left unassigned


def test_all_zero_weight_annotation_means_max():
    engine = run(
        quota("a", max={"cpu": "300m"}, weight={"cpu": 0}),
        quota("b", max={"cpu": "100m"}),
        pod("pa", quota="a", node=None, cpu="1"),
        pod("pb", quota="b", node=None, cpu="1"),
        capacity={"cpu": "100m"},
    )
    assert (runtime(engine, "a"), runtime(engine, "b")) == ({"cpu": 75}, {"cpu": 25})


def test_a_partial_weight_annotation_weighs_the_resources_it_leaves_out_by_max():
    engine = run(
        quota("a", max={"cpu": 1, "memory": 100}, weight={"cpu": 1}),
        quota("b", max={"cpu": 1, "memory": 100}),
        pod("pa", quota="a", node=None, cpu="1", memory=100),
        pod("pb", quota="b", node=None, cpu="1", memory=100),
        capacity={"cpu": 1, "memory": 100},
    )
    # Koordinator's webhook fills the missing memory weight from max: 100 each, an even split.
    assert runtime(engine, "a") == {"cpu": 500, "memory": 50}
    assert runtime(engine, "b") == {"cpu": 500, "memory": 50}


def test_group_asking_less_than_its_min_lends_the_rest():
    engine = run(
        quota("lender", min={"cpu": 6}, max={"cpu": 10}),
        quota("borrower", min={"cpu": 4}, max={"cpu": 10}),
        pod("small", quota="lender", cpu="1"),
        pod("big", quota="borrower", node=None, cpu="9"),
        capacity={"cpu": 10},
    )
    assert (runtime(engine, "lender"), runtime(engine, "borrower")) == (
        {"cpu": 1000},
        {"cpu": 9000},
    )


def test_non_lending_group_holds_its_whole_min():
    # parent lends; child1 does not (min 20), child2 lends (min 20); no pods at all
    engine = run(
        quota("parent", is_parent=True, min={"cpu": 40}, max={"cpu": 100}),
        quota("child1", parent="parent", lend=False, min={"cpu": 20}, max={"cpu": 100}),
        quota("child2", parent="parent", min={"cpu": 20}, max={"cpu": 100}),
        capacity={"cpu": 100},
    )
    assert runtime(engine, "parent") == {"cpu": 20_000}
    assert runtime(engine, "child1") == {"cpu": 20_000}
    assert runtime(engine, "child2") == {"cpu": 0}


def test_runtime_never_exceeds_request_clipped_to_max():
    engine = run(
        quota("t", min={"cpu": 1}, max={"cpu": 3}),
        pod("p", quota="t", node=None, cpu="10"),
        capacity={"cpu": 100},
    )
    assert runtime(engine, "t") == {"cpu": 3000}


def test_mins_are_kept_even_above_the_total_without_scaling():
    engine = run(
        quota("a", min={"cpu": 100}, max={"cpu": 100}),
        quota("b", min={"cpu": 100}, max={"cpu": 100}),
        pod("pa", quota="a", node=None, cpu="100"),
        pod("pb", quota="b", node=None, cpu="100"),
        capacity={"cpu": 150},
        min_scaling=False,
    )
    assert (runtime(engine, "a"), runtime(engine, "b")) == ({"cpu": 100_000}, {"cpu": 100_000})


def test_min_scaling_shrinks_mins_to_fit_and_shares_the_remainder():
    # total 200 over three mins of 100: each min scales to 66666m, 2 units go by remainder
    objects = []
    for name in "abc":
        objects.append(quota(name, min={"cpu": 100}, max={"cpu": 100}))
        objects.append(pod(f"p{name}", quota=name, node=None, cpu="100"))
    engine = run(*objects, capacity={"cpu": 200})
    assert [engine.status(n).effective_min["cpu"] for n in "abc"] == [66666] * 3
    assert [runtime(engine, n)["cpu"] for n in "abc"] == [66667, 66667, 66666]


def test_min_scaling_applies_below_a_squeezed_parent():
    engine = run(
        quota("dept", is_parent=True, min={"cpu": 10}, max={"cpu": 10}),
        quota("other", min={"cpu": 10}, max={"cpu": 10}),
        quota("t1", parent="dept", min={"cpu": 5}, max={"cpu": 10}),
        quota("t2", parent="dept", min={"cpu": 5}, max={"cpu": 10}),
        pod("a", quota="t1", node=None, cpu="10"),
        pod("b", quota="t2", node=None, cpu="10"),
        pod("c", quota="other", node=None, cpu="10"),
        capacity={"cpu": 10},
    )
    assert runtime(engine, "dept") == {"cpu": 5000}
    assert [engine.status(n).effective_min["cpu"] for n in ("t1", "t2")] == [2500, 2500]


def test_a_resource_the_cluster_gains_with_nothing_of_it_scales_the_mins_at_once():
    # Found by the property test: cpu enters the cluster with 0 of it (a node that has none
    # left). The root's runtime stays 0, but its cpu is now scalable: the min must scale to 0
    # in the incremental recompute as in a fresh one.
    group = quota("g", lend=False, min={"cpu": 1}, max={"memory": 0, "cpu": 1})
    engine = run(group, node("n0", memory="0"))
    assert engine.status("g").effective_min["cpu"] == 1000  # not in the cluster: not scaled
    load(engine, node("n1", cpu="0", memory="0"))
    engine.recompute()
    fresh = run(group, node("n0", memory="0"), node("n1", cpu="0", memory="0"))
    assert engine.status("g").effective_min == fresh.status("g").effective_min == {"cpu": 0}


def test_resource_missing_from_the_cluster_has_total_zero():
    engine = run(
        quota("small", min={"cpu": 1, "nvidia.com/gpu": 2}, max={"cpu": 4, "nvidia.com/gpu": 4}),
        quota("big", max={"cpu": 4, "nvidia.com/gpu": 4}),
        pod("a", quota="small", node=None, nvidia_com_gpu="1"),
        pod("b", quota="big", node=None, nvidia_com_gpu="4"),
        capacity={"cpu": 8},
        min_scaling=False,
    )
    assert runtime(engine, "small")["nvidia.com/gpu"] == 1  # within its min: its request
    assert runtime(engine, "big")["nvidia.com/gpu"] == 0  # beyond it: only its min, 0


def test_runtime_is_masked_to_the_groups_max_keys():
    engine = run(
        quota("dept", is_parent=True, max={"cpu": 10}),
        quota("t", parent="dept", max={"cpu": 10, "memory": "1Gi"}),
        pod("p", quota="t", node=None, cpu="1", memory="1Gi"),
        capacity={"cpu": 10, "memory": "10Gi"},
    )
    # the parent's split only covers the parent's own max keys: no memory below it
    assert runtime(engine, "dept") == {"cpu": 1000}
    assert runtime(engine, "t") == {"cpu": 1000}


@pytest.mark.parametrize("total", [2**49 + 1, 2**50 + 1, 2**55 + 1])
def test_products_beyond_int64_are_split_exactly(total):
    # weight x leftover is about 2**105: far beyond int64, yet no unit may be lost
    engine = run(
        quota("a", max={"memory": "60Pi"}, weight={"memory": "30Pi"}),
        quota("b", max={"memory": "60Pi"}, weight={"memory": "10Pi"}),
        pod("pa", quota="a", node=None, memory="60Pi"),
        pod("pb", quota="b", node=None, memory="60Pi"),
        capacity={"memory": total},
    )
    a, b = runtime(engine, "a")["memory"], runtime(engine, "b")["memory"]
    assert (a, b) == (3 * (total // 4) + 1, total // 4)  # 3/4 and 1/4, the odd unit to a


def test_amounts_above_the_limit_count_as_the_limit():
    # 2**56 bytes (64Pi) and above all mean "no practical limit": 1E and 3E weigh the same
    engine = run(
        quota("a", max={"memory": "1E"}, weight={"memory": "3E"}),
        quota("b", max={"memory": "1E"}, weight={"memory": "1E"}),
        pod("pa", quota="a", node=None, memory="1Pi"),
        pod("pb", quota="b", node=None, memory="1Pi"),
        capacity={"memory": "1Pi"},
    )
    assert runtime(engine, "a") == runtime(engine, "b") == {"memory": 2**49}
