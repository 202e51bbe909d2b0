"""The chart's webhook configurations call paths this webhook serves, for the kinds and
operations each path handles, and for every kind the webhook validates."""

from __future__ import annotations

import pytest

from tests.chart.rendering import find, render
from tests.manifests import pod, quota
from tests.webhook.conftest import KINDS, review

SAMPLES = {
    "ElasticQuota": quota("chart-team", min={"cpu": 1}),
    "Pod": pod("chart-pod", namespace="ml"),
    "Job": {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "chart-job"}},
    "CronJob": {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "chart-cron"}},
}


def chart_rules() -> list[tuple[str, str, str, str, str]]:
    """(path, group, version, resource, operation) for every rule of the chart's webhooks."""
    configurations = [
        find(render(), "ValidatingWebhookConfiguration"),
        find(render(), "MutatingWebhookConfiguration"),
    ]
    return [
        (hook["clientConfig"]["service"]["path"], group, version, resource, operation)
        for configuration in configurations
        for hook in configuration["webhooks"]
        for rule in hook["rules"]
        for group in rule["apiGroups"]
        for version in rule["apiVersions"]
        for resource in rule["resources"]
        for operation in rule["operations"]
    ]


def test_the_chart_sends_every_kind_the_webhook_validates():
    sent = {(group, version, resource) for _, group, version, resource, _ in chart_rules()}
    assert sent == set(KINDS.values())


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("rule", chart_rules(), ids=lambda rule: f"{rule[0]}:{rule[4]}")
async def test_each_path_of_the_chart_answers_the_reviews_its_rules_send(webhook, rule):
    path, group, version, resource, operation = rule
    (kind,) = [k for k, served in KINDS.items() if served == (group, version, resource)]
    sample = SAMPLES[kind]
    new = None if operation == "DELETE" else sample
    old = None if operation == "CREATE" else sample
    response = await webhook.post(path, review(operation, new=new, old=old, uid=f"chart-{kind}"))
    assert response.status == 200, await response.text()
    assert (await response.json())["response"]["uid"] == f"chart-{kind}"
