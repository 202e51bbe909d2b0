"""The review of ElasticQuota creations, updates and deletions
(`eq_engine.decisions.verdicts.review_quota`) in the one default tree, on objects as a cluster holds
them: each case gives the decision, the denial's message (which object, which field, what was
expected) and the warnings. Tree ids: test_reviews_tree_ids.py; which operations list the group's
pods: test_reviews_pods.py. The
same decisions over HTTPS: tests/webhook/test_quota_admission_denials.py and
test_quota_admission_allowed.py."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests import realistic
from tests.engine.quota_cases import UPDATE, Admission, create, delete, reviewed, update
from tests.engine.quota_tree import (
    BUILTIN_NS,
    DEFAULT,
    IS_PARENT_LABEL,
    NAMESPACES,
    PARENT_LABEL,
    ROOT,
    SYSTEM,
    bound_pods,
    edited,
    existing,
    group,
    tree,
)
from tests.realistic import P

SOLO_PODS = "apps/batch-s59dq8n682-4lkwr, apps/batch-s59dq8n682-6z54w, apps/batch-s59dq8n682-b755b"
"""The first three of the five pods `bound_pods` labels into solo, sorted."""
FIRST_FOUR_SOLO_PODS = (
    "apps/batch-s59dq8n682-4lkwr, apps/batch-s59dq8n682-b755b, apps/batch-s59dq8n682-xnf5t"
)
"""The first three, sorted, of the four a lister returns before it stops."""
ACCEL = group("accel", is_parent=True, min={"cpu": "10"}, max={"cpu": "40", "memory": "160Gi"})
ACCEL_CPU = group("accel-cpu", "accel-cpu", parent="accel", min={"cpu": "4"}, max={"cpu": "20"})
"""Created while the webhook was down: its max lacks the parent's memory."""


MADE_PARENT = {"labels": {P + "is-parent": "true"}}
NO_LONGER_PARENT = {"labels": {P + "is-parent": None}}


def listing(*namespaces: str) -> dict[str, Any]:
    """The changes that make the `namespaces` annotation list `namespaces`."""
    return {"annotations": {P + "namespaces": json.dumps(list(namespaces))}}


