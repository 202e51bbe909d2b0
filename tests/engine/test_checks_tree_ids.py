"""The tree-id rules of the ElasticQuota checks (`eq_engine.tree.checks.topology_problems`,
docs/webhook.md, Tree ids): a group in its parent's tree, on the default tree with a second one
beside it (quota_tree.py's `pool`), and Koordinator's own cases of checkTreeID. Each case gives
the problems found, every one naming the object and the field. The same rules over HTTPS:
tests/webhook/test_tree_ids.py."""

from __future__ import annotations

from typing import Any

import pytest
from eq_engine.tree import checks

from tests.engine.quota_cases import IN_ITS_PARENTS_TREE, problems
from tests.engine.quota_tree import (
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
