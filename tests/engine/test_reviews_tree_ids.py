"""The tree-id rules in the review of ElasticQuota operations
(`eq_engine.decisions.verdicts.review_quota`, docs/webhook.md, Tree ids): the default tree with a
second one beside it (quota_tree.py's `pool`), and Koordinator's own cases of its webhook's tests.
Each case gives the decision, the denial's message and the warnings; then the tree id a new group
takes from its parent before it is judged (`inherited_tree_id`), as Koordinator's mutating
webhook fills it in. The same decisions over HTTPS: tests/webhook/test_tree_ids.py."""

from __future__ import annotations

from typing import Any

import pytest
from eq_engine.decisions import inherited_tree_id

from tests.engine.quota_cases import (
    DELETE,
    IN_ITS_PARENTS_TREE,
    STAYS,
    UPDATE,
    Admission,
    create,
    reviewed,
)
from tests.engine.quota_tree import (
    BUILTIN_NS,
    DEFAULT,
    TREE_LABEL,
    catalog,
    edited,
    existing,
    group,
    in_tree,
    pool,
    quota,
    tree,
)
from tests.realistic import P


def trees() -> list[dict[str, Any]]:
    """The tree and the pool's: two trees side by side."""
    return [*tree(), *pool()]


STRAY = group("stray", parent="a100", min={"cpu": "10"})
ANOTHER_TREE = create(
    "a child of another tree id than its parent's",
    group("t", parent="a100", labels=in_tree("v100")),
    objects=trees(),
    denied=f"ElasticQuota quotas/t: {TREE_LABEL}: tree id is 'v100', parent a100's is "
    f"'a100': {IN_ITS_PARENTS_TREE}",
)
"""Created while the webhook was down: under a100, without its tree id."""
TREE_ADMISSIONS = [
    create(
        "a child in its parent's tree",
        group("t", parent="a100", min={"cpu": "10"}, labels=in_tree("a100")),
        objects=trees(),
    ),
    create(
        "a child without its parent's tree id, judged as it came (unless defaulted first)",
        group("t", parent="a100", min={"cpu": "10"}),
        objects=trees(),
        denied=f"ElasticQuota quotas/t: {TREE_LABEL}: tree id is unset, parent a100's is 'a100': "
        + IN_ITS_PARENTS_TREE,
    ),
    ANOTHER_TREE,
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
    [*TREE_ADMISSIONS, *KOORDINATOR_TREE_ADMISSIONS],
    ids=[a.case for a in [*TREE_ADMISSIONS, *KOORDINATOR_TREE_ADMISSIONS]],
)
def test_an_elasticquota_operation(admission):
    assert reviewed(admission) == admission.expected


def defaulted(new: dict[str, Any], objects: list[dict[str, Any]]) -> dict[str, Any]:
    """`new` as the API server stores it after the mutating endpoint: with the tree id it
    inherits, if any, among its labels."""
    tree_id = inherited_tree_id(quota(new), catalog(*objects))
    if tree_id is None:
        return new
    labels = {**new["metadata"].get("labels", {}), TREE_LABEL_KEY: tree_id}
    return {**new, "metadata": {**new["metadata"], "labels": labels}}


TREE_LABEL_KEY = P + "tree-id"
PIPELINE = [
    # quota_topology_test.go at v1.8.0: the two cases its validator denies alone, and which its
    # mutating webhook (fillQuotaDefaultInformation) makes pass by filling the tree id in first.
    create(
        "Koordinator: self no tree id, under a parent of tree-1",
        koordinator("temp", parent="parent"),
        objects=[koordinator("parent", "tree-1")],
    ),
    create(
        "Koordinator: child has no tree id (sub-3 under temp2)",
        koordinator("sub-3", parent="temp2"),
        objects=[koordinator("temp2", "tree-1")],
    ),
    create(
        "a pool's group made without its tree id",
        group("t", parent="a100", min={"cpu": "10"}),
        objects=trees(),
    ),
    ANOTHER_TREE,  # keeps its own tree id, and is denied
    create(
        "a group of the default tree gets no tree id",
        group("t", parent="empty"),
    ),
]
INHERITED = [
    ("a pool's group", group("t", parent="a100"), trees(), "a100"),
    ("Koordinator's sub-3", koordinator("sub-3", parent="temp2"), PIPELINE[1].objects, "tree-1"),
    ("a group that names one", group("t", parent="a100", labels=in_tree("a100")), trees(), None),
    ("a top-level group", group("t"), trees(), None),
    ("a group of the default tree", group("t", parent="dept-a"), trees(), None),
    ("a group whose parent is not there", group("t", parent="nobody"), trees(), None),
    ("a group under a built-in group", group("t", parent="koordinator-root-quota"), trees(), None),
]


@pytest.mark.parametrize("admission", PIPELINE, ids=[a.case for a in PIPELINE])
def test_an_elasticquota_created_through_the_mutating_endpoint_first(admission):
    assert admission.new is not None
    through = Admission(
        admission.case,
        admission.operation,
        new=defaulted(admission.new, admission.objects),
        objects=admission.objects,
    )
    assert reviewed(through)[:2] == admission.expected[:2]


@pytest.mark.parametrize(
    ("new", "objects", "expected"),
    [case[1:] for case in INHERITED],
    ids=[case[0] for case in INHERITED],
)
def test_the_tree_id_a_new_group_takes_from_its_parent(new, objects, expected):
    assert inherited_tree_id(quota(new), catalog(*objects)) == expected
