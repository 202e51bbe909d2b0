"""ElasticQuota admissions over HTTPS: each invalid object or operation is denied with its own
message naming the object, the field and the numbers; the valid counterparts are allowed."""

from __future__ import annotations

import ast
import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from eq_engine import catalog, checks, reviews

from tests.manifests import P, quota
from tests.webhook.conftest import cluster_objects, review

pytestmark = pytest.mark.asyncio(loop_scope="module")
RES = {"cpu": 200, "memory": "200Gi"}


def existing(name: str) -> dict[str, Any]:
    """A copy of a cluster object, as the API server sends it as `oldObject`."""
    found = next(o for o in cluster_objects() if o["metadata"]["name"] == name)
    return copy.deepcopy(found)


def edited(
    name: str,
    *,
    labels: dict[str, Any] | None = None,
    annotations: dict[str, Any] | None = None,
    **spec: Any,
) -> dict[str, Any]:
    """`existing(name)` with labels/annotations set (None removes) and spec fields replaced."""
    obj = existing(name)
    for field, changes in (("labels", labels), ("annotations", annotations)):
        for key, value in (changes or {}).items():
            if value is None:
                obj["metadata"][field].pop(key, None)
            else:
                obj["metadata"][field][key] = value
    obj["spec"].update(spec)
    return obj


def update(name: str, **changes: Any) -> dict[str, Any]:
    return review("UPDATE", new=edited(name, **changes), old=existing(name))


def create(obj: dict[str, Any]) -> dict[str, Any]:
    return review("CREATE", new=obj)


def delete(obj: dict[str, Any]) -> dict[str, Any]:
    return review("DELETE", old=obj)


def raw_quota(name: str, **metadata: Any) -> dict[str, Any]:
    obj = quota(name, max=RES)
    obj["metadata"].update(metadata)
    return obj


def strict(*, max: dict[str, Any], used: dict[str, Any]) -> dict[str, Any]:
    """A group whose max must cover its status.used on cpu."""
    obj = raw_quota("t", annotations={P + "max-strict-check-resource-keys": '["cpu"]'})
    obj["spec"]["max"] = max
    return {**obj, "status": {"used": used}}


ROOT, SYSTEM, DEFAULT = (
    "koordinator-root-quota",
    "koordinator-system-quota",
    "koordinator-default-quota",
)
BUILTIN_NS = "koordinator-system"

