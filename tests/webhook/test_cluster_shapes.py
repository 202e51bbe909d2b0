"""The webhook over HTTPS on objects as a real cluster holds them (tests/realistic/) and
reviews as kube-apiserver sends them: the product's own pods, Koordinator's default group,
partial weights, finished pods and edits that change nothing the rules read (issue 19)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from tests.realistic import (
    REPLICASET_CONTROLLER,
    P,
    admission_review,
    cronjob_pod,
    deployment_pod,
    elastic_quota,
    koordinator_builtins,
    named_by_server,
    node,
    statefulset_pod,
)
from tests.webhook.conftest import replace_objects

pytestmark = pytest.mark.asyncio(loop_scope="module")

RESEARCH = elastic_quota(
    "research", "koordinator-system", is_parent=True, min={"cpu": "2"}, max={"cpu": "3"}
)
"""The quick start's department before issue 19: in the namespace the chart runs in."""
PHYSICS = elastic_quota("physics", "physics", is_parent=True, min={"cpu": "2"}, max={"cpu": "4"})
"""A parent group, the only ElasticQuota of its namespace and named like it."""
ACCEL = elastic_quota(
    "accel",
    "quotas",
    is_parent=True,
    min={"cpu": "10", "memory": "40Gi", "nvidia.com/gpu": "2"},
    max={"cpu": "40", "memory": "160Gi", "nvidia.com/gpu": "4"},
)
ACCEL_CPU = elastic_quota(
    "accel-cpu", "accel-cpu", parent="accel", min={"cpu": "4"}, max={"cpu": "20"}
)
"""Created while the webhook was down: its max lacks the parent's memory and GPU."""


def finished(namespace: str, cronjob: str) -> list[dict[str, Any]]:
    """Two runs of a CronJob: one Succeeded, one Failed because kubelet evicted it."""
    return [
        cronjob_pod(namespace, cronjob, phase="Succeeded", requests={"cpu": "1"}),
        cronjob_pod(
            namespace,
            cronjob,
            scheduled=29148780,
            phase="Failed",
            evicted=True,
            requests={"memory": "2Gi"},
        ),
    ]


RUNNING = deployment_pod("reports", "renderer", requests={"cpu": "1"})
REPORTS_FINISHED = finished("reports", "digest")


def cluster() -> list[dict[str, Any]]:
    leaf = {"min": {"cpu": "1"}, "max": {"cpu": "3"}}
    return [
        *koordinator_builtins(),
        RESEARCH,
        *(elastic_quota(t, t, parent="research", **leaf) for t in ("team-a", "team-b")),
        PHYSICS,
        elastic_quota("optics", "optics", parent="physics", min={"cpu": "1"}, max={"cpu": "4"}),
        ACCEL,
        ACCEL_CPU,
        elastic_quota("nightly", "nightly", max={"cpu": "4", "memory": "8Gi"}),
        elastic_quota("reports", "reports", max={"cpu": "4", "memory": "8Gi"}),
        *finished("nightly", "backup"),
        RUNNING,
        *REPORTS_FINISHED,
        node("worker-1", cpu="32", memory_gi=128),
        node("worker-2", cpu="32", memory_gi=128),
    ]


@pytest.fixture(scope="module", autouse=True)
def seeded(api: Any) -> None:
    """This module's cluster instead of conftest's, stored before the `webhook` fixture starts
    (autouse fixtures of a scope come first) and loads it."""
    replace_objects(api, cluster())


async def mutate(webhook: Any, body: dict[str, Any]) -> list[Any]:
    """The JSON Patch `/mutate/pods` answers with; [] when the pod passes unchanged."""
    return await webhook.mutation("/mutate/pods", body)  # type: ignore[no-any-return]


