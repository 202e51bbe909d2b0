"""Whether a Job has the pods reclaim takes counted as its failures: its annotation, then the
first podFailurePolicy rule on the DisruptionTarget condition (the Job controller's order)."""

from __future__ import annotations

from typing import Any

import pytest
from eq_engine.reading import counted_evictions

SPARE = "quota.scheduling.koordinator.sh/spare-job"
DISRUPTED = {"type": "DisruptionTarget"}


def job(*rules: dict[str, Any], annotations: dict[str, str] | None = None) -> dict[str, Any]:
    spec = {"podFailurePolicy": {"rules": list(rules)}} if rules else {}
    return {"metadata": {"annotations": annotations or {}}, "spec": spec}


def rule(action: str, *conditions: dict[str, str], exit_codes: bool = False) -> dict[str, Any]:
    found: dict[str, Any] = {"action": action}
    if conditions:
        found["onPodConditions"] = list(conditions)
    if exit_codes:
        found["onExitCodes"] = {"operator": "In", "values": [42]}
    return found


@pytest.mark.parametrize(
    ("subject", "reason"),
    [
        pytest.param(job(), None, id="no policy"),
        pytest.param(job(rule("Ignore", DISRUPTED)), None, id="ignores disruptions"),
        pytest.param(
            job(rule("FailJob", DISRUPTED)),
            "spec.podFailurePolicy.rules[0]: action FailJob on the DisruptionTarget condition",
            id="fails the Job on a disruption",
        ),
        pytest.param(
            job(rule("FailJob", exit_codes=True), rule("Count", DISRUPTED)),
            "spec.podFailurePolicy.rules[1]: action Count on the DisruptionTarget condition",
            id="counts them after an exit-code rule",
        ),
        pytest.param(
            job(rule("Ignore", DISRUPTED), rule("FailJob", DISRUPTED)),
            None,
            id="the first rule on the condition wins",
        ),
        pytest.param(
            job(rule("FailIndex", {"type": "ConfigIssue"}, {**DISRUPTED, "status": "True"})),
            "spec.podFailurePolicy.rules[0]: action FailIndex on the DisruptionTarget condition",
            id="fails the index, with the condition among others",
        ),
        pytest.param(
            job(rule("FailJob", {**DISRUPTED, "status": "False"})),
            None,
            id="a rule on the condition being False",
        ),
        pytest.param(
            job(rule("FailJob", {"type": "ConfigIssue"})), None, id="a rule on another condition"
        ),
        pytest.param(
            job(rule("Ignore", DISRUPTED), annotations={SPARE: "false"}),
            f'metadata.annotations[{SPARE}]: "false"',
            id="annotated not to be spared",
        ),
        pytest.param(job(annotations={SPARE: "true"}), None, id="annotated to be spared"),
        pytest.param(
            {"spec": {"podFailurePolicy": {"rules": "FailJob"}}}, None, id="rules not a list"
        ),
        pytest.param(
            {"spec": {"podFailurePolicy": {"rules": ["FailJob"]}}}, None, id="a rule not an object"
        ),
        pytest.param({}, None, id="no metadata or spec"),
    ],
)
def test_a_job_asks_for_its_evictions_to_count(subject: dict[str, Any], reason: str | None) -> None:
    assert counted_evictions(subject) == reason
