"""The admission reviews (`eq_engine.reviews`) on objects as a cluster holds them: each case
gives the decision, the denial's message (which object, which field, what was expected) and
the warnings. The same decisions over HTTPS: tests/webhook/test_quota_admission.py and
test_pod_admission.py."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest
from eq_engine.reviews import (
    BoundPodQuery,
    Operation,
    bound_pod_query,
    needs_bound_pods,
    review_pod,
    review_quota,
)

from tests import realistic
from tests.engine.quota_tree import (
    BUILTIN_NS,
    DEFAULT,
    IS_PARENT_LABEL,
    NAMESPACES,
    PARENT_LABEL,
    ROOT,
    SYSTEM,
    TREE_LABEL,
    bound_pods,
    catalog,
    edited,
    existing,
    group,
    in_tree,
    pods,
    pool,
    quota,
    tree,
)
from tests.realistic import P

CREATE, UPDATE, DELETE = Operation.CREATE, Operation.UPDATE, Operation.DELETE
CAPACITY = {"cpu": 200_000, "memory": 400 * 2**30}  # 200 cores in millicores, 400Gi
SOLO_PODS = "apps/batch-s59dq8n682-4lkwr, apps/batch-s59dq8n682-6z54w, apps/batch-s59dq8n682-b755b"
"""The first three of the five pods `bound_pods` labels into solo, sorted."""
FIRST_FOUR_SOLO_PODS = (
    "apps/batch-s59dq8n682-4lkwr, apps/batch-s59dq8n682-b755b, apps/batch-s59dq8n682-xnf5t"
)
"""The first three, sorted, of the four a lister returns before it stops."""
ACCEL = group("accel", is_parent=True, min={"cpu": "10"}, max={"cpu": "40", "memory": "160Gi"})
ACCEL_CPU = group("accel-cpu", "accel-cpu", parent="accel", min={"cpu": "4"}, max={"cpu": "20"})
"""Created while the webhook was down: its max lacks the parent's memory."""


@dataclass(frozen=True)
class Admission:
    """One ElasticQuota operation against the tree (or `objects`) and what the review says:
    `denied`, the verdict's message ("" when allowed), and the warnings."""

    case: str
    operation: Operation
    new: dict[str, Any] | None = None
    old: dict[str, Any] | None = None
    denied: str = ""
    warnings: tuple[str, ...] = ()
    pods: list[dict[str, Any]] = field(default_factory=list)
    all_pods: bool = True
    objects: list[dict[str, Any]] = field(default_factory=tree)


def create(case: str, new: dict[str, Any], **outcome: Any) -> Admission:
    return Admission(case, CREATE, new=new, **outcome)


def update(case: str, name: str, changes: dict[str, Any], **outcome: Any) -> Admission:
    """An UPDATE of the tree's object `name` with `edited(name, **changes)`."""
    return Admission(case, UPDATE, new=edited(name, **changes), old=existing(name), **outcome)


def delete(case: str, old: dict[str, Any], **outcome: Any) -> Admission:
    return Admission(case, DELETE, old=old, **outcome)


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


def trees() -> list[dict[str, Any]]:
    """The tree and the pool's: two trees side by side."""
    return [*tree(), *pool()]


