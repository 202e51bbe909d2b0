"""`/validate/jobs`: a Job or a CronJob is never refused, and is warned of when the pods reclaim
takes will count as its failures (it asks so: its podFailurePolicy counts disruptions, or it is
annotated `spare-job: "false"`); kubectl prints the warning to whoever applied it."""

from __future__ import annotations

from typing import Any

import pytest

from tests.webhook.conftest import review

pytestmark = pytest.mark.asyncio(loop_scope="module")

SPARE = "quota.scheduling.koordinator.sh/spare-job"
FAIL_ON_DISRUPTION = {
    "rules": [{"action": "FailJob", "onPodConditions": [{"type": "DisruptionTarget"}]}]
}
COUNTED = (
    "the pods that elastic-quota takes back for other groups (reclaim) will count as failures of "
)


def template(policy: dict[str, Any] | None, annotations: dict[str, str]) -> dict[str, Any]:
    spec: dict[str, Any] = {"template": {"spec": {"restartPolicy": "Never", "containers": []}}}
    if policy:
        spec["podFailurePolicy"] = policy
    return {"metadata": {"annotations": annotations}, "spec": spec}


def job(
    policy: dict[str, Any] | None = None, *, annotations: dict[str, str] | None = None
) -> dict[str, Any]:
    made = template(policy, annotations or {})
    made["metadata"].update(name="train", namespace="ml")
    return {"apiVersion": "batch/v1", "kind": "Job", **made}


def cron_job(policy: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": "nightly", "namespace": "ml"},
        "spec": {"schedule": "0 2 * * *", "jobTemplate": template(policy, {})},
    }


async def warnings(webhook: Any, body: dict[str, Any]) -> list[str]:
    response = await webhook.post("/validate/jobs", body)
    assert response.status == 200, await response.text()
    answer = (await response.json())["response"]
    assert answer["allowed"] is True and "status" not in answer, answer
    return answer.get("warnings", [])  # type: ignore[no-any-return]


async def test_a_job_that_fails_on_a_disruption_is_warned_of(webhook):
    assert await warnings(webhook, review("CREATE", new=job(FAIL_ON_DISRUPTION))) == [
        "Job ml/train: spec.podFailurePolicy.rules[0]: action FailJob on the DisruptionTarget "
        f"condition: {COUNTED}this Job, toward its backoffLimit and its failure backoff"
    ]


async def test_a_job_that_opts_out_of_sparing_is_warned_of(webhook):
    created = review("CREATE", new=job(annotations={SPARE: "false"}))
    (warning,) = await warnings(webhook, created)
    assert warning.startswith(f'Job ml/train: metadata.annotations[{SPARE}]: "false": {COUNTED}')


async def test_a_cron_job_is_warned_of_for_the_jobs_it_makes(webhook):
    assert await warnings(webhook, review("CREATE", new=cron_job(FAIL_ON_DISRUPTION))) == [
        "CronJob ml/nightly: spec.jobTemplate.spec.podFailurePolicy.rules[0]: action FailJob on "
        f"the DisruptionTarget condition: {COUNTED}each Job it makes, toward its backoffLimit "
        "and its failure backoff"
    ]


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(review("CREATE", new=job()), id="a Job the operator spares"),
        pytest.param(
            review(
                "CREATE",
                new=job({"rules": [{**FAIL_ON_DISRUPTION["rules"][0], "action": "Ignore"}]}),
            ),
            id="a Job that ignores disruptions",
        ),
        pytest.param(review("CREATE", new=cron_job()), id="a CronJob the operator spares"),
        pytest.param(
            review("UPDATE", new=job(FAIL_ON_DISRUPTION), old=job(FAIL_ON_DISRUPTION)),
            id="an update that changes nothing of it",
        ),
        pytest.param(review("DELETE", old=job(FAIL_ON_DISRUPTION)), id="a deletion"),
    ],
)
async def test_a_job_whose_evictions_are_not_counted_is_let_through_silently(webhook, body):
    assert await warnings(webhook, body) == []


async def test_an_update_that_opts_out_is_warned_of(webhook):
    updated = review("UPDATE", new=job(annotations={SPARE: "false"}), old=job())
    assert len(await warnings(webhook, updated)) == 1


async def test_another_kind_is_a_bad_review(webhook):
    response = await webhook.post(
        "/validate/jobs", review("CREATE", new={"kind": "Pod", "metadata": {"name": "p"}})
    )
    assert response.status == 400
    assert (await response.json()) == {
        "error": "request.kind.kind: this endpoint warns of Job and CronJob, not Pod"
    }