DENIED = [
    # the group itself
    (
        "negative max",
        create(quota("t", max={"cpu": "-1"})),
        "ElasticQuota quotas/t: spec.max.cpu: -1 is negative",
    ),
    (
        "negative min",
        create(quota("t", min={"memory": "-1Gi"}, max=RES)),
        "ElasticQuota quotas/t: spec.min.memory: -1Gi is negative",
    ),
    (
        "negative weight",
        create(quota("t", max=RES, weight={"cpu": "-2"})),
        f"metadata.annotations[{P}shared-weight]: cpu -2 is negative",
    ),
    (
        "weight not json",
        create(quota("t", max=RES, weight="{cpu: 1")),
        f"ElasticQuota quotas/t: metadata.annotations[{P}shared-weight]: not valid JSON",
    ),
    (
        "weight not a map",
        create(quota("t", max=RES, weight="[1, 2]")),
        f"metadata.annotations[{P}shared-weight]: expected a JSON resource list",
    ),
    (
        "weight bad quantity",
        create(quota("t", max=RES, weight={"cpu": "much"})),
        f"metadata.annotations[{P}shared-weight]: 'much': not a Kubernetes quantity",
    ),
    (
        "namespaces not a list",
        create(raw_quota("t", annotations={P + "namespaces": '"a"'})),
        f"metadata.annotations[{P}namespaces]: expected a JSON list of namespace names",
    ),
    (
        "min key not in max",
        create(quota("t", min={"nvidia.com/gpu": 1}, max=RES)),
        "ElasticQuota quotas/t: spec.min.nvidia.com/gpu: the resource is not in spec.max",
    ),
    (
        "min above max",
        create(quota("t", min={"cpu": 30}, max={"cpu": 20, "memory": 1})),
        "ElasticQuota quotas/t: spec.min.cpu: 30 exceeds spec.max.cpu 20",
    ),
    (
        "malformed quantity",
        create(quota("t", min={"cpu": "lots"}, max=RES)),
        "ElasticQuota quotas/t: spec.min: 'lots': not a Kubernetes quantity (resource cpu)",
    ),
    (
        "spec not a map",
        create({**quota("t"), "spec": ["min"]}),
        "ElasticQuota quotas/t: spec: Input should be a valid dictionary",
    ),
    (
        "parent labels disagree",
        create(quota("t", parent="dept-a", max=RES, labels={P + "parent-quota-name": "dept-b"})),
        f"metadata.labels[{P}parent]: 'dept-a' disagrees with {P}parent-quota-name 'dept-b'",
    ),
    (
        "strict key above used",
        create(strict(max={"cpu": 4, "memory": 1}, used={"cpu": 6})),
        f"spec.max.cpu: 4 is below status.used.cpu 6 ({P}max-strict-check-resource-keys)",
    ),
    (
        "strict key missing",
        create(strict(max={"memory": 1}, used={"cpu": 6})),
        f"spec.max: has no cpu, but {P}max-strict-check-resource-keys asks it to cover "
        "status.used.cpu 6",
    ),
    (
        "strict keys not a list",
        create(raw_quota("t", annotations={P + "max-strict-check-resource-keys": '{"cpu": 1}'})),
        f"metadata.annotations[{P}max-strict-check-resource-keys]: expected a JSON list",
    ),
    # where it sits
    (
        "missing parent",
        create(quota("t", parent="ghost", max=RES)),
        f"ElasticQuota quotas/t: metadata.labels[{P}parent]: parent 'ghost' does not exist",
    ),
    (
        "parent not a parent",
        create(quota("t", parent="solo", max=RES)),
        "parent 'solo' is not a parent group",
    ),
    (
        "parent built-in",
        create(quota("t", parent=DEFAULT, max=RES)),
        f"parent '{DEFAULT}' is a built-in group that cannot have children",
    ),
    (
        "own parent",
        create(quota("t", parent="t", is_parent=True, max=RES)),
        f"metadata.labels[{P}parent]: a group cannot be its own parent",
    ),
    (
        "max keys differ from parent",
        create(quota("t", parent="dept-a", max={"cpu": 1})),
        "ElasticQuota quotas/t: spec.max: resources {cpu} differ from parent dept-a's "
        "{cpu, memory}",
    ),
    (
        "min keys beyond parent's",
        create(quota("t", parent="dept-b", min={"memory": 1}, max=RES)),
        "ElasticQuota quotas/t: spec.min: resources {memory} are not in parent dept-b's min",
    ),
    (
        "siblings exceed parent min",
        create(quota("t", parent="dept-a", min={"cpu": 20}, max=RES)),
        "ElasticQuota quotas/t: spec.min.cpu: 20 + siblings' 90 exceeds parent dept-a's min 100",
    ),
    (
        "tree id unlike the parent's",
        create(quota("t", parent="dept-a", max=RES, labels={P + "tree-id": "a100"})),
        f"ElasticQuota quotas/t: metadata.labels[{P}tree-id]: tree id is 'a100', parent "
        "dept-a's is unset: a group is in its parent's tree",
    ),
    (
        "name taken elsewhere",
        create(quota("ml", namespace="other", max=RES)),
        "ElasticQuota other/ml: metadata.name: an ElasticQuota named 'ml' already exists in "
        "namespace 'team-ml'; names are unique cluster-wide",
    ),
    (
        "namespace bound twice",
        create(quota("t", max=RES, namespaces=["shared-1"])),
        f"metadata.annotations[{P}namespaces]: namespace 'shared-1' is already bound to 'shared'",
    ),
    (
        "built-in outside its namespace",
        create(quota(DEFAULT, namespace="apps", max=RES)),
        f"ElasticQuota apps/{DEFAULT}: metadata.name: '{DEFAULT}' is a built-in group, which "
        f"lives in namespace '{BUILTIN_NS}'",
    ),
    # changes
    (
        "move under own child",
        update("dept-a", labels={P + "parent": "ml"}),
        f"ElasticQuota quotas/dept-a: metadata.labels[{P}parent]: parent 'ml' is below this "
        "group: a cycle",
    ),
    (
        "tree id added",
        update("solo", labels={P + "tree-id": "a100"}),
        f"ElasticQuota quotas/solo: metadata.labels[{P}tree-id]: cannot change (unset -> 'a100'): "
        "a group stays in the tree it was made in",
    ),
    (
        "raise min past parent",
        update("ml", min={"cpu": 95, "memory": "60Gi"}),
        "ElasticQuota team-ml/ml: spec.min.cpu: 95 + siblings' 10 exceeds parent dept-a's min 100",
    ),
    (
        "lower min under children",
        update("dept-a", min={"cpu": 50, "memory": "100Gi"}),
        "ElasticQuota quotas/dept-a: spec.min.cpu: 50 is below its children's min 90",
    ),
    (
        "parent flag off with children",
        update("dept-a", labels={P + "is-parent": None}),
        f"metadata.labels[{P}is-parent]: cannot stop being a parent while it has child groups "
        "ml, web",
    ),
    (
        "parent takes a namespace with pods",
        update("dept-b", annotations={P + "namespaces": '["dept-b-ns", "nlp"]'}),
        "ElasticQuota quotas/dept-b: metadata.annotations[quota.scheduling.koordinator.sh/"
        "namespaces]: a parent group cannot take namespaces whose pods would be bound to it: "
        "nlp/tagger",
    ),
    (
        "parent flag on with labelled pods",
        update("solo", labels={P + "is-parent": "true"}),
        # Five pods are bound: the webhook stops listing after the first four (a denial names
        # three), so it says "and more" rather than a count it does not know.
        "cannot become a parent while pods are bound to it: apps/solo-0, apps/solo-1, apps/solo-2 "
        "and more",
    ),
    (
        "parent flag on with namespace pods",
        update("nlp", labels={P + "is-parent": "true"}),
        "ElasticQuota nlp/nlp: metadata.labels[" + P + "is-parent]: cannot become a parent while "
        "pods are bound to it: nlp/tagger",
    ),
    (
        "move where mins do not fit",
        update("ml", labels={P + "parent": "dept-b"}),
        "spec.min.cpu: 80 + siblings' 40 exceeds parent dept-b's min 50",
    ),
    (
        "move where min keys do not fit",
        update("ml", labels={P + "parent": "dept-b"}),
        "spec.min: resources {memory} are not in parent dept-b's min",
    ),
    (
        "drop a max key under children",
        update("dept-a", max={"cpu": 200}),
        "ElasticQuota quotas/dept-a: spec.max: child ml's resources {cpu, memory} differ from "
        "parent dept-a's {cpu}",
    ),
    (
        "claim a bound namespace",
        update("web", annotations={P + "namespaces": '["dept-b-ns"]'}),
        "namespace 'dept-b-ns' is already bound to 'dept-b'",
    ),
    (
        "change the root",
        review(
            "UPDATE",
            new=quota(ROOT, namespace=BUILTIN_NS, min={"cpu": 1}, max={"cpu": 1}),
            old=quota(ROOT, namespace=BUILTIN_NS),
        ),
        f"ElasticQuota {BUILTIN_NS}/{ROOT}: metadata.name: the built-in group cannot be changed",
    ),
    (
        "change the system group",
        review(
            "UPDATE",
            new=quota(SYSTEM, namespace=BUILTIN_NS, max={"cpu": 1}),
            old=quota(SYSTEM, namespace=BUILTIN_NS),
        ),
        "the built-in group cannot be changed",
    ),
    (
        "default min above its max",
        update(DEFAULT, min={"cpu": 300}),
        f"ElasticQuota {BUILTIN_NS}/{DEFAULT}: spec.min.cpu: 300 exceeds spec.max.cpu 200",
    ),
    # deletions
    (
        "delete the root",
        delete(quota(ROOT, namespace=BUILTIN_NS)),
        f"ElasticQuota {BUILTIN_NS}/{ROOT}: metadata.name: a built-in group cannot be deleted",
    ),
    (
        "delete the system group",
        delete(quota(SYSTEM, namespace=BUILTIN_NS)),
        "a built-in group cannot be deleted",
    ),
    ("delete the default group", delete(existing(DEFAULT)), "a built-in group cannot be deleted"),
    (
        "delete a parent with children",
        delete(existing("dept-a")),
        "ElasticQuota quotas/dept-a: metadata.name: cannot delete a group with child groups: "
        "ml, web",
    ),
    (
        "delete a group with labelled pods",
        delete(existing("solo")),
        "ElasticQuota quotas/solo: metadata.name: cannot delete a group with pods bound to it: "
        "apps/solo-0, apps/solo-1, apps/solo-2 and more",
    ),
    (
        "delete a group with namespace pods",
        delete(existing("nlp")),
        "cannot delete a group with pods bound to it: nlp/tagger",
    ),
]

