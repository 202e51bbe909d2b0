"""The warnings of the ElasticQuota checks (`eq_engine.tree.checks.quota_warnings`): settings that
are legal but do not do what they seem to (a max above the parent's, a zero or partial shared
weight, top-level mins above the cluster, summed per tree). The same warnings over HTTPS:
tests/webhook/test_quota_admission_allowed.py."""

from __future__ import annotations

import pytest
from eq_engine.tree import checks

from tests.engine.quota_cases import CAPACITY
from tests.engine.quota_tree import catalog, group, in_tree, pool, quota, tree
from tests.manifests import LENDING_LIMIT
from tests.realistic import P

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
        "a lending limit on a group that does not lend",
        group(
            "keeper",
            min={"cpu": "10"},
            labels={P + "allow-lent-resource": "false"},
            annotations={LENDING_LIMIT: '{"cpu": "4"}'},
        ),
        [
            f'{LENDING_LIMIT} has no effect while {P}allow-lent-resource is "false": the group '
            "lends none of its min"
        ],
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
    assert list(checks.quota_warnings(quota(raw), catalog(), CAPACITY)) == expected


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
        ["the top-level groups' min cpu 250 in tree 'a100' exceeds the tree's total 200"],
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
    raw = group("t", min={"cpu": cpu}, labels=in_tree(tree_id) if tree_id else None)
    warnings = checks.quota_warnings(quota(raw), catalog(*tree(), *pool()), CAPACITY)
    assert [w.split(":")[0] for w in warnings] == expected
