"""The ElasticQuota checks of where a group sits in the tree (`eq_engine.tree.checks`): its parent
(there, a parent, not built-in, not below it; worded as the tree words it), its max resources
against the parent's, its min with its siblings' against the parent's, a parent's min against
its children's; on objects as a cluster holds them, each case giving the problems found, every
one naming the object, the field and the numbers. Tree ids: test_checks_tree_ids.py. The same
rules over HTTPS: tests/webhook/test_quota_admission_denials.py."""

from __future__ import annotations

import pytest
from eq_engine import EngineConfig
from eq_engine.tree import checks
from eq_engine.tree.topology import build_tree

from tests.engine.quota_cases import problems
from tests.engine.quota_tree import (
    DEFAULT,
    PARENT_LABEL,
    ROOT,
    SYSTEM,
    catalog,
    edited,
    existing,
    group,
    quota,
    tree,
)
from tests.realistic import P

BUILTIN_PARENT = "is a built-in group that cannot have children"
TOPOLOGY = [
    ("a new child that fits", group("t", parent="dept-a", min={"cpu": "10"}), None, []),
    ("a new top-level group", group("t", min={"cpu": "10"}), None, []),
    ("the root named", group("t", parent=ROOT), None, []),
    ("the root by its short name", group("t", parent="root"), None, []),
    ("an empty parent label", group("t", parent=""), None, []),
    (
        "a missing parent",
        group("t", parent="ghost"),
        None,
        [f"ElasticQuota quotas/t: {PARENT_LABEL}: parent 'ghost' does not exist"],
    ),
    (
        "the default group as parent",
        group("t", parent=DEFAULT),
        None,
        [f"ElasticQuota quotas/t: {PARENT_LABEL}: parent '{DEFAULT}' {BUILTIN_PARENT}"],
    ),
    (
        "the system group as parent",
        group("t", parent=SYSTEM),
        None,
        [f"ElasticQuota quotas/t: {PARENT_LABEL}: parent '{SYSTEM}' {BUILTIN_PARENT}"],
    ),
    (
        "its own parent",
        group("t", parent="t", is_parent=True),
        None,
        [f"ElasticQuota quotas/t: {PARENT_LABEL}: a group cannot be its own parent"],
    ),
    (
        "a leaf as parent",
        group("t", parent="solo"),
        None,
        [
            f"ElasticQuota quotas/t: {PARENT_LABEL}: parent 'solo' is not a parent group "
            f'({P}is-parent is not "true")'
        ],
    ),
    (
        "max resources other than the parent's",
        group("t", parent="dept-a", max={"cpu": "1"}),
        None,
        [
            "ElasticQuota quotas/t: spec.max: resources {cpu} differ from parent dept-a's "
            "{cpu, memory}"
        ],
    ),
    (
        "min resources beyond the parent's min",
        group("t", parent="dept-b", min={"memory": "1"}),
        None,
        [
            "ElasticQuota quotas/t: spec.min: resources {memory} are not in parent dept-b's min",
            "ElasticQuota quotas/t: spec.min.memory: 1 + siblings' 0 exceeds parent dept-b's min 0",
        ],
    ),
    (
        "a min the siblings leave no room for",
        group("t", parent="dept-a", min={"cpu": "20"}),
        None,
        ["ElasticQuota quotas/t: spec.min.cpu: 20 + siblings' 90 exceeds parent dept-a's min 100"],
    ),
    (
        "a min the siblings leave no room for, forced",
        group("t", parent="dept-a", min={"cpu": "20"}, labels={P + "allow-force-update": "true"}),
        None,
        [],
    ),
    (
        "a move under its own child",
        edited("dept-a", labels={P + "parent": "ml"}),
        existing("dept-a"),
        [f"ElasticQuota quotas/dept-a: {PARENT_LABEL}: parent 'ml' is below this group: a cycle"],
    ),
    (
        "a min raised past the parent's",
        edited("ml", min={"cpu": "95", "memory": "60Gi"}),
        existing("ml"),
        [
            "ElasticQuota team-ml/ml: spec.min.cpu: 95 + siblings' 10 exceeds parent dept-a's "
            "min 100"
        ],
    ),
    ("a min lowered", edited("ml", min={"cpu": "40", "memory": "60Gi"}), existing("ml"), []),
    (
        "a parent's min lowered under its children's",
        edited("dept-a", min={"cpu": "50", "memory": "100Gi"}),
        existing("dept-a"),
        ["ElasticQuota quotas/dept-a: spec.min.cpu: 50 is below its children's min 90"],
    ),
    (
        "a parent's min raised",
        edited("dept-a", min={"cpu": "150", "memory": "100Gi"}),
        existing("dept-a"),
        [],
    ),
    (
        "a parent's max resource its children keep",
        edited("dept-a", max={"cpu": "200"}),
        existing("dept-a"),
        [
            "ElasticQuota quotas/dept-a: spec.max: child ml's resources {cpu, memory} differ "
            "from parent dept-a's {cpu}",
            "ElasticQuota quotas/dept-a: spec.max: child web's resources {cpu, memory} differ "
            "from parent dept-a's {cpu}",
        ],
    ),
    (
        "a move where neither the min resources nor the mins fit",
        edited("ml", labels={P + "parent": "dept-b"}),
        existing("ml"),
        [
            "ElasticQuota team-ml/ml: spec.min: resources {memory} are not in parent dept-b's min",
            "ElasticQuota team-ml/ml: spec.min.cpu: 80 + siblings' 40 exceeds parent dept-b's "
            "min 50",
            "ElasticQuota team-ml/ml: spec.min.memory: 60Gi + siblings' 0 exceeds parent "
            "dept-b's min 0",
        ],
    ),
    ("a move that fits", edited("web", labels={P + "parent": "dept-b"}), existing("web"), []),
]


