"""The ElasticQuota checks of a group on its own (`eq_engine.tree.checks.own_problems`: signs, min
within max, strict keys, the two parent labels) and of the namespaces it lists
(`namespace_problems`), on objects as a cluster holds them: each case gives the problems found,
every one naming the object, the field and the numbers. The same rules over HTTPS:
tests/webhook/test_quota_admission_denials.py."""

from __future__ import annotations

import pytest
from eq_engine.tree import checks

from tests.engine.quota_cases import problems
from tests.engine.quota_tree import NAMESPACES, PARENT_LABEL, catalog, existing, group, quota
from tests.realistic import P

STRICT = P + "max-strict-check-resource-keys"
WEIGHT = f"metadata.annotations[{P}shared-weight]"


OWN = [
    ("a valid leaf", group("t", min={"cpu": "10"}), []),
    (
        "a negative max",
        group("t", max={"cpu": "-1"}),
        ["ElasticQuota quotas/t: spec.max.cpu: -1 is negative"],
    ),
    (
        "a negative min",
        group("t", min={"memory": "-1Gi"}),
        ["ElasticQuota quotas/t: spec.min.memory: -1Gi is negative"],
    ),
    (
        "a negative shared weight",
        group("t", weight={"cpu": "-2"}),
        [f"ElasticQuota quotas/t: {WEIGHT}: cpu -2 is negative"],
    ),
    (
        "a min resource missing from max",
        group("t", min={"nvidia.com/gpu": "1"}),
        ["ElasticQuota quotas/t: spec.min.nvidia.com/gpu: the resource is not in spec.max"],
    ),
    (
        "a min above max",
        group("t", min={"cpu": "30"}, max={"cpu": "20", "memory": "1Gi"}),
        ["ElasticQuota quotas/t: spec.min.cpu: 30 exceeds spec.max.cpu 20"],
    ),
    (
        "a strict key below what is used",
        group("t", max={"cpu": "4", "memory": "1Gi"}, strict=["cpu"], used={"cpu": "6"}),
        [f"ElasticQuota quotas/t: spec.max.cpu: 4 is below status.used.cpu 6 ({STRICT})"],
    ),
    (
        "a strict key missing from max",
        group("t", max={"memory": "1Gi"}, strict=["cpu"], used={"cpu": "6"}),
        [
            f"ElasticQuota quotas/t: spec.max: has no cpu, but {STRICT} asks it to cover "
            "status.used.cpu 6"
        ],
    ),
    (
        "a strict key nothing uses yet",
        group("t", max={"memory": "1Gi"}, strict=["cpu"], used={"memory": "1Gi"}),
        [],
    ),
    (
        "two parent labels that disagree",
        group("t", parent="dept-a", labels={P + "parent-quota-name": "dept-b"}),
        [
            f"ElasticQuota quotas/t: {PARENT_LABEL}: 'dept-a' disagrees with "
            f"{P}parent-quota-name 'dept-b'; 'dept-a' is used"
        ],
    ),
    (
        "two parent labels that agree",
        group("t", parent="dept-a", labels={P + "parent-quota-name": "dept-a"}),
        [],
    ),
    (
        "every problem, in field order",
        group("t", min={"cpu": "-1", "memory": "1Gi"}, max={"cpu": "-2"}),
        [
            "ElasticQuota quotas/t: spec.max.cpu: -2 is negative",
            "ElasticQuota quotas/t: spec.min.cpu: -1 is negative",
            "ElasticQuota quotas/t: spec.min.cpu: -1 exceeds spec.max.cpu -2",
            "ElasticQuota quotas/t: spec.min.memory: the resource is not in spec.max",
        ],
    ),
]


@pytest.mark.parametrize(("case", "raw", "expected"), OWN, ids=[c[0] for c in OWN])
def test_a_group_on_its_own(case, raw, expected):
    assert problems(checks.own_problems(quota(raw))) == expected


NAMESPACE_CLAIMS = [
    ("a free namespace", group("t", namespaces=["free"]), []),
    (
        "a namespace another group's annotation lists",
        group("t", namespaces=["shared-1"]),
        [
            f"ElasticQuota quotas/t: {NAMESPACES}: namespace 'shared-1' is already bound to "
            "'shared'; a namespace belongs to at most one group"
        ],
    ),
    ("a namespace a group only is named like", group("t", namespaces=["nlp"]), []),
    ("the group's own namespaces again", existing("shared"), []),
]


@pytest.mark.parametrize(
    ("case", "raw", "expected"), NAMESPACE_CLAIMS, ids=[c[0] for c in NAMESPACE_CLAIMS]
)
def test_the_namespaces_a_group_lists(case, raw, expected):
    assert problems(checks.namespace_problems(quota(raw), catalog())) == expected
