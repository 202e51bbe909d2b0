"""The audit of a whole catalog (`eq_engine.tree.checks.audit`): the problems the objects a cluster
holds have among themselves, every one naming the object, the field and the numbers; those the
tree reports when it is built (a missing or built-in parent, a cycle) are left to it."""

from __future__ import annotations

from typing import Any

import pytest
from eq_engine.tree import checks

from tests.engine.quota_cases import problems
from tests.engine.quota_tree import (
    DEFAULT,
    PARENT_LABEL,
    catalog,
    group,
    in_tree,
    pool,
    tree,
)
from tests.realistic import P


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
        [],  # the tree does not follow the link, and says so: tests/engine/test_pools.py
    ),
    (
        "a child with a tree id under a parent of the default tree",
        [*tree(), group("stray", parent="dept-b", labels=in_tree("a100"))],
        [],  # the same
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
