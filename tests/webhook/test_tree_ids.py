"""The tree-id rules over HTTPS (docs/webhook.md, Tree ids): the webhook's cluster with a
second tree beside the first, as Koordinator's profile controller makes one for a node pool
(tests/engine/quota_tree.py's `pool`), and a group created under it while the webhook was down
without its tree id; and the mutating endpoint that gives a new group its parent's tree id first,
as Koordinator's pipeline does. The same decisions without the round trip:
tests/engine/test_reviews_tree_ids.py."""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator
from typing import Any

import jsonpatch
import pytest
import pytest_asyncio

from tests.apiserver import ApiServer
from tests.engine.quota_tree import TREE_LABEL, edited, existing, group, in_tree, pool
from tests.realistic import P
from tests.webhook.conftest import cluster_objects, review

pytestmark = pytest.mark.asyncio(loop_scope="module")

STRAY = group("stray", parent="a100", min={"cpu": "10"})
"""Under a100, without its tree id."""
IN_ITS_PARENTS_TREE = "a group is in its parent's tree"
STAYS = "a group stays in the tree it was made in"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def api() -> AsyncIterator[ApiServer]:
    async with ApiServer() as emulator:
        emulator.seed(*cluster_objects(), *pool(), STRAY)
        yield emulator


def ours(name: str, **labels: str) -> dict[str, Any]:
    """The webhook cluster's object `name` (tests/webhook/conftest.py), `labels` added."""
    found = next(o for o in cluster_objects() if o["metadata"]["name"] == name)
    obj = copy.deepcopy(found)
    obj["metadata"]["labels"].update(labels)
    return obj


def update(name: str, **changes: Any) -> dict[str, Any]:
    return review("UPDATE", new=edited(name, **changes), old=existing(name))


DENIED = [
    (
        "a child without its parent's tree id",
        review("CREATE", new=group("t", parent="a100", min={"cpu": "10"})),
        f"ElasticQuota quotas/t: {TREE_LABEL}: tree id is unset, parent a100's is 'a100': "
        + IN_ITS_PARENTS_TREE,
    ),
    (
        "a child of another tree id than its parent's",
        review("CREATE", new=group("t", parent="a100", labels=in_tree("v100"))),
        f"ElasticQuota quotas/t: {TREE_LABEL}: tree id is 'v100', parent a100's is 'a100': "
        + IN_ITS_PARENTS_TREE,
    ),
    (
        "a child with a tree id under a parent of the default tree",
        review("CREATE", new=group("t", parent="dept-a", labels=in_tree("a100"))),
        f"ElasticQuota quotas/t: {TREE_LABEL}: tree id is 'a100', parent dept-a's is unset: "
        + IN_ITS_PARENTS_TREE,
    ),
    (
        "a tree id added",
        review("UPDATE", new=ours("solo", **in_tree("a100")), old=ours("solo")),
        f"ElasticQuota quotas/solo: {TREE_LABEL}: cannot change (unset -> 'a100'): {STAYS}",
    ),
    (
        "a tree id changed",
        update("vision", labels={P + "tree-id": "v100"}),
        f"ElasticQuota vision/vision: {TREE_LABEL}: cannot change ('a100' -> 'v100'): {STAYS}; "
        f"ElasticQuota vision/vision: {TREE_LABEL}: tree id is 'v100', parent a100's is "
        f"'a100': {IN_ITS_PARENTS_TREE}",
    ),
    (
        "a tree id removed from a tree's root",
        update("a100", labels={P + "tree-id": None}),
        f"ElasticQuota quotas/a100: {TREE_LABEL}: cannot change ('a100' -> unset): {STAYS}; "
        f"ElasticQuota quotas/a100: {TREE_LABEL}: child speech's tree id is 'a100', parent "
        f"a100's is unset: {IN_ITS_PARENTS_TREE}; ElasticQuota quotas/a100: {TREE_LABEL}: "
        f"child vision's tree id is 'a100', parent a100's is unset: {IN_ITS_PARENTS_TREE}",
    ),
    (
        "a move into another tree",
        review("UPDATE", new=ours("web", **{P + "parent": "a100"}), old=ours("web")),
        f"ElasticQuota web/web: {TREE_LABEL}: tree id is unset, parent a100's is 'a100': "
        + IN_ITS_PARENTS_TREE,
    ),
    (
        "a min change of a parent with a child of another tree",
        update("a100", min={"cpu": "120", "memory": "100Gi"}),
        f"ElasticQuota quotas/a100: {TREE_LABEL}: child stray's tree id is unset, parent a100's "
        f"is 'a100': {IN_ITS_PARENTS_TREE}",
    ),
    (
        "a min raised past the parent's, within a tree",
        update("vision", min={"cpu": "90"}),
        "ElasticQuota vision/vision: spec.min.cpu: 90 + siblings' 30 exceeds parent a100's min 100",
    ),
    (
        "a tree's root deleted with its groups",
        review("DELETE", old=existing("a100")),
        "ElasticQuota quotas/a100: metadata.name: cannot delete a group with child groups: "
        "speech, stray, vision",
    ),
]

