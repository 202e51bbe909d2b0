"""Quota-gated scheduling in the engine: which waiting pods may go, in which order, and why the
others wait; and which new pods the webhook gates."""

from __future__ import annotations

from eq_engine import EngineConfig, parse_pod, parse_quota
from eq_engine.decisions.admission import admissions
from eq_engine.decisions.gating import gate_exemption
from eq_engine.tree.catalog import build_catalog

from tests.manifests import load, node, pod, quota, run


def waiting_pod(name: str, *, cpu: str = "1", **kwargs) -> dict:
    return pod(name, namespace="team", node=None, gated=True, cpu=cpu, **kwargs)


TEAM = quota("team", namespace="team", min={"cpu": 2}, max={"cpu": 2})
CLUSTER = node("n", cpu=100)
GATE = "quota.scheduling.koordinator.sh/gate"


def test_pods_are_admitted_up_to_the_runtime_and_the_rest_wait_with_the_numbers():
    running = pod("running", namespace="team", cpu="500m")
    engine = run(TEAM, CLUSTER, running, *(waiting_pod(f"w{i}") for i in range(3)))
    decided = admissions(engine.recompute())
    assert decided.admitted == ("team/w0",)  # 500m used + 1 fits in 2; another 1 would not
    assert decided.waiting["team/w1"].message == (
        "waiting for quota: team runtime cpu 2, used or admitted 1500m, this pod 1"
    )
    assert decided.waiting["team/w2"].message.startswith(
        "waiting for quota: team/w1 waits first in team"
    )
    assert decided.waiting_per_group == {"team": 2}


def test_an_admitted_pod_counts_at_once_so_nobody_takes_the_last_unit_twice():
    engine = run(TEAM, CLUSTER, *(waiting_pod(f"w{i}") for i in range(4)))
    first = admissions(engine.recompute())
    assert first.admitted == ("team/w0", "team/w1")
    for key in first.admitted:  # the gate lifted: pending, not bound yet
        load(engine, pod(key.split("/")[1], namespace="team", node=None, cpu="1"))
    engine.recompute()
    held = admissions(engine.recompute(), holding=first.admitted)
    assert held.admitted == ()
    assert held.waiting["team/w2"].message == (
        "waiting for quota: team runtime cpu 2, used or admitted 2, this pod 1; "
        "admitted, not bound yet: team/w0, team/w1"
    )
    load(engine, pod("w0", namespace="team", phase="Succeeded", cpu="1"))  # one finishes
    engine.recompute()
    assert admissions(engine.recompute(), holding=first.admitted).admitted == ("team/w2",)


def test_an_unbound_pod_holds_budget_only_while_the_edge_says_it_was_just_admitted():
    never_schedules = pod("stuck", namespace="team", node=None, cpu="2")  # created ungated
    engine = run(TEAM, CLUSTER, never_schedules, waiting_pod("w0"))
    assert admissions(engine.recompute(), holding={"team/stuck"}).admitted == ()
    assert admissions(engine.recompute()).admitted == ("team/w0",)  # the hold ran out, or never was


def test_the_most_important_pod_goes_first_then_the_oldest():
    engine = run(
        TEAM,
        CLUSTER,
        waiting_pod("old-low", cpu="2", created="2026-01-01T00:00:00Z"),
        waiting_pod("new-high", cpu="2", priority=10, created="2026-01-01T00:05:00Z"),
        waiting_pod("mid-low", cpu="2", created="2026-01-01T00:01:00Z"),
    )
    assert admissions(engine.recompute()).admitted == ("team/new-high",)
    load(engine, pod("new-high", namespace="team", phase="Succeeded", cpu="2"))
    engine.recompute()
    assert admissions(engine.recompute()).admitted == ("team/old-low",)


def test_a_non_preemptible_pod_must_also_fit_in_the_min():
    lender = quota("lender", namespace="lender", min={"cpu": 4}, max={"cpu": 4})
    team = quota("team", namespace="team", min={"cpu": 1}, max={"cpu": 4})
    engine = run(lender, team, node("n", cpu=5), waiting_pod("locked", cpu="2", preemptible=False))
    decided = admissions(engine.recompute())
    assert decided.admitted == ()
    assert (
        "min cpu 1, non-preemptible used or admitted 0, this pod 2"
        in decided.waiting["team/locked"].message
    )
    engine = run(lender, team, node("n", cpu=5), waiting_pod("free", cpu="2"))
    assert admissions(engine.recompute()).admitted == (
        "team/free",
    )  # borrowed from the idle lender


def test_waiting_pods_count_in_the_request_so_the_group_earns_its_share():
    parent = quota("dept", is_parent=True, min={"cpu": 4}, max={"cpu": 4})
    busy = quota("busy", namespace="team", parent="dept", min={"cpu": 2}, max={"cpu": 4})
    idle = quota("idle", namespace="idle", parent="dept", min={"cpu": 2}, max={"cpu": 4})
    pods = [waiting_pod(f"w{i}", quota="busy") for i in range(4)]
    engine = run(parent, busy, idle, node("n", cpu=4), *pods)
    assert engine.status("busy").runtime == {"cpu": 4000}
    assert len(admissions(engine.recompute()).admitted) == 4


def test_which_new_pods_the_webhook_gates():
    config = EngineConfig()
    catalog = build_catalog([parse_quota(TEAM)], config)

    def gated(raw: dict) -> bool:
        return gate_exemption(parse_pod(raw), catalog) is None

    assert gated(pod("p", namespace="team", node=None, cpu="1"))
    assert not gated(pod("p", namespace="team", node="n", cpu="1"))  # bound already
    assert not gated(pod("p", namespace="team", node=None, labels={GATE: "false"}))
    assert not gated(pod("p", namespace="kube-system", node=None))  # the system group
    assert not gated(pod("p", namespace="elsewhere", node=None))  # default group, no max
    assert not gated(waiting_pod("p"))  # has it already
    bounded = quota(config.default_name, namespace=config.namespace, max={"cpu": 10})
    catalog = build_catalog([parse_quota(TEAM), parse_quota(bounded)], config)
    assert gated(pod("p", namespace="elsewhere", node=None))


def test_a_non_preemptible_pod_fits_in_the_min_as_written_when_idle_siblings_scale_it_down():
    """Koordinator's check (the min as written, not scaled): a lending parent's runtime is what
    its children ask; with the siblings idle, their mins are scaled down to it, and the one group
    that wants its guarantee would be held below it (seen against koord-scheduler, which admits
    all three)."""
    parent = quota("dept", is_parent=True, min={"cpu": 10}, max={"cpu": 10})
    team = quota("team", namespace="team", parent="dept", min={"cpu": 3}, max={"cpu": 3})
    idle = quota("idle", namespace="idle", parent="dept", min={"cpu": 6}, max={"cpu": 6})
    pods = [waiting_pod(f"w{i}", preemptible=False, quota="team") for i in range(3)]
    engine = run(parent, team, idle, node("n", cpu=10), *pods)
    status = engine.status("team")
    assert status.effective_min == {"cpu": 1000}  # dept's runtime 3 over mins 3 + 6
    assert status.runtime == {"cpu": 3000}
    assert admissions(engine.recompute()).admitted == ("team/w0", "team/w1", "team/w2")
