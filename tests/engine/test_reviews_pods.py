"""The pods in the admission reviews (`eq_engine.decisions.verdicts`): which ElasticQuota operations
need the pods bound to the group and where those are looked for; and the review of a Pod itself, on
objects as a cluster holds them (the decision and the denial's message). The same decisions over
HTTPS: tests/webhook/test_pod_admission.py."""

from __future__ import annotations

from typing import Any

import pytest
from eq_engine.decisions.verdicts import (
    BoundPodQuery,
    bound_pod_query,
    needs_bound_pods,
    review_pod,
)

from tests import realistic
from tests.engine.quota_cases import CREATE, DELETE, UPDATE
from tests.engine.quota_tree import ROOT, catalog, edited, existing, group, pods, quota
from tests.realistic import P

NEEDS_PODS = [
    ("a deletion", DELETE, None, existing("nlp"), True),
    ("a new leaf", CREATE, group("t"), None, False),
    (
        "a new parent with namespaces",
        CREATE,
        group("t", is_parent=True, namespaces=["x"]),
        None,
        True,
    ),
    ("a new parent without", CREATE, group("t", is_parent=True), None, False),
    (
        "a leaf made a parent",
        UPDATE,
        edited("solo", labels={P + "is-parent": "true"}),
        existing("solo"),
        True,
    ),
    (
        "a parent given a namespace",
        UPDATE,
        edited("dept-b", annotations={P + "namespaces": '["dept-b-ns", "x"]'}),
        existing("dept-b"),
        True,
    ),
    (
        "a parent losing a namespace",
        UPDATE,
        edited("dept-b", annotations={P + "namespaces": "[]"}),
        existing("dept-b"),
        False,
    ),
    ("a leaf's min changed", UPDATE, edited("solo", min={"cpu": "1"}), existing("solo"), False),
]


@pytest.mark.parametrize(
    ("case", "operation", "new", "old", "needed"), NEEDS_PODS, ids=[c[0] for c in NEEDS_PODS]
)
def test_which_operations_need_the_groups_pods(case, operation, new, old, needed):
    parsed = [None if raw is None else quota(raw) for raw in (new, old)]
    assert needs_bound_pods(operation, *parsed) is needed


@pytest.mark.parametrize(
    ("name", "query"),
    [
        ("solo", BoundPodQuery("solo", ())),
        ("nlp", BoundPodQuery("nlp", ("nlp",))),
        ("ml", BoundPodQuery("ml", ("team-ml",))),
        ("dept-b", BoundPodQuery("dept-b", ("dept-b-ns",))),
        ("shared", BoundPodQuery("shared", ("shared-1",))),
    ],
)
def test_where_the_pods_bound_to_a_group_are_looked_for(name, query):
    assert bound_pod_query(quota(existing(name)), catalog()) == query


# ------------------------------------------------------------------------- pods


def db(namespace: str = "apps", *, quota_label: str | None = None, **options: Any) -> dict:
    """Pod `db-0` of a StatefulSet, pending (created, not scheduled yet); `quota_label`: the
    group its label names."""
    labels = {"app": "db", **options.pop("labels", {})}
    if quota_label is not None:
        labels[P + "name"] = quota_label
    options.setdefault("node", None)
    return realistic.statefulset_pod(namespace, "db", labels=labels, **options)


def preemptible(value: str | None) -> dict:
    return db(quota_label="solo", labels={} if value is None else {P + "preemptible": value})


IN_LEAVES = "is a parent group: pods belong in leaves"
POD_LABEL = f"metadata.labels[{P}name]"
PREEMPTIBLE = f"metadata.labels[{P}preemptible]"
POD_ADMISSIONS = [
    ("into a leaf by label", CREATE, db(quota_label="solo"), None, ""),
    ("into a leaf by namespace", CREATE, db("nlp"), None, ""),
    ("into no group", CREATE, db("anywhere"), None, ""),
    (
        "into a system namespace, whatever its label",
        CREATE,
        db("kube-system", quota_label="dept-a"),
        None,
        "",
    ),
    (
        "into a parent by label",
        CREATE,
        db(quota_label="dept-a"),
        None,
        f"Pod apps/db-0: {POD_LABEL}: 'dept-a' {IN_LEAVES}",
    ),
    (
        "into a parent by the seed documents' label",
        CREATE,
        db(labels={P + "quota-name": "empty"}),
        None,
        f"Pod apps/db-0: {POD_LABEL}: 'empty' {IN_LEAVES}",
    ),
    (
        "into the root",
        CREATE,
        db(quota_label=ROOT),
        None,
        f"Pod apps/db-0: {POD_LABEL}: '{ROOT}' {IN_LEAVES}",
    ),
    (
        "into a namespace a parent's annotation lists",
        CREATE,
        db("dept-b-ns"),
        None,
        f"Pod dept-b-ns/db-0: metadata.namespace: 'dept-b' {IN_LEAVES}",
    ),
    (
        "relabelled into a parent",
        UPDATE,
        db(quota_label="dept-a", node="worker-1"),
        db(quota_label="solo", node="worker-1"),
        f"Pod apps/db-0: {POD_LABEL}: 'dept-a' {IN_LEAVES}",
    ),
    (
        "relabelled into a parent while being deleted",
        UPDATE,
        db(quota_label="dept-a", node="worker-1", terminating=True),
        db(quota_label="solo", node="worker-1"),
        "",
    ),
    (
        "already in a parent's namespace, its finalizer removed",
        UPDATE,
        db("dept-b-ns", node="worker-1", terminating=True),
        db("dept-b-ns", node="worker-1"),
        "",
    ),
    ("preemptible unchanged", UPDATE, preemptible("false"), preemptible("false"), ""),
    (
        "preemptible removed",
        UPDATE,
        preemptible(None),
        preemptible("false"),
        f"Pod apps/db-0: {PREEMPTIBLE}: cannot change ('false' -> unset)",
    ),
    (
        "preemptible added",
        UPDATE,
        preemptible("false"),
        preemptible(None),
        f"Pod apps/db-0: {PREEMPTIBLE}: cannot change (unset -> 'false')",
    ),
    (
        "preemptible turned",
        UPDATE,
        preemptible("false"),
        preemptible("true"),
        f"Pod apps/db-0: {PREEMPTIBLE}: cannot change ('true' -> 'false')",
    ),
    (
        "relabelled into a parent and preemptible changed",
        UPDATE,
        db(quota_label="dept-a", labels={P + "preemptible": "false"}),
        db(quota_label="solo"),
        f"Pod apps/db-0: {POD_LABEL}: 'dept-a' {IN_LEAVES}; "
        f"Pod apps/db-0: {PREEMPTIBLE}: cannot change (unset -> 'false')",
    ),
]


@pytest.mark.parametrize(
    ("case", "operation", "new", "old", "denied"),
    POD_ADMISSIONS,
    ids=[c[0] for c in POD_ADMISSIONS],
)
def test_a_pod_operation(case, operation, new, old, denied):
    before = None if old is None else pods(old)[0]
    verdict = review_pod(operation, new=pods(new)[0], old=before, catalog=catalog())
    assert (verdict.allowed, verdict.message) == (not denied, denied)
    assert verdict.warnings == ()
