"""The ElasticQuota checks (`eq_engine.checks`) on objects as a cluster holds them: each case
gives the problems found, every one naming the object, the field and the numbers. The same
rules over HTTPS: tests/webhook/test_quota_admission.py."""

from __future__ import annotations

from typing import Any

import pytest
from eq_engine import EngineConfig, checks
from eq_engine.tree import build_tree

from tests.engine.quota_tree import (
    DEFAULT,
    NAMESPACES,
    PARENT_LABEL,
    ROOT,
    SYSTEM,
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

STRICT = P + "max-strict-check-resource-keys"
WEIGHT = f"metadata.annotations[{P}shared-weight]"


def problems(found: Any) -> list[str]:
    return [str(problem) for problem in found]


# ------------------------------------------------------------------------- the group itself

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


# ------------------------------------------------------------------------- the tree around it

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


IN_ITS_PARENTS_TREE = "a group is in its parent's tree"
TREE_IDS = [
    (
        "a new child in its parent's tree",
        group("t", parent="a100", min={"cpu": "10"}, labels=in_tree("a100")),
        None,
        [],
    ),
    (
        "a new child without its parent's tree id",
        group("t", parent="a100", min={"cpu": "90"}),
        None,
        [  # not also the siblings' min: the rules apply within a tree
            f"ElasticQuota quotas/t: {TREE_LABEL}: tree id is unset, parent a100's is 'a100': "
            + IN_ITS_PARENTS_TREE
        ],
    ),
    (
        "a new child of another tree id than its parent's",
        group("t", parent="a100", labels=in_tree("v100")),
        None,
        [
            f"ElasticQuota quotas/t: {TREE_LABEL}: tree id is 'v100', parent a100's is 'a100': "
            + IN_ITS_PARENTS_TREE
        ],
    ),
    (
        "a new child with a tree id, under a parent of the default tree",
        group("t", parent="dept-a", labels=in_tree("a100")),
        None,
        [
            f"ElasticQuota quotas/t: {TREE_LABEL}: tree id is 'a100', parent dept-a's is unset: "
            + IN_ITS_PARENTS_TREE
        ],
    ),
    ("a child of the root with a tree id", group("t", labels=in_tree("v100")), None, []),
    (
        "a tree's new root",
        group("v100", is_parent=True, labels=in_tree("v100", **{P + "is-root": "true"})),
        None,
        [],
    ),
    (
        "a move into another tree",
        edited("web", labels={P + "parent": "a100"}),
        existing("web"),
        [
            f"ElasticQuota web/web: {TREE_LABEL}: tree id is unset, parent a100's is 'a100': "
            + IN_ITS_PARENTS_TREE
        ],
    ),
    (
        "a move into another tree, the tree id with it (the review's to deny)",
        edited("web", labels={P + "parent": "a100", P + "tree-id": "a100"}),
        existing("web"),
        [],
    ),
    (
        "a parent whose tree id no longer is its children's",
        edited("a100", labels={P + "tree-id": None}),
        existing("a100"),
        [
            f"ElasticQuota quotas/a100: {TREE_LABEL}: child speech's tree id is 'a100', parent "
            f"a100's is unset: {IN_ITS_PARENTS_TREE}",
            f"ElasticQuota quotas/a100: {TREE_LABEL}: child vision's tree id is 'a100', parent "
            f"a100's is unset: {IN_ITS_PARENTS_TREE}",
        ],
    ),
]


@pytest.mark.parametrize(("case", "new", "old", "expected"), TREE_IDS, ids=[c[0] for c in TREE_IDS])
def test_a_group_in_its_parents_tree(case, new, old, expected):
    before = None if old is None else quota(old)
    found = checks.topology_problems(quota(new), before, catalog(*tree(), *pool()))
    assert problems(found) == expected


def koordinator_tree(dept: str, team: str, crew: str) -> list[dict[str, Any]]:
    """Koordinator's checkTreeID fixture, with these tree ids ("": none): dept (top-level),
    team under dept, crew under team, each min and max cpu 10 memory 20."""
    res = {"cpu": "10", "memory": "20"}

    def labels(tree_id: str) -> dict[str, str]:
        return in_tree(tree_id) if tree_id else {}

    return [
        group("dept", is_parent=True, min=res, max=res, labels=labels(dept)),
        group("team", parent="dept", is_parent=True, min=res, max=res, labels=labels(team)),
        group("crew", parent="team", min=res, max=res, labels=labels(crew)),
    ]


KOORDINATOR_TREE_IDS = [
    # TestQuotaTopology_checkTreeID, koordinator-sh/koordinator a7a1b76,
    # pkg/webhook/elasticquota/quota_topology_test.go: team checked, on its creation
    ("no tree id anywhere", ("", "", ""), []),
    ("one tree id everywhere", ("tree-1", "tree-1", "tree-1"), []),
    (
        "the parent without",
        ("", "tree-1", "tree-1"),
        [f"tree id is 'tree-1', parent dept's is unset: {IN_ITS_PARENTS_TREE}"],
    ),
    (
        "the group itself without",
        ("tree-1", "", "tree-1"),
        [
            f"tree id is unset, parent dept's is 'tree-1': {IN_ITS_PARENTS_TREE}",
            f"child crew's tree id is 'tree-1', parent team's is unset: {IN_ITS_PARENTS_TREE}",
        ],
    ),
    (
        "the child without",
        ("tree-1", "tree-1", ""),
        [f"child crew's tree id is unset, parent team's is 'tree-1': {IN_ITS_PARENTS_TREE}"],
    ),
]


@pytest.mark.parametrize(
    ("case", "tree_ids", "expected"), KOORDINATOR_TREE_IDS, ids=[c[0] for c in KOORDINATOR_TREE_IDS]
)
def test_koordinators_tree_id_cases(case, tree_ids, expected):
    objects = koordinator_tree(*tree_ids)
    team = quota(objects[1])
    found = checks.topology_problems(team, None, catalog(*objects))
    assert [p.message for p in found] == expected
    assert {(p.ref, p.field) for p in found} <= {("quotas/team", TREE_LABEL)}


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


# ------------------------------------------------------------------------- warnings

WARNINGS = [
    ("an ordinary group", group("t", min={"cpu": "10"}), []),
    (
        "a max above the parent's",
        group("wide", parent="dept-a", max={"cpu": "300", "memory": "200Gi"}),
        [
            "spec.max.cpu 300 is above parent dept-a's max 200: the group can never use more "
            "than its parent"
        ],
    ),
    (
        "a zero shared weight",
        group("shy", weight={"cpu": "0", "memory": "1Gi"}),
        ["shared weight of cpu is 0: the group never borrows cpu"],
    ),
    (
        "a shared weight without every resource of max",
        group("half", weight={"cpu": "1"}),
        [f"{P}shared-weight has no {{memory}}: their max is used as their weight"],
    ),
    (
        "top-level mins above the cluster",
        group("big", min={"cpu": "300"}, max={"cpu": "400", "memory": "1"}),
        [
            "the top-level groups' min cpu 460 exceeds the cluster's 200: their mins will be "
            "scaled down"
        ],
    ),
]


@pytest.mark.parametrize(("case", "raw", "expected"), WARNINGS, ids=[c[0] for c in WARNINGS])
def test_legal_settings_that_do_not_do_what_they_seem_to(case, raw, expected):
    capacity = {"cpu": 200_000, "memory": 400 * 2**30}  # 200 cores, in millicores; 400Gi
    assert list(checks.quota_warnings(quota(raw), catalog(), capacity)) == expected


TOP_LEVEL_PER_TREE = [
    # the default tree's top-level mins are cpu 160, the a100 tree's 100
    ("a default-tree group the a100 tree would not leave room for", "", "30", []),
    (
        "a default-tree group above the cluster with its tree",
        "",
        "50",
        ["the top-level groups' min cpu 210 exceeds the cluster's 200"],
    ),
    (
        "a top-level group of the a100 tree",
        "a100",
        "150",
        ["the top-level groups' min cpu 250 in tree 'a100' exceeds the cluster's 200"],
    ),
    ("a top-level group of a tree of its own", "v100", "150", []),
]


@pytest.mark.parametrize(
    ("case", "tree_id", "cpu", "expected"),
    TOP_LEVEL_PER_TREE,
    ids=[c[0] for c in TOP_LEVEL_PER_TREE],
)
def test_the_top_level_mins_are_summed_per_tree(case, tree_id, cpu, expected):
    """Another tree's groups draw on another node pool: they are not summed with the group's."""
    capacity = {"cpu": 200_000, "memory": 400 * 2**30}
    raw = group("t", min={"cpu": cpu}, labels=in_tree(tree_id) if tree_id else None)
    warnings = checks.quota_warnings(quota(raw), catalog(*tree(), *pool()), capacity)
    assert [w.split(":")[0] for w in warnings] == expected


# ------------------------------------------------------------------------- a whole catalog


def replaced(name: str, raw: dict[str, Any]) -> list[dict[str, Any]]:
    """The tree with the object `name` replaced by `raw`."""
    return [raw if o["metadata"]["name"] == name else o for o in tree()]


AUDITS = [
    ("the tree as it is", tree(), []),
    (
        "a group with a problem of its own",
        [*tree(), group("t", max={"cpu": "-1"})],
        ["ElasticQuota quotas/t: spec.max.cpu: -1 is negative"],
    ),
    (
        "a group under a leaf",
        [*tree(), group("t", parent="solo")],
        [
            f"ElasticQuota quotas/t: {PARENT_LABEL}: parent 'solo' is not a parent group "
            f'({P}is-parent is not "true")'
        ],
    ),
    (
        "a child with other max resources",
        [*tree(), group("t", parent="dept-a", max={"cpu": "1"})],
        [
            "ElasticQuota quotas/t: spec.max: resources {cpu} differ from parent dept-a's "
            "{cpu, memory}"
        ],
    ),
    ("a missing parent: the tree's to report", [*tree(), group("t", parent="ghost")], []),
    ("a built-in parent: the tree's to report", [*tree(), group("t", parent=DEFAULT)], []),
    (
        "a parent cycle: the tree's to report",
        [
            *tree(),
            group("a", parent="b", is_parent=True),
            group("b", parent="a", is_parent=True),
        ],
        [],
    ),
    ("two trees side by side", [*tree(), *pool()], []),
    (
        "a child of another tree than its parent's",
        [*tree(), *pool(), group("stray", parent="a100", min={"cpu": "10"})],
        [
            f"ElasticQuota quotas/stray: {TREE_LABEL}: tree id is unset, parent a100's is "
            f"'a100': {IN_ITS_PARENTS_TREE}"
        ],
    ),
    (
        "a child with a tree id under a parent of the default tree",
        [*tree(), group("stray", parent="dept-b", labels=in_tree("a100"))],
        [
            f"ElasticQuota quotas/stray: {TREE_LABEL}: tree id is 'a100', parent dept-b's is "
            f"unset: {IN_ITS_PARENTS_TREE}"
        ],
    ),
    (
        "a parent whose children's mins exceed its own",
        replaced("dept-a", group("dept-a", is_parent=True, min={"cpu": "50", "memory": "100Gi"})),
        ["ElasticQuota quotas/dept-a: spec.min.cpu: 50 is below its children's min 90"],
    ),
    (
        "the same, forced",
        replaced(
            "dept-a",
            group(
                "dept-a",
                is_parent=True,
                min={"cpu": "50", "memory": "100Gi"},
                labels={P + "allow-force-update": "true"},
            ),
        ),
        [],
    ),
]


@pytest.mark.parametrize(("case", "objects", "expected"), AUDITS, ids=[c[0] for c in AUDITS])
def test_the_audit_of_a_whole_catalog(case, objects, expected):
    assert problems(checks.audit(catalog(*objects))) == expected