QUOTA_ADMISSIONS = [
    # creations
    create("a child that fits", group("t", parent="dept-a", min={"cpu": "10"})),
    create("a top-level leaf", group("t", min={"cpu": "10"})),
    create("a parent on its own", group("t", is_parent=True)),
    create("the root, where it lives", realistic.koordinator_root_quota()),
    create(
        "a name another namespace has",
        group("ml", "other"),
        denied="ElasticQuota other/ml: metadata.name: an ElasticQuota named 'ml' already exists "
        "in namespace 'team-ml'; names are unique cluster-wide",
    ),
    create(
        "a built-in group outside its namespace",
        group(DEFAULT, "apps"),
        denied=f"ElasticQuota apps/{DEFAULT}: metadata.name: '{DEFAULT}' is a built-in group, "
        f"which lives in namespace '{BUILTIN_NS}'; ElasticQuota apps/{DEFAULT}: metadata.name: "
        f"an ElasticQuota named '{DEFAULT}' already exists in namespace '{BUILTIN_NS}'; names "
        "are unique cluster-wide",
    ),
    create(
        "every problem at once",
        group("t", parent="ghost", min={"cpu": "-1"}, namespaces=["shared-1"]),
        denied="ElasticQuota quotas/t: spec.min.cpu: -1 is negative; "
        f"ElasticQuota quotas/t: {NAMESPACES}: namespace 'shared-1' is already bound to "
        "'shared'; a namespace belongs to at most one group; "
        f"ElasticQuota quotas/t: {PARENT_LABEL}: parent 'ghost' does not exist",
    ),
    create(
        "a built-in parent",
        group("t", parent=DEFAULT),
        denied=f"ElasticQuota quotas/t: {PARENT_LABEL}: parent '{DEFAULT}' is a built-in group "
        "that cannot have children",
    ),
    create(
        "a max above the parent's: allowed, with a warning",
        group("wide", parent="dept-a", max={"cpu": "300", "memory": "200Gi"}),
        warnings=(
            "spec.max.cpu 300 is above parent dept-a's max 200: the group can never use more "
            "than its parent",
        ),
    ),
    create(
        "top-level mins above the cluster: allowed, with a warning",
        group("big", min={"cpu": "300"}, max={"cpu": "400", "memory": "1"}),
        warnings=(
            "the top-level groups' min cpu 460 exceeds the cluster's 200: their mins will be "
            "scaled down",
        ),
    ),
    create(
        "a denial, without the warnings",
        group("shy", parent="ghost", weight={"cpu": "0", "memory": "1Gi"}),
        denied=f"ElasticQuota quotas/shy: {PARENT_LABEL}: parent 'ghost' does not exist",
    ),
    # updates
    update("the operator's annotations", "ml", {"annotations": {P + "runtime": '{"cpu":"150"}'}}),
    update("an unrelated label", "solo", {"labels": {"team": "red"}}),
    update("a lower min", "ml", {"min": {"cpu": "40", "memory": "60Gi"}}),
    update("a move that fits", "web", {"labels": {P + "parent": "dept-b"}}),
    update(
        "a move under its own child",
        "dept-a",
        {"labels": {P + "parent": "ml"}},
        denied=f"ElasticQuota quotas/dept-a: {PARENT_LABEL}: parent 'ml' is below this group: "
        "a cycle",
    ),
    update(
        "a min raised past the parent's",
        "ml",
        {"min": {"cpu": "95", "memory": "60Gi"}},
        denied="ElasticQuota team-ml/ml: spec.min.cpu: 95 + siblings' 10 exceeds parent "
        "dept-a's min 100",
    ),
    update(
        "the same, forced",
        "ml",
        {"min": {"cpu": "95", "memory": "60Gi"}, "labels": {P + "allow-force-update": "true"}},
    ),
    update(
        "a parent's min lowered under its children's",
        "dept-a",
        {"min": {"cpu": "50", "memory": "100Gi"}},
        denied="ElasticQuota quotas/dept-a: spec.min.cpu: 50 is below its children's min 90",
    ),
    Admission(
        "the root changed",
        UPDATE,
        new=edited(ROOT, max={"cpu": "1"}),
        old=existing(ROOT),
        denied=f"ElasticQuota {BUILTIN_NS}/{ROOT}: metadata.name: the built-in group cannot be "
        "changed",
    ),
    Admission(
        "the system group changed",
        UPDATE,
        new=edited(SYSTEM, max={"cpu": "1"}),
        old=existing(SYSTEM),
        denied=f"ElasticQuota {BUILTIN_NS}/{SYSTEM}: metadata.name: the built-in group cannot be "
        "changed",
    ),
    update("the default group's min", DEFAULT, {"min": {"cpu": "5"}}),
    update(
        "the default group's min above its max",
        DEFAULT,
        {"min": {"cpu": "300"}, "max": {"cpu": "200", "memory": "200Gi"}},
        denied=f"ElasticQuota {BUILTIN_NS}/{DEFAULT}: spec.min.cpu: 300 exceeds spec.max.cpu 200",
    ),
    update(
        "the parent flag off with children",
        "dept-a",
        NO_LONGER_PARENT,
        denied=f"ElasticQuota quotas/dept-a: {IS_PARENT_LABEL}: cannot stop being a parent while "
        "it has child groups ml, web",
    ),
    update("the parent flag off without children", "empty", NO_LONGER_PARENT),
    update(
        "the parent flag on with labelled pods, the listing complete",
        "solo",
        MADE_PARENT,
        pods=bound_pods(),
        denied=f"ElasticQuota quotas/solo: {IS_PARENT_LABEL}: cannot become a parent while pods "
        f"are bound to it: {SOLO_PODS} and 2 more",
    ),
    update(
        "the parent flag on with labelled pods, the listing cut short",
        "solo",
        MADE_PARENT,
        pods=bound_pods()[:4],
        all_pods=False,
        denied=f"ElasticQuota quotas/solo: {IS_PARENT_LABEL}: cannot become a parent while pods "
        f"are bound to it: {FIRST_FOUR_SOLO_PODS} and more",
    ),
    update(
        "the parent flag on with a namespace's pods",
        "nlp",
        MADE_PARENT,
        pods=bound_pods(),
        denied=f"ElasticQuota nlp/nlp: {IS_PARENT_LABEL}: cannot become a parent while pods are "
        "bound to it: nlp/tagger-0",
    ),
    update(
        "the parent flag on when the namespace's pods have finished",
        "nlp",
        MADE_PARENT,
        pods=[realistic.statefulset_pod("nlp", "tagger", phase="Succeeded")],
    ),
    update(
        "a parent takes a namespace with pods",
        "dept-b",
        listing("dept-b-ns", "nlp"),
        pods=bound_pods(),
        denied=f"ElasticQuota quotas/dept-b: {NAMESPACES}: a parent group cannot take namespaces "
        "whose pods would be bound to it: nlp/tagger-0",
    ),
    update(
        "a parent takes a namespace whose pods are labelled into a leaf",
        "dept-b",
        listing("dept-b-ns", "team-ml"),
        pods=bound_pods(),
    ),
    update(
        "a leaf claims a namespace another group's annotation lists",
        "web",
        listing("dept-b-ns"),
        denied=f"ElasticQuota web/web: {NAMESPACES}: namespace 'dept-b-ns' is already bound to "
        "'dept-b'; a namespace belongs to at most one group",
    ),
    update(
        "a settings edit that breaks the group itself",
        "solo",
        {"annotations": {P + "shared-weight": '{"cpu": "-1"}'}},
        denied=f"ElasticQuota quotas/solo: metadata.annotations[{P}shared-weight]: cpu -1 is "
        "negative",
    ),
    Admission(
        "a settings edit in a tree that already has a problem: allowed, with a warning",
        UPDATE,
        new=edited(ACCEL_CPU, labels={P + "allow-lent-resource": "false"}),
        old=ACCEL_CPU,
        objects=[*tree(), ACCEL, ACCEL_CPU],
        warnings=(
            "the tree already has a problem: spec.max: resources {cpu} differ from parent "
            "accel's {cpu, memory}",
        ),
    ),
    # deletions
    delete(
        "the root",
        existing(ROOT),
        denied=f"ElasticQuota {BUILTIN_NS}/{ROOT}: metadata.name: a built-in group cannot be "
        "deleted",
    ),
    delete(
        "the default group",
        existing(DEFAULT),
        denied=f"ElasticQuota {BUILTIN_NS}/{DEFAULT}: metadata.name: a built-in group cannot be "
        "deleted",
    ),
    delete("a namesake of the default group elsewhere", group(DEFAULT, "apps")),
    delete(
        "a parent with children",
        existing("dept-a"),
        denied="ElasticQuota quotas/dept-a: metadata.name: cannot delete a group with child "
        "groups: ml, web",
    ),
    delete(
        "a group with labelled pods, the listing cut short",
        existing("solo"),
        pods=bound_pods()[:4],
        all_pods=False,
        denied="ElasticQuota quotas/solo: metadata.name: cannot delete a group with pods bound "
        f"to it: {FIRST_FOUR_SOLO_PODS} and more",
    ),
    delete(
        "a group with its namespace's pods",
        existing("nlp"),
        pods=bound_pods(),
        denied="ElasticQuota nlp/nlp: metadata.name: cannot delete a group with pods bound to "
        "it: nlp/tagger-0",
    ),
    delete("an empty parent", existing("empty")),
    delete("a group without pods", existing("shared"), pods=bound_pods()),
    delete("an unknown group", group("gone")),
]


@pytest.mark.parametrize("admission", QUOTA_ADMISSIONS, ids=[a.case for a in QUOTA_ADMISSIONS])
def test_an_elasticquota_operation(admission):
    assert reviewed(admission) == admission.expected