ALLOWED = [
    ("a child that fits", create(quota("t", parent="dept-a", min={"cpu": 10}, max=RES))),
    ("a top-level leaf", create(quota("t", min={"cpu": 10}, max=RES))),
    ("a parent on its own", create(quota("t", is_parent=True, max=RES))),
    ("a free namespace", create(quota("t", max=RES, namespaces=["free"]))),
    ("the root, where it lives", create(quota(ROOT, namespace=BUILTIN_NS))),
    (
        "the operator's annotations and status",
        update("ml", annotations={P + "runtime": json.dumps({"cpu": "150"})}),
    ),
    ("an unrelated label", update("solo", labels={"team": "red"})),
    ("a lower min", update("ml", min={"cpu": 40, "memory": "60Gi"})),
    ("a higher parent min", update("dept-a", min={"cpu": 150, "memory": "100Gi"})),
    ("a move that fits", update("web", labels={P + "parent": "dept-b"})),
    ("a parent flag on without pods", update("shared", labels={P + "is-parent": "true"})),
    ("a parent flag off without children", update("empty", labels={P + "is-parent": None})),
    (
        "forced min",
        update("ml", min={"cpu": 95, "memory": "60Gi"}, labels={P + "allow-force-update": "true"}),
    ),
    ("the default group's limits", update(DEFAULT, min={"cpu": 5})),
    ("an empty group deleted", delete(existing("empty"))),
    ("a group deleted without pods", delete(existing("shared"))),
    ("an unknown group deleted", delete(quota("gone", max=RES))),
    ("an unreadable stored object deleted", delete(quota("broken", min={"cpu": "lots"}))),
]


