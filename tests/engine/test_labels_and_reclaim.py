"""Over-quota labels (DESIGN.md) and reclaim plans (koordinator-semantics.md 5)."""

from eq_engine import EngineConfig
from eq_engine.decisions.reclaim import reclaim_plan

from tests.manifests import load, pod, quota, run

DEFAULT = EngineConfig().default_name


def labels(engine):
    return {p.name: label for p, _, label in engine.pods()}


def test_pods_are_in_quota_while_their_running_sum_fits_the_min():
    engine = run(
        quota("t", min={"cpu": 4}, max={"cpu": 10}),
        pod("late", quota="t", cpu="2", start="2026-01-01T00:09:00Z"),
        pod("early", quota="t", cpu="2", start="2026-01-01T00:01:00Z"),
        pod("important", quota="t", cpu="1", priority=100, start="2026-01-01T00:10:00Z"),
        pod("waiting", quota="t", cpu="1", node=None),
        capacity={"cpu": 10},
    )
    # order: important (prio 100), early, late; 1 + 2 fits 4, + 2 does not
    assert labels(engine) == {
        "important": "in-quota",
        "early": "in-quota",
        "late": "over-quota",
        "waiting": None,
    }


def test_non_preemptible_pods_come_first_then_name_breaks_ties():
    engine = run(
        quota("t", min={"cpu": 2}, max={"cpu": 10}),
        pod("b", quota="t", cpu="1", priority=1000),
        pod("locked", quota="t", cpu="1", preemptible=False),
        pod("a", quota="t", cpu="1", priority=1000),
        capacity={"cpu": 10},
    )
    assert labels(engine) == {"locked": "in-quota", "a": "in-quota", "b": "over-quota"}


def test_once_a_pod_does_not_fit_every_less_important_one_is_over_quota():
    engine = run(
        quota("t", min={"cpu": 3}, max={"cpu": 10}),
        pod("big", quota="t", cpu="4", priority=2),
        pod("tiny", quota="t", cpu="1"),
        capacity={"cpu": 10},
    )
    assert labels(engine) == {"big": "over-quota", "tiny": "over-quota"}


def test_labels_use_the_scaled_min():
    engine = run(
        quota("a", min={"cpu": 4}, max={"cpu": 8}),
        quota("b", min={"cpu": 4}, max={"cpu": 8}),
        pod("a1", quota="a", cpu="2", priority=1),
        pod("a2", quota="a", cpu="2"),
        capacity={"cpu": 4},
    )
    assert engine.status("a").effective_min == {"cpu": 2000}
    assert labels(engine) == {"a1": "in-quota", "a2": "over-quota"}


def test_system_pods_carry_no_label_and_default_pods_have_no_guarantee():
    engine = run(
        pod("dns", namespace="kube-system", cpu="1"),
        pod("stray", namespace="x", cpu="1"),
        pod("besteffort", namespace="x"),
        capacity={"cpu": 10},
    )
    assert labels(engine) == {"dns": None, "stray": "over-quota", "besteffort": "in-quota"}


def test_a_finished_pod_loses_its_label_and_a_deleted_one_needs_no_change():
    from eq_engine import parse_pod

    engine = run(
        quota("t", min={"cpu": 4}, max={"cpu": 4}),
        pod("job", quota="t", cpu="1"),
        pod("web", quota="t", cpu="1"),
        capacity={"cpu": 4},
    )
    engine.set_pod(parse_pod(pod("job", quota="t", cpu="1", phase="Succeeded")))
    engine.remove_pod("apps/web")
    assert engine.recompute().changes.pod_labels == {"apps/job": None}
    assert list(engine.pods()) == []


def test_the_label_a_pod_holds_is_kept_with_it_until_it_finishes():
    from eq_engine import parse_pod

    engine = run(quota("t", min={"cpu": 4}, max={"cpu": 4}), capacity={"cpu": 4})
    engine.set_pod(parse_pod(pod("job", quota="t", cpu="1")), "over-quota")
    engine.recompute()
    assert (engine.capacity_label("apps/job"), engine.held_label("apps/job")) == (
        "in-quota",
        "over-quota",
    )
    engine.hold_label("apps/job", "in-quota")  # the write's answer
    assert engine.held_label("apps/job") == "in-quota"
    engine.set_pod(parse_pod(pod("job", quota="t", cpu="1")), None)  # an echo: taken off
    assert engine.held_label("apps/job") is None and engine.holds("apps/job")
    engine.set_pod(parse_pod(pod("job", quota="t", cpu="1", phase="Succeeded")), "in-quota")
    assert not engine.holds("apps/job") and list(engine.pod_keys()) == []


def test_reclaim_follows_koordinators_two_passes():
    # runtime cpu 50, memory 0; pods (priority, cpu, memory) = 10/20/0, 9/10/1, 8/20/0, 7/40/0
    pods = [(10, "20", "0"), (9, "10", "1"), (8, "20", "0"), (7, "40", "0")]
    objects = [quota("t", max={"cpu": "50m", "memory": 0})]
    objects += [
        pod(f"p{prio}", quota="t", priority=prio, cpu=f"{cpu}m", memory=memory)
        for prio, cpu, memory in pods
    ]
    engine = run(*objects, capacity={"cpu": 1, "memory": 100})
    # Koordinator's pick (p9 and p7), evicted least important first
    assert reclaim_plan(engine.recompute()) == {"t": ["apps/p7", "apps/p9"]}


