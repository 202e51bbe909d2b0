"""Request, used and non-preemptible sums (koordinator-semantics.md 2.2, 3)."""

from eq_engine import EngineConfig, parse_pod

from tests import realistic
from tests.manifests import pod, quota, run

ROOT = EngineConfig().root_name
SYSTEM = EngineConfig().system_name
DEFAULT = EngineConfig().default_name


def test_pending_pods_count_in_request_and_only_scheduled_ones_in_used():
    engine = run(
        quota("t", max={"cpu": 10}),
        pod("running", quota="t", cpu="2"),
        pod("pending", quota="t", node=None, cpu="3"),
        capacity={"cpu": 10},
    )
    status = engine.status("t")
    assert (status.request, status.used) == ({"cpu": 5000}, {"cpu": 2000})


def test_finished_pods_count_nowhere():
    engine = run(
        quota("t", max={"cpu": 10}),
        pod("done", quota="t", phase="Succeeded", cpu="2"),
        pod("failed", quota="t", phase="Failed", cpu="2"),
        capacity={"cpu": 10},
    )
    assert engine.status("t").request == {"cpu": 0}
    assert [p.key for p, _, _ in engine.pods()] == []


def test_terminating_pods_still_count():
    raw = pod("leaving", quota="t", cpu="2")
    raw["metadata"]["deletionTimestamp"] = "2026-01-01T00:05:00Z"
    engine = run(quota("t", max={"cpu": 10}), raw, capacity={"cpu": 10})
    assert engine.status("t").used == {"cpu": 2000}


def test_requests_are_masked_to_the_groups_max_keys():
    engine = run(
        quota("t", max={"cpu": 10}),
        pod("p", quota="t", cpu="1", memory="1Gi", nvidia_com_gpu="1"),
        capacity={"cpu": 10},
    )
    assert engine.status("t").request == {"cpu": 1000}


def test_own_request_is_not_clipped_but_what_goes_up_is():
    # A parent with max 300 whose children pass up 100 + 300 shows request 400, and passes 300.
    engine = run(
        quota("dept", is_parent=True, max={"cpu": 300}),
        quota("small", parent="dept", max={"cpu": 100}),
        quota("big", parent="dept", max={"cpu": 500}),
        pod("a", quota="small", cpu="250"),
        pod("b", quota="big", cpu="300"),
        capacity={"cpu": 1000},
    )
    assert engine.status("small").request == {"cpu": 250_000}
    assert engine.status("dept").request == {"cpu": 400_000}
    assert engine.status(ROOT).request == {"cpu": 300_000}


def test_used_goes_up_unclipped():
    engine = run(
        quota("dept", is_parent=True, max={"cpu": 1}),
        quota("t", parent="dept", max={"cpu": 1}),
        pod("p", quota="t", cpu="3"),
        capacity={"cpu": 10},
    )
    assert engine.status("dept").used == {"cpu": 3000}
    assert engine.status(ROOT).used == {"cpu": 3000}


def test_non_lending_group_requests_at_least_its_min_even_when_idle():
    engine = run(
        quota("dept", is_parent=True, max={"cpu": 100, "memory": "1Gi"}),
        quota("web", parent="dept", lend=False, min={"cpu": 20}, max={"cpu": 100, "memory": "1Gi"}),
        capacity={"cpu": 100},
    )
    # raised on the resources of its min only
    assert engine.status("web").request == {"cpu": 20_000, "memory": 0}
    assert engine.status("dept").request == {"cpu": 20_000, "memory": 0}


def test_non_preemptible_request_and_used_are_plain_sums_up_the_tree():
    engine = run(
        quota("dept", is_parent=True, max={"cpu": 2}),
        quota("t", parent="dept", min={"cpu": 5}, max={"cpu": 2}),
        pod("db", quota="t", preemptible=False, cpu="3"),
        pod("queued", quota="t", preemptible=False, node=None, cpu="1"),
        pod("batch", quota="t", cpu="1"),
        capacity={"cpu": 10},
    )
    for name in ("t", "dept"):
        status = engine.status(name)
        assert status.non_preemptible_request == {"cpu": 4000}
        assert status.non_preemptible_used == {"cpu": 3000}


def test_root_request_adds_system_and_default_requests_and_their_use_leaves_the_total():
    engine = run(
        quota("t", min={"cpu": 1}, max={"cpu": 100}),
        pod("dns", namespace="kube-system", cpu="1"),
        pod("stray", namespace="nowhere", cpu="2"),
        pod("work", quota="t", cpu="50"),
        capacity={"cpu": 10},
    )
    assert engine.status(ROOT).request == {"cpu": 53_000}
    assert engine.status(ROOT).used == {"cpu": 53_000}
    assert engine.status(ROOT).runtime == {"cpu": 7000}  # 10 - 1 (system) - 2 (default)
    assert engine.status("t").runtime == {"cpu": 7000}
    assert engine.status(SYSTEM).runtime is None
    assert engine.status(DEFAULT).runtime is None  # no max configured: unlimited


def test_capacity_is_the_sum_of_node_allocatable():
    from tests.manifests import node

    engine = run(
        quota("t", max={"cpu": 100}),
        node("a", cpu="4", memory="8Gi"),
        node("b", cpu="4", pods="110"),
        pod("p", quota="t", cpu="20"),
    )
    assert engine.capacity() == {"cpu": 8000, "memory": 8 * 2**30, "pods": 110}
    assert engine.status("t").runtime == {"cpu": 8000}


def test_a_rebuild_counts_many_alike_pods_as_adding_them_one_by_one():
    """A rebuild counts pods alike in one addition; it sums as the pods added one at a time
    would, even where requests near the engine's limit overflow (200 pods of 100Pi)."""
    objects = [
        quota("t", max={"cpu": 1000, "memory": "1Ei"}),
        *(pod(f"huge-{i}", quota="t", node=None, memory="100Pi") for i in range(200)),
        *(pod(f"web-{i}", quota="t", cpu="250m", memory="1Gi") for i in range(30)),
    ]
    rebuilt = run(*objects, capacity={"cpu": 1000, "memory": "1Ei"})
    one_by_one = run(objects[0], capacity={"cpu": 1000, "memory": "1Ei"})
    for raw in objects[1:]:
        one_by_one.set_pod(parse_pod(raw))
    one_by_one.recompute()
    assert rebuilt.status("t") == one_by_one.status("t")
    assert rebuilt.status("t").used == {"cpu": 7500, "memory": 30 * 2**30}


def test_an_amount_beyond_int64_counts_as_one_at_the_engines_limit():
    """The engine's arrays are int64: a min or max written beyond that (100Ei of memory) is
    held at the engine's limit, as one between the limit and int64 (1Ei) is."""

    def engine(amount: str):
        return run(
            realistic.elastic_quota(
                "t", "team", min={"cpu": 500, "memory": amount}, max={"cpu": 1000, "memory": amount}
            ),
            realistic.pod("team", "web-7d4b9c6f5-x2x8q", requests={"cpu": "250m", "memory": "1Gi"}),
            capacity={"cpu": 1000, "memory": "1Ei"},
        )

    beyond, within = engine("100Ei").status("t"), engine("1Ei").status("t")
    computed = ("request", "runtime", "used", "effective_min", "over_quota_pods")
    assert [getattr(beyond, f) for f in computed] == [getattr(within, f) for f in computed]
    assert beyond.effective_min == {"cpu": 500_000, "memory": 2**56}  # the limit
    assert beyond.runtime == beyond.used == {"cpu": 250, "memory": 2**30}