@pytest.mark.parametrize(("name", "body", "message"), DENIED, ids=[c[0] for c in DENIED])
async def test_invalid_quota_operations_are_denied_with_their_message(webhook, name, body, message):
    answer = await webhook.review(body)
    assert answer["allowed"] is False
    assert answer["status"]["code"] == 403
    assert message in answer["status"]["message"]


@pytest.mark.parametrize(("name", "body"), ALLOWED, ids=[c[0] for c in ALLOWED])
async def test_valid_quota_operations_are_allowed(webhook, name, body):
    answer = await webhook.review(body)
    assert answer["allowed"] is True, answer.get("status")
    assert "status" not in answer


async def test_the_corpus_denies_by_every_rule_the_engine_has():
    """Each place where the engine words a denial of an ElasticQuota is met by a case above:
    the wording of its message (the longest constant part) is in some case's expected message."""
    expected = " | ".join(message for _, _, message in DENIED)
    unmet = []
    for where, message in _denial_wordings():
        parts = message.values if isinstance(message, ast.JoinedStr) else [message]
        constants = [p.value.strip(" :,.(") for p in parts if isinstance(p, ast.Constant)]
        wording = max(constants, key=len, default="")  # none: a message worded elsewhere
        if wording and wording not in expected:
            unmet.append(f"{where} {wording!r}")
    assert unmet == []


def _denial_wordings() -> Iterator[tuple[str, ast.expr]]:
    """The messages of the checks' and reviews' `quota_problem` calls, and the wordings
    `Catalog.parent_fault` returns (which the checks pass on whole)."""
    for module in (checks, reviews):
        for node in ast.walk(ast.parse(Path(module.__file__).read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "quota_problem":
                yield f"{module.__name__}:{node.lineno}", node.args[2]
    source = ast.parse(Path(catalog.__file__).read_text())
    fault = next(
        node
        for node in ast.walk(source)
        if isinstance(node, ast.FunctionDef) and node.name == "parent_fault"
    )
    for node in ast.walk(fault):
        if isinstance(node, ast.Return) and isinstance(node.value, ast.JoinedStr):
            yield f"{catalog.__name__}:{node.lineno}", node.value


@pytest.mark.parametrize(
    ("body", "warning"),
    [
        (
            create(quota("big", min={"cpu": 300}, max={"cpu": 400, "memory": 1})),
            "ElasticQuota quotas/big: the top-level groups' min cpu 460 exceeds the cluster's 200: "
            "their mins will be scaled down",
        ),
        (
            create(quota("wide", parent="dept-a", max={"cpu": 300, "memory": "200Gi"})),
            "ElasticQuota quotas/wide: spec.max.cpu 300 is above parent dept-a's max 200: "
            "the group can never use more than its parent",
        ),
        (
            create(quota("shy", max=RES, weight={"cpu": 0, "memory": "1Gi"})),
            "ElasticQuota quotas/shy: shared weight of cpu is 0: the group never borrows cpu",
        ),
    ],
)
async def test_risky_but_legal_settings_pass_with_a_warning(webhook, body, warning):
    answer = await webhook.review(body)
    assert answer["allowed"] is True
    assert warning in answer["warnings"]
