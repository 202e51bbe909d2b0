"""Protection from reclaim: PodDisruptionBudgets that allow no disruption now keep their pods
(the plan takes the next candidate), and a minimum run time puts young pods last."""

from __future__ import annotations

from typing import Any

import pytest
from eq_engine import ObjectError
from eq_engine.decisions.reclaim import reclaims
from eq_engine.model.budgets import parse_disruption_budget

from tests.manifests import node, pod, quota, run

NOW = 1_767_225_600.0  # 2026-01-01T00:00:00Z


def borrowing(*, started: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """The borrower runs five 2-cpu pods (b0 most important, b4 least), app=b<i>; the lender
    has taken its 6 cpu back: 6 cpu to return, b2, b3 and b4 over quota."""
    started = started or {}
    return [
        quota("lender", namespace="lender", min={"cpu": 6}, max={"cpu": 10}),
        quota("borrower", namespace="borrower", min={"cpu": 4}, max={"cpu": 10}),
        *(
            pod(
                f"b{i}",
                namespace="borrower",
                cpu="2",
                priority=10 - i,
                labels={"app": f"b{i}", "tier": "batch"},
                start=started.get(f"b{i}", "2025-12-31T00:00:00Z"),
            )
            for i in range(5)
        ),
        pod("l0", namespace="lender", cpu="6"),
        node("n1", cpu="10"),
    ]


def budget(name: str, selector: dict[str, Any] | None, allowed: int) -> dict[str, Any]:
    """A PodDisruptionBudget as `kubectl get pdb -o json` shows it once the disruption
    controller has counted its pods."""
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {
            "name": name,
            "namespace": "borrower",
            "uid": f"uid-{name}",
            "resourceVersion": "4242",
            "generation": 1,
            "creationTimestamp": "2025-12-01T00:00:00Z",
        },
        "spec": {"minAvailable": 1, **({"selector": selector} if selector is not None else {})},
        "status": {
            "currentHealthy": 1,
            "desiredHealthy": 1,
            "disruptionsAllowed": allowed,
            "expectedPods": 1,
            "observedGeneration": 1,
        },
    }


def victims(*budgets: dict[str, Any], min_runtime: float = 0, **options: Any) -> list[str]:
    engine = run(*borrowing(started=options.pop("started", None)), reclaim_min_runtime=min_runtime)
    for raw in budgets:
        engine.set_disruption_budget(parse_disruption_budget(raw))
    plan = reclaims(engine.recompute(), **options)["borrower"]
    return [key.split("/")[1] for c in plan.victims() for key in c.keys]


def test_without_budgets_the_least_important_go():
    assert victims() == ["b4", "b3", "b2"]


def test_a_budget_that_allows_no_disruption_keeps_its_pod_and_the_next_goes():
    keeps_b4 = budget("b4", {"matchLabels": {"app": "b4"}}, allowed=0)
    # b4 stays; b3 and b2 go, returning 4 of the 6 (b0 and b1 are in quota: never taken)
    engine = run(*borrowing())
    engine.set_disruption_budget(parse_disruption_budget(keeps_b4))
    plan = reclaims(engine.recompute())["borrower"]
    assert [c.keys for c in plan.victims()] == [("borrower/b3",), ("borrower/b2",)]
    wanted = plan.victims(budgets=False)
    assert plan.kept_by_budgets(wanted) == {("borrower/b4",): "borrower/b4"}


def test_one_disruption_allowed_is_spent_on_the_least_important_pod_it_covers():
    batch = budget(
        "batch", {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["batch"]}]}, 1
    )
    assert victims(batch) == ["b4"]


def test_a_budget_of_another_namespace_or_without_selector_covers_nothing():
    elsewhere = {**budget("x", {}, 0), "metadata": {"name": "x", "namespace": "lender"}}
    no_selector = budget("none", None, 0)
    assert victims(elsewhere, no_selector) == ["b4", "b3", "b2"]


def test_an_empty_selector_covers_every_pod_of_its_namespace():
    assert victims(budget("all", {}, 0)) == []


def test_young_pods_are_taken_only_after_every_older_candidate():
    started = {"b4": "2025-12-31T23:59:50Z"}  # 10 s before NOW
    assert victims(started=started, now=NOW, min_runtime=60) == ["b3", "b2", "b4"]
    assert victims(started=started, now=NOW, min_runtime=5) == ["b4", "b3", "b2"]


def test_a_malformed_budget_names_its_field():
    raw = budget("bad", {"matchExpressions": [{"key": "tier", "operator": "Equals"}]}, 0)
    with pytest.raises(ObjectError, match=r"spec.selector.matchExpressions\[0\].operator"):
        parse_disruption_budget(raw)