STRAY = group("stray", parent="a100", min={"cpu": "10"})
"""Created while the webhook was down: under a100, without its tree id."""
IN_ITS_PARENTS_TREE = "a group is in its parent's tree"
STAYS = "a group stays in the tree it was made in"
TREE_ADMISSIONS = [
    create(
        "a child in its parent's tree",
        group("t", parent="a100", min={"cpu": "10"}, labels=in_tree("a100")),
        objects=trees(),
    ),
    create(
        "a child without its parent's tree id (not filled in: docs/webhook.md)",
        group("t", parent="a100", min={"cpu": "10"}),
        objects=trees(),
        denied=f"ElasticQuota quotas/t: {TREE_LABEL}: tree id is unset, parent a100's is 'a100': "
        + IN_ITS_PARENTS_TREE,
    ),
    create(
        "a child of another tree id than its parent's",
        group("t", parent="a100", labels=in_tree("v100")),
        objects=trees(),
        denied=f"ElasticQuota quotas/t: {TREE_LABEL}: tree id is 'v100', parent a100's is "
        f"'a100': {IN_ITS_PARENTS_TREE}",
    ),
    create(
        "a child with a tree id under a parent of the default tree",
        group("t", parent="dept-a", labels=in_tree("a100")),
        objects=trees(),
        denied=f"ElasticQuota quotas/t: {TREE_LABEL}: tree id is 'a100', parent dept-a's is "
        f"unset: {IN_ITS_PARENTS_TREE}",
    ),
    create(
        "a child of the root with a tree id", group("t", labels=in_tree("v100")), objects=trees()
    ),
    Admission(
        "a tree id added",
        UPDATE,
        new=edited("solo", labels={P + "tree-id": "a100"}),
        old=existing("solo"),
        objects=trees(),
        denied=f"ElasticQuota quotas/solo: {TREE_LABEL}: cannot change (unset -> 'a100'): {STAYS}",
    ),
    Admission(
        "a tree id changed",
        UPDATE,
        new=edited("vision", labels={P + "tree-id": "v100"}),
        old=existing("vision"),
        objects=trees(),
        denied=f"ElasticQuota vision/vision: {TREE_LABEL}: cannot change ('a100' -> 'v100'): "
        f"{STAYS}; ElasticQuota vision/vision: {TREE_LABEL}: tree id is 'v100', parent a100's "
        f"is 'a100': {IN_ITS_PARENTS_TREE}",
    ),
    Admission(
        "a tree id removed from a tree's root",
        UPDATE,
        new=edited("a100", labels={P + "tree-id": None}),
        old=existing("a100"),
        objects=trees(),
        denied=f"ElasticQuota quotas/a100: {TREE_LABEL}: cannot change ('a100' -> unset): "
        f"{STAYS}; ElasticQuota quotas/a100: {TREE_LABEL}: child speech's tree id is 'a100', "
        f"parent a100's is unset: {IN_ITS_PARENTS_TREE}; ElasticQuota quotas/a100: "
        f"{TREE_LABEL}: child vision's tree id is 'a100', parent a100's is unset: "
        + IN_ITS_PARENTS_TREE,
    ),
    Admission(
        "a tree id changed on the default group",
        UPDATE,
        new=edited(DEFAULT, labels={P + "tree-id": "a100"}),
        old=existing(DEFAULT),
        objects=trees(),
        denied=f"ElasticQuota {BUILTIN_NS}/{DEFAULT}: {TREE_LABEL}: cannot change (unset -> "
        f"'a100'): {STAYS}",
    ),
    Admission(
        "a move into another tree",
        UPDATE,
        new=edited("web", labels={P + "parent": "a100"}),
        old=existing("web"),
        objects=trees(),
        denied=f"ElasticQuota web/web: {TREE_LABEL}: tree id is unset, parent a100's is 'a100': "
        + IN_ITS_PARENTS_TREE,
    ),
    Admission(
        "a move within a tree",
        UPDATE,
        new=edited("vision", labels={P + "parent": "v"}),
        old=existing("vision"),
        objects=[
            *trees(),
            group("v", parent="a100", is_parent=True, min={"cpu": "40"}, labels=in_tree("a100")),
        ],
    ),
    Admission(
        "a min raised past the parent's, within a tree",
        UPDATE,
        new=edited("vision", min={"cpu": "90"}),
        old=existing("vision"),
        objects=trees(),
        denied="ElasticQuota vision/vision: spec.min.cpu: 90 + siblings' 20 exceeds parent "
        "a100's min 100",
    ),
    Admission(
        "the operator's annotations on a tree's group",
        UPDATE,
        new=edited("vision", annotations={P + "runtime": '{"cpu":"150"}'}),
        old=existing("vision"),
        objects=trees(),
    ),
    Admission(
        "a settings edit of a parent with a child of another tree: allowed, with a warning",
        UPDATE,
        new=edited("a100", labels={P + "allow-lent-resource": "false"}),
        old=existing("a100"),
        objects=[*trees(), STRAY],
        warnings=(
            f"the tree already has a problem: {TREE_LABEL}: child stray's tree id is unset, "
            f"parent a100's is 'a100': {IN_ITS_PARENTS_TREE}",
        ),
    ),
    Admission(
        "a min change of a parent with a child of another tree",
        UPDATE,
        new=edited("a100", min={"cpu": "120", "memory": "100Gi"}),
        old=existing("a100"),
        objects=[*trees(), STRAY],
        denied=f"ElasticQuota quotas/a100: {TREE_LABEL}: child stray's tree id is unset, parent "
        f"a100's is 'a100': {IN_ITS_PARENTS_TREE}",
    ),
    Admission(
        "a tree's root deleted with its groups",
        DELETE,
        old=existing("a100"),
        objects=trees(),
        denied="ElasticQuota quotas/a100: metadata.name: cannot delete a group with child "
        "groups: speech, vision",
    ),
]