def test_reclaim_evicts_everything_taken_when_even_that_is_not_enough():
    engine = run(
        quota("t", max={"cpu": 1}),
        pod("locked", quota="t", cpu="3", preemptible=False, priority=1),
        pod("a", quota="t", cpu="1"),
        pod("b", quota="t", cpu="1", start="2026-01-02T00:00:00Z"),
        capacity={"cpu": 10},
    )
    # least important first: b (started later), then a; the locked pod is never taken
    assert reclaim_plan(engine.recompute()) == {"t": ["apps/b", "apps/a"]}


def test_groups_within_runtime_and_system_pods_are_never_reclaimed():
    engine = run(
        quota("t", max={"cpu": 10}),
        pod("p", quota="t", cpu="2"),
        pod("dns", namespace="kube-system", cpu="1"),
        capacity={"cpu": 10},
    )
    assert reclaim_plan(engine.recompute()) == {}


def test_borrower_returns_what_a_lender_asks_back_taking_only_over_quota_pods():
    objects = [
        quota("lender", min={"cpu": 6}, max={"cpu": 10}),
        quota("borrower", min={"cpu": 4}, max={"cpu": 10}),
        pod("l1", quota="lender", node=None, cpu="6"),
    ]
    objects += [pod(f"b{i}", quota="borrower", cpu="2", priority=10 - i) for i in range(5)]
    engine = run(*objects, capacity={"cpu": 10})
    assert engine.status("borrower").runtime == {"cpu": 4000}
    assert labels(engine)["b1"] == "in-quota" and labels(engine)["b2"] == "over-quota"
    assert reclaim_plan(engine.recompute()) == {"borrower": ["apps/b4", "apps/b3", "apps/b2"]}


def test_one_groups_plan_is_the_one_planned_with_every_other():
    from eq_engine.decisions.reclaim import reclaims

    objects = [
        quota("lender", min={"cpu": 8}, max={"cpu": 10}),
        quota("left", min={"cpu": 1}, max={"cpu": 10}),
        quota("right", min={"cpu": 1}, max={"cpu": 10}),
        pod("l1", quota="lender", node=None, cpu="8"),
    ]
    objects += [
        pod(f"{side}{i}", quota=side, cpu="1") for side in ("left", "right") for i in (0, 1, 2)
    ]
    engine = run(*objects, capacity={"cpu": 10})
    every = reclaims(engine.recompute())
    assert set(every) == {"left", "right"}
    assert reclaims(engine.recompute(), only="right") == {"right": every["right"]}
    assert reclaims(engine.recompute(), only="lender") == {}  # within its runtime
    assert reclaims(engine.recompute(), only="gone") == {}


def test_terminating_pods_count_as_returned_and_kept_pods_are_replaced():
    def borrower(*extra):
        objects = [quota("t", max={"cpu": 2})]
        objects += [pod(f"p{i}", quota="t", cpu="1", priority=10 - i) for i in range(4)]
        return run(*objects, *extra, capacity={"cpu": 10})

    assert reclaim_plan(borrower().recompute()) == {"t": ["apps/p3", "apps/p2"]}
    leaving = pod("p3", quota="t", cpu="1", priority=7)
    leaving["metadata"]["deletionTimestamp"] = "2026-01-01T00:05:00Z"
    # p3 is on its way out: only p2 more is needed, and p3 is not evicted again
    assert reclaim_plan(borrower(leaving).recompute()) == {"t": ["apps/p2"]}
    # a PodDisruptionBudget refused p3: p1 goes in its place
    assert reclaim_plan(borrower().recompute(), keep={"apps/p3"}) == {"t": ["apps/p2", "apps/p1"]}


def test_default_group_is_reclaimed_against_its_max():
    engine = run(
        quota(DEFAULT, namespace="koordinator-system", max={"cpu": 1}),
        pod("x", namespace="n", cpu="1", priority=5),
        pod("y", namespace="n", cpu="1"),
        capacity={"cpu": 10},
    )
    assert reclaim_plan(engine.recompute()) == {DEFAULT: ["n/y"]}


def test_a_min_raised_relabels_the_groups_pods_without_placing_them_again():
    """A change of numbers only (min, here) keeps every pod where it is; the labels follow the
    new effective min at once, and the change reports them."""
    engine = run(
        quota("team", min={"cpu": "1"}, max={"cpu": "4"}),
        pod("a", quota="team", cpu="1", priority=2),
        pod("b", quota="team", cpu="1", priority=1),
        capacity={"cpu": "4"},
    )
    assert [engine.capacity_label(k) for k in ("apps/a", "apps/b")] == ["in-quota", "over-quota"]
    load(engine, quota("team", min={"cpu": "2"}, max={"cpu": "4"}))
    changes = engine.recompute().changes
    assert dict(changes.pod_labels) == {"apps/b": "in-quota"}
    assert engine.status("team").effective_min == {"cpu": 2000}
