"""ElasticQuota admissions over HTTPS that are allowed: the valid operations (creations,
updates, deletions) pass without a status, and settings that are legal but risky pass with
their warning. The denied counterparts: test_quota_admission_denials.py."""

from __future__ import annotations

import json

import pytest

from tests.manifests import P, quota
from tests.webhook.quota_reviews import (
    BUILTIN_NS,
    DEFAULT,
    RES,
    ROOT,
    create,
    delete,
    existing,
    update,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")

ALLOWED = [
    ("a child that fits", create(quota("t", parent="dept-a", min={"cpu": 10}, max=RES))),
    ("a top-level leaf", create(quota("t", min={"cpu": 10}, max=RES))),
    ("a parent on its own", create(quota("t", is_parent=True, max=RES))),
    ("a free namespace", create(quota("t", max=RES, namespaces=["free"]))),
    ("the root, where it lives", create(quota(ROOT, namespace=BUILTIN_NS))),
    (
        "the operator's annotations and status",
        update("ml", annotations={P + "runtime": json.dumps({"cpu": "150"})}),
    ),
    ("an unrelated label", update("solo", labels={"team": "red"})),
    ("a lower min", update("ml", min={"cpu": 40, "memory": "60Gi"})),
    ("a higher parent min", update("dept-a", min={"cpu": 150, "memory": "100Gi"})),
    ("a move that fits", update("web", labels={P + "parent": "dept-b"})),
    ("a parent flag on without pods", update("shared", labels={P + "is-parent": "true"})),
    ("a parent flag off without children", update("empty", labels={P + "is-parent": None})),
    (
        "forced min",
        update("ml", min={"cpu": 95, "memory": "60Gi"}, labels={P + "allow-force-update": "true"}),
    ),
    ("the default group's limits", update(DEFAULT, min={"cpu": 5})),
    ("an empty group deleted", delete(existing("empty"))),
    ("a group deleted without pods", delete(existing("shared"))),
    ("an unknown group deleted", delete(quota("gone", max=RES))),
    ("an unreadable stored object deleted", delete(quota("broken", min={"cpu": "lots"}))),
]


@pytest.mark.parametrize(("name", "body"), ALLOWED, ids=[c[0] for c in ALLOWED])
async def test_valid_quota_operations_are_allowed(webhook, name, body):
    answer = await webhook.review(body)
    assert answer["allowed"] is True, answer.get("status")
    assert "status" not in answer


@pytest.mark.parametrize(
    ("body", "warning"),
    [
        (
            create(quota("big", min={"cpu": 300}, max={"cpu": 400, "memory": 1})),
            "ElasticQuota quotas/big: the top-level groups' min cpu 460 exceeds the cluster's 200: "
            "their mins will be scaled down",
        ),
        (
            create(quota("wide", parent="dept-a", max={"cpu": 300, "memory": "200Gi"})),
            "ElasticQuota quotas/wide: spec.max.cpu 300 is above parent dept-a's max 200: "
            "the group can never use more than its parent",
        ),
        (
            create(quota("shy", max=RES, weight={"cpu": 0, "memory": "1Gi"})),
            "ElasticQuota quotas/shy: shared weight of cpu is 0: the group never borrows cpu",
        ),
    ],
)
async def test_risky_but_legal_settings_pass_with_a_warning(webhook, body, warning):
    answer = await webhook.review(body)
    assert answer["allowed"] is True
    assert warning in answer["warnings"]