ALLOWED = [
    (
        "a child in its parent's tree",
        review("CREATE", new=group("t", parent="a100", min={"cpu": "10"}, labels=in_tree("a100"))),
    ),
    ("a child of the root with a tree id", review("CREATE", new=group("t", labels=in_tree("x")))),
    (
        "a tree's new root",
        review(
            "CREATE",
            new=group("v100", is_parent=True, labels=in_tree("v100", **{P + "is-root": "true"})),
        ),
    ),
    (
        "the operator's annotations on a tree's group",
        update("vision", annotations={P + "runtime": '{"cpu":"150"}'}),
    ),
    ("a tree's group deleted", review("DELETE", old=existing("speech"))),
]


@pytest.mark.parametrize(("name", "body", "message"), DENIED, ids=[c[0] for c in DENIED])
async def test_a_tree_id_rule_broken_is_denied_with_its_message(webhook, name, body, message):
    answer = await webhook.review(body)
    assert answer["allowed"] is False
    assert answer["status"]["code"] == 403
    assert answer["status"]["message"] == message
    assert "patch" not in answer  # the validating endpoint judges; it changes nothing


@pytest.mark.parametrize(("name", "body"), ALLOWED, ids=[c[0] for c in ALLOWED])
async def test_a_tree_id_rule_kept_is_allowed(webhook, name, body):
    answer = await webhook.review(body)
    assert answer["allowed"] is True, answer.get("status")
    assert "status" not in answer and "patch" not in answer


async def test_a_settings_edit_in_a_tree_with_a_stray_child_passes_with_a_warning(webhook):
    answer = await webhook.review(update("a100", labels={P + "allow-lent-resource": "false"}))
    assert answer["allowed"] is True
    assert answer["warnings"] == [
        f"ElasticQuota quotas/a100: the tree already has a problem: {TREE_LABEL}: child stray's "
        f"tree id is unset, parent a100's is 'a100': {IN_ITS_PARENTS_TREE}"
    ]


DEFAULTS = "/mutate/elasticquotas"
TREE_ID = P + "tree-id"


async def test_a_group_made_without_its_parents_tree_id_is_given_it_then_admitted(webhook):
    child = group("t", parent="a100", min={"cpu": "10"})
    patch = await webhook.mutation(DEFAULTS, review("CREATE", new=child))
    step = "/metadata/labels/" + TREE_ID.replace("/", "~1")
    assert patch == [{"op": "add", "path": step, "value": "a100"}]
    stored = jsonpatch.apply_patch(child, patch)
    assert stored["metadata"]["labels"] == {**child["metadata"]["labels"], TREE_ID: "a100"}
    answer = await webhook.review(review("CREATE", new=stored))
    assert answer["allowed"] is True, answer.get("status")


def created(**settings: Any) -> dict[str, Any]:
    return review("CREATE", new=group("t", **settings))


UNCHANGED = [
    ("a group that names its tree", created(parent="a100", labels=in_tree("a100"))),
    ("a group naming another tree", created(parent="a100", labels=in_tree("v100"))),
    ("a group of the default tree", created(parent="dept-a")),
    ("a top-level group", created()),
    ("a group whose parent does not exist", created(parent="nobody")),
    (
        "an update (a group stays in the tree it was made in)",
        review("UPDATE", new=edited(STRAY, min={"cpu": "5"}), old=STRAY),
    ),
    ("a deletion", review("DELETE", old=existing("speech"))),
]


@pytest.mark.parametrize(("name", "body"), UNCHANGED, ids=[c[0] for c in UNCHANGED])
async def test_other_elasticquota_writes_pass_the_mutating_endpoint_unchanged(webhook, name, body):
    assert await webhook.mutation(DEFAULTS, body) == []


async def test_the_mutating_endpoint_refuses_what_is_not_an_elasticquota(webhook):
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {}}
    response = await webhook.post(DEFAULTS, review("CREATE", new=pod, namespace="a"))
    assert response.status == 400
    assert await response.json() == {
        "error": "request.kind.kind: this endpoint defaults ElasticQuota, not Pod"
    }