def koordinator(name: str, tree_id: str = "", *, parent: str | None = None) -> dict[str, Any]:
    """An object of Koordinator's webhook tests: `{"metadata":{"name":...}}` and its tree id
    (none: ""), as the API server stores it (in namespace quotas, max cpu 120 memory 1Mi)."""
    return group(
        name,
        parent=parent,
        is_parent=parent is None,
        max={"cpu": "120", "memory": "1Mi"},
        labels=in_tree(tree_id) if tree_id else None,
    )


KOORDINATOR_TREE_ADMISSIONS = [
    # TestElasticQuotaValidatingHandler_Handle, koordinator-sh/koordinator a7a1b76,
    # pkg/webhook/elasticquota/validating/validating_handler_test.go
    Admission(
        "Koordinator: a tree id added",
        UPDATE,
        new=koordinator("quota1", "tree-1"),
        old=koordinator("quota1"),
        objects=[koordinator("quota1")],
        denied=f"ElasticQuota quotas/quota1: {TREE_LABEL}: cannot change (unset -> 'tree-1'): "
        + STAYS,
    ),
    create(
        "Koordinator: created with a tree id",
        koordinator("quota2", "tree-2"),
        objects=[koordinator("quota1")],
    ),
    Admission(
        "Koordinator: a tree id changed",
        UPDATE,
        new=koordinator("quota2", "tree-1"),
        old=koordinator("quota2", "tree-2"),
        objects=[koordinator("quota2", "tree-2")],
        denied=f"ElasticQuota quotas/quota2: {TREE_LABEL}: cannot change ('tree-2' -> 'tree-1'): "
        + STAYS,
    ),
    Admission(
        "Koordinator: a tree id removed",
        UPDATE,
        new=koordinator("quota2"),
        old=koordinator("quota2", "tree-2"),
        objects=[koordinator("quota2", "tree-2")],
        denied=f"ElasticQuota quotas/quota2: {TREE_LABEL}: cannot change ('tree-2' -> unset): "
        + STAYS,
    ),
    # TestQuotaTopology_ValidAddQuota and _ValidUpdateQuota, quota_topology_test.go
    create("Koordinator: temp2 with a tree id", koordinator("temp2", "tree-1")),
    create(
        "Koordinator: sub-3 without its parent's tree id",
        koordinator("sub-3", parent="temp2"),
        objects=[koordinator("temp2", "tree-1")],
        denied=f"ElasticQuota quotas/sub-3: {TREE_LABEL}: tree id is unset, parent temp2's is "
        f"'tree-1': {IN_ITS_PARENTS_TREE}",
    ),
    Admission(
        "Koordinator: sub-1 given a tree id",
        UPDATE,
        new=koordinator("sub-1", "tree-1", parent="temp"),
        old=koordinator("sub-1", parent="temp"),
        objects=[koordinator("temp"), koordinator("sub-1", parent="temp")],
        denied=f"ElasticQuota quotas/sub-1: {TREE_LABEL}: cannot change (unset -> 'tree-1'): "
        f"{STAYS}; ElasticQuota quotas/sub-1: {TREE_LABEL}: tree id is 'tree-1', parent temp's "
        f"is unset: {IN_ITS_PARENTS_TREE}",
    ),
]


@pytest.mark.parametrize(
    "admission",
    [*QUOTA_ADMISSIONS, *TREE_ADMISSIONS, *KOORDINATOR_TREE_ADMISSIONS],
    ids=[a.case for a in [*QUOTA_ADMISSIONS, *TREE_ADMISSIONS, *KOORDINATOR_TREE_ADMISSIONS]],
)
def test_an_elasticquota_operation(admission):
    verdict = review_quota(
        admission.operation,
        new=None if admission.new is None else quota(admission.new),
        old=None if admission.old is None else quota(admission.old),
        catalog=catalog(*admission.objects),
        capacity=CAPACITY,
        pods=pods(*admission.pods),
        all_pods=admission.all_pods,
    )
    assert (verdict.allowed, verdict.message) == (not admission.denied, admission.denied)
    assert verdict.warnings == admission.warnings


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