@pytest.mark.parametrize(("case", "new", "old", "expected"), TOPOLOGY, ids=[c[0] for c in TOPOLOGY])
def test_a_group_where_it_sits_in_the_tree(case, new, old, expected):
    before = None if old is None else quota(old)
    assert problems(checks.topology_problems(quota(new), before, catalog())) == expected


def test_the_tree_and_the_checks_word_a_missing_parent_alike():
    """One wording for a broken parent link: the tree adds only what it did about it."""
    orphan = group("t", parent="ghost")
    denied = problems(checks.parent_link_problems(quota(orphan), catalog()))
    built = build_tree([quota(raw) for raw in [*tree(), orphan]], EngineConfig())
    assert problems(built.problems) == [f"{denied[0]}; the group is placed under the root"]


CHILDREN_MIN = [
    (
        "children above the parent's min",
        group("p", is_parent=True, min={"cpu": "50", "memory": "60Gi"}),
        None,
        ["ElasticQuota quotas/p: spec.min.cpu: 50 is below its children's min 90"],
    ),
    (
        "a resource only the children's min names",
        group("p", is_parent=True, min={"cpu": "90"}),
        None,
        ["ElasticQuota quotas/p: spec.min.memory: 0 is below its children's min 60Gi"],
    ),
    (
        "the parent's min raised, still short",
        group("p", is_parent=True, min={"cpu": "60", "memory": "60Gi"}),
        group("p", is_parent=True, min={"cpu": "50", "memory": "60Gi"}),
        [],
    ),
    (
        "the parent's min lowered, now short",
        group("p", is_parent=True, min={"cpu": "80", "memory": "60Gi"}),
        group("p", is_parent=True, min={"cpu": "100", "memory": "60Gi"}),
        ["ElasticQuota quotas/p: spec.min.cpu: 80 is below its children's min 90"],
    ),
    (
        "forced",
        group("p", is_parent=True, labels={P + "allow-force-update": "true"}),
        None,
        [],
    ),
]


@pytest.mark.parametrize(
    ("case", "parent", "old", "expected"), CHILDREN_MIN, ids=[c[0] for c in CHILDREN_MIN]
)
def test_the_children_min_sum(case, parent, old, expected):
    children = [quota(existing("ml")), quota(existing("web"))]  # cpu 80 + 10, memory 60Gi
    before = None if old is None else quota(old)
    assert problems(checks.children_min_problems(quota(parent), children, old=before)) == expected
