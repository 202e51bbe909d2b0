"""ElasticQuota admissions over HTTPS that are denied: each invalid object or operation (the
group itself, where it sits, changes, deletions) is denied with its own message naming the
object, the field and the numbers; and every rule the engine words a denial by is met by a case.
The valid counterparts: test_quota_admission_allowed.py; the same rules without the round trip:
tests/engine/test_checks_*.py and test_reviews_*.py."""

from __future__ import annotations

import ast
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from eq_engine.decisions import verdicts as reviews
from eq_engine.tree import catalog, checks, own_keys

from tests.manifests import BORROWING_LIMIT as BORROWING
from tests.manifests import LENDING_LIMIT as LENDING
from tests.manifests import OWN, P, quota
from tests.webhook.conftest import review
from tests.webhook.quota_reviews import (
    BUILTIN_NS,
    DEFAULT,
    RES,
    ROOT,
    SYSTEM,
    create,
    delete,
    existing,
    raw_quota,
    strict,
    update,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")
POOLS = OWN + "pools"


def pooled(name: str, listed: object, **fields: Any) -> dict[str, Any]:
    """A group whose pods go to the groups `listed` (as JSON; a str as written)."""
    obj = quota(name, **fields)
    obj["metadata"]["annotations"][POOLS] = (
        listed if isinstance(listed, str) else json.dumps(listed)
    )
    return obj


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
        "negative lending limit",
        create(quota("t", min={"cpu": 4}, max=RES, lending_limit={"cpu": "-1"})),
        f"ElasticQuota quotas/t: metadata.annotations[{LENDING}]: cpu -1 is negative",
    ),
    (
        "lending limit above min",
        create(quota("t", min={"cpu": 4}, max=RES, lending_limit={"cpu": "6"})),
        f"ElasticQuota quotas/t: metadata.annotations[{LENDING}]: cpu 6 exceeds spec.min.cpu 4: "
        "a group lends at most its min",
    ),
    (
        "lending limit of a resource without min",
        create(quota("t", min={"cpu": 4}, max=RES, lending_limit={"memory": "1Gi"})),
        f"ElasticQuota quotas/t: metadata.annotations[{LENDING}]: memory: the resource is not "
        "in spec.min, nothing to lend",
    ),
    (
        "lending limit not a resource list",
        create(quota("t", min={"cpu": 4}, max=RES, lending_limit=[4])),
        f"ElasticQuota quotas/t: metadata.annotations[{LENDING}]: expected a JSON resource list",
    ),
    (
        "negative borrowing limit",
        create(quota("t", max=RES, borrowing_limit={"memory": "-1Gi"})),
        f"ElasticQuota quotas/t: metadata.annotations[{BORROWING}]: memory -1Gi is negative",
    ),
    (
        "borrowing limit of a resource without max",
        create(quota("t", max=RES, borrowing_limit={"nvidia.com/gpu": 2})),
        f"ElasticQuota quotas/t: metadata.annotations[{BORROWING}]: nvidia.com/gpu: the "
        "resource is not in spec.max",
    ),
    (
        "pools on a group with a max",
        create(raw_quota("t", annotations={POOLS: '["t-v100", "t-a100"]'})),
        f"ElasticQuota quotas/t: metadata.annotations[{POOLS}]: a group that lists pools has no "
        "min or max of its own: its pods are counted in the group of the pool each goes to; set "
        "spec.min and spec.max on those",
    ),
    (
        "pools on a parent",
        create(pooled("t", ["t-v100"], is_parent=True)),
        f"metadata.annotations[{POOLS}]: a parent group has no pods to send to pools; list "
        "them on a leaf",
    ),
    (
        "pools listing itself",
        create(pooled("t", ["t"])),
        f"ElasticQuota quotas/t: metadata.annotations[{POOLS}]: 't' lists itself",
    ),
    (
        "pools naming a group no label can name",
        create(pooled("t", ["x" * 64])),
        f"metadata.annotations[{POOLS}]: '{'x' * 64}' is 64 characters long: a pool group is "
        f"named by its pods' {OWN}pool-quota label, at most 63",
    ),
    (
        "pools not a list",
        create(pooled("t", '"t-v100"')),
        f"ElasticQuota quotas/t: metadata.annotations[{POOLS}]: expected a JSON list of "
        "ElasticQuota names",
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


@pytest.mark.parametrize(("name", "body", "message"), DENIED, ids=[c[0] for c in DENIED])
async def test_invalid_quota_operations_are_denied_with_their_message(webhook, name, body, message):
    answer = await webhook.review(body)
    assert answer["allowed"] is False
    assert answer["status"]["code"] == 403
    assert message in answer["status"]["message"]


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
    for module in (checks, own_keys, reviews):
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