def edited(
    obj: dict[str, Any],
    *,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    spec: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """`obj` after a kubectl edit: the changes, and a new resourceVersion (and generation when
    the spec changed), as the API server hands the new object to admission."""
    new = copy.deepcopy(obj)
    metadata = new["metadata"]
    metadata.setdefault("labels", {}).update(labels or {})
    metadata.setdefault("annotations", {}).update(annotations or {})
    if spec:
        new["spec"].update(spec)
        metadata["generation"] += 1
    metadata["resourceVersion"] = str(int(metadata["resourceVersion"]) + 1)
    return new


async def update(webhook: Any, old: dict[str, Any], **changes: Any) -> dict[str, Any]:
    return await webhook.review(admission_review("UPDATE", new=edited(old, **changes), old=old))


# 1. The product's own pods; the namespace fallback never picks a parent


async def test_a_new_operator_pod_is_allowed_and_not_gated(webhook):
    labels = {
        "app.kubernetes.io/component": "operator",
        "app.kubernetes.io/instance": "elastic-quota",
        "app.kubernetes.io/name": "elastic-quota",
    }
    sent = deployment_pod(
        "koordinator-system",
        "elastic-quota-operator",
        created=False,
        labels=labels,
        requests={"cpu": "100m", "memory": "256Mi"},
        service_account="elastic-quota-operator",
    )
    assert (
        await mutate(webhook, admission_review("CREATE", new=sent, **REPLICASET_CONTROLLER)) == []
    )
    named = named_by_server(sent)
    body = admission_review("CREATE", new=named, name="", **REPLICASET_CONTROLLER)
    answer = await webhook.review(body)
    assert answer["allowed"] is True, answer.get("status")


async def test_a_pod_in_the_namespace_of_a_parent_group_is_allowed(webhook):
    sent = statefulset_pod("physics", "notebook", requests={"cpu": "500m"}, node=None)
    answer = await webhook.review(admission_review("CREATE", new=sent))
    assert answer["allowed"] is True, answer.get("status")


# 2. Koordinator's default group (max MaxInt64/5) is not a limit


async def test_koordinators_default_group_does_not_gate_pods(webhook):
    sent = statefulset_pod("misc", "cache", requests={"cpu": "1"}, node=None)
    assert await mutate(webhook, admission_review("CREATE", new=sent)) == []


# 3. A partial shared-weight is filled from max, with a warning


async def test_a_partial_shared_weight_is_allowed_with_a_warning(webhook):
    vision = elastic_quota(
        "vision",
        "vision",
        min={"cpu": "10", "memory": "10Gi"},
        max={"cpu": "100", "memory": "100Gi"},
        annotations={P + "shared-weight": '{"cpu":"50"}'},
    )
    answer = await webhook.review(admission_review("CREATE", new=vision))
    assert answer["allowed"] is True, answer.get("status")
    warnings = answer.get("warnings", [])
    assert any("shared-weight" in w and "memory" in w for w in warnings), warnings


# 4. Finished pods do not block deleting a group


async def test_a_group_whose_pods_all_finished_can_be_deleted(webhook):
    nightly = elastic_quota("nightly", "nightly", max={"cpu": "4", "memory": "8Gi"})
    answer = await webhook.review(admission_review("DELETE", old=nightly))
    assert answer["allowed"] is True, answer.get("status")


async def test_deleting_a_group_is_denied_naming_only_the_pods_that_count(webhook):
    reports = elastic_quota("reports", "reports", max={"cpu": "4", "memory": "8Gi"})
    answer = await webhook.review(admission_review("DELETE", old=reports))
    assert answer["allowed"] is False
    message = answer["status"]["message"]
    assert f"reports/{RUNNING['metadata']['name']}" in message
    for finished in REPORTS_FINISHED:
        assert finished["metadata"]["name"] not in message


# 5. An UPDATE is judged on what it changes


async def test_edits_that_change_no_rule_input_are_allowed_naming_the_trees_problem(webhook):
    weight = json.dumps({"cpu": "40", "memory": "160Gi", "nvidia.com/gpu": "8"})
    for old, changes in (
        (ACCEL, {"annotations": {P + "shared-weight": weight}}),
        (ACCEL_CPU, {"labels": {P + "allow-lent-resource": "false"}}),
    ):
        answer = await update(webhook, old, **changes)
        assert answer["allowed"] is True, answer.get("status")
        warnings = answer.get("warnings", [])
        assert any("accel-cpu" in w and "differ" in w for w in warnings), warnings
    lowered = {"min": {**ACCEL["spec"]["min"], "cpu": "2"}}
    answer = await update(webhook, ACCEL, spec=lowered)
    assert answer["allowed"] is False
    assert "spec.min.cpu: 2 is below its children's min 4" in answer["status"]["message"]


async def test_a_new_deployment_pod_of_a_limited_group_is_gated(webhook):
    sent = deployment_pod("team-a", "batch", created=False, requests={"cpu": "500m"})
    patch = await mutate(webhook, admission_review("CREATE", new=sent, **REPLICASET_CONTROLLER))
    gate = {"name": P + "admission"}
    assert patch == [{"op": "add", "path": "/spec/schedulingGates", "value": [gate]}]
