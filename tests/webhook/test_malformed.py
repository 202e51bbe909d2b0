"""Malformed input over HTTPS: a body that is no review gets 400 with a reason, an object that
cannot be read is denied naming the object and the field; never a 5xx, never a hang.

And pods already where they are: a pod in a namespace that a parent group claimed later can
still be changed (its finalizer removed while it terminates); a parent cannot claim a namespace
that has pods.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.manifests import P, pod, quota
from tests.operator.conftest import eventually
from tests.webhook.conftest import REVIEW, review

pytestmark = pytest.mark.asyncio(loop_scope="module")

RES = {"cpu": 200, "memory": "200Gi"}


def weighted(text: str) -> dict[str, Any]:
    return review("CREATE", new=quota("weighed", parent="dept-a", max=RES, weight=text))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"cpu": "5\\n"}', "'5\\n': not a Kubernetes quantity"),  # "$" matched before "\n"
        ('{"cpu": ' + "7" * 5000 + "}", "not valid JSON"),  # Python's 4300-digit limit
        ('{"cpu": "' + "7" * 5000 + '"}', "more than 100 digits"),
        ("[" * 50_000 + "]" * 50_000, "not valid JSON"),  # deeper than the recursion limit
    ],
    ids=["trailing-newline", "long-number", "long-quantity", "deep"],
)
async def test_a_malformed_annotation_is_a_denial_naming_object_and_field(webhook, text, expected):
    answer = await webhook.review(weighted(text))
    assert answer["allowed"] is False
    message = answer["status"]["message"]
    assert message.startswith(
        f"ElasticQuota quotas/weighed: metadata.annotations[{P}shared-weight]: "
    )
    assert expected in message


async def test_a_body_that_is_no_review_gets_400_with_the_reason(webhook):
    response = await webhook.post("/validate/pods", b"[" * 100_000 + b"]" * 100_000)
    assert response.status == 400
    assert "invalid JSON" in (await response.json())["error"]


ABSENT = object()
"""A field left out of the request (kube-apiserver sends the one an operation lacks as null)."""
POD = pod("p", namespace="web", node=None, cpu="1")
EQ = quota("solo", min={"cpu": 10}, max=RES)
PODS, QUOTAS, GATE = "/validate/pods", "/validate/elasticquotas", "/mutate/pods"


def shaped(path: str, operation: str, new: Any, old: Any) -> dict[str, Any]:
    """A review sent to `path` whose `request.object` is `new` and `oldObject` is `old`."""
    body = review(operation, new=EQ if path == QUOTAS else POD)
    request = {k: v for k, v in body["request"].items() if k not in ("object", "oldObject")}
    for field, value in (("object", new), ("oldObject", old)):
        if value is not ABSENT:
            request[field] = value
    return {**body, "request": request}


MISSHAPEN = {  # path, operation, object, oldObject; the field named and what it should be
    "update-without-old-object": (PODS, "UPDATE", POD, None, "oldObject", "an object"),
    "update-without-object": (PODS, "UPDATE", ABSENT, POD, "object", "an object"),
    "update-old-object-string": (PODS, "UPDATE", POD, "p", "oldObject", "an object"),
    "update-old-object-list": (QUOTAS, "UPDATE", EQ, [EQ], "oldObject", "an object"),
    "create-null-object": (PODS, "CREATE", None, None, "object", "an object"),
    "create-with-old-object": (PODS, "CREATE", POD, POD, "oldObject", "null"),
    "gate-without-object": (GATE, "CREATE", ABSENT, None, "object", "an object"),
    "delete-null-old-object": (QUOTAS, "DELETE", None, None, "oldObject", "an object"),
    "delete-without-old-object": (QUOTAS, "DELETE", None, ABSENT, "oldObject", "an object"),
    "delete-with-object": (QUOTAS, "DELETE", EQ, EQ, "object", "null"),
}


@pytest.mark.parametrize(
    ("path", "operation", "new", "old", "field", "expected"), MISSHAPEN.values(), ids=MISSHAPEN
)
async def test_a_review_not_shaped_as_its_operation_gets_400_naming_the_field(
    webhook, path, operation, new, old, field, expected
):
    """kube-apiserver sends a CREATE with `object`, an UPDATE with `object` and `oldObject`, a
    DELETE with `oldObject` (the other field null): any other shape is no review it sent."""
    response = await webhook.post(path, shaped(path, operation, new, old))
    assert response.status == 400
    error = f"request.{field}: expected {expected} for {operation}"
    assert (await response.json()) == {"error": error}


@pytest.mark.parametrize(
    ("path", "operation", "new", "old"),
    [
        (PODS, "CREATE", POD, ABSENT),
        (GATE, "CREATE", POD, ABSENT),
        (QUOTAS, "DELETE", ABSENT, EQ),
    ],
    ids=["validate-create", "gate-create", "delete"],
)
async def test_a_field_left_out_reads_as_null(webhook, path, operation, new, old):
    response = await webhook.post(path, shaped(path, operation, new, old))
    assert response.status == 200, await response.text()
    assert (await response.json())["response"]["uid"] == "review-1"


def terminating(p: dict[str, Any], finalizers: list[str]) -> dict[str, Any]:
    p["metadata"].update(
        deletionTimestamp="2026-01-01T00:00:00Z",
        finalizers=finalizers,
        deletionGracePeriodSeconds=0,
    )
    return p


async def test_a_pod_in_a_parents_namespace_can_lose_its_finalizer_while_it_terminates(webhook):
    # dept-b (a parent) claims namespace dept-b-ns by its `namespaces` annotation: a pod made
    # there while the pod webhook was down is in a parent group, and must still be deletable.
    old = terminating(pod("stuck", namespace="dept-b-ns", cpu="1"), ["example.com/cleanup"])
    new = terminating(pod("stuck", namespace="dept-b-ns", cpu="1"), [])
    assert (await webhook.review(review("UPDATE", new=new, old=old)))["allowed"] is True


async def test_only_an_update_that_moves_a_pod_into_a_parent_is_refused(webhook):
    old = pod("p", namespace="dept-b-ns", cpu="1")
    relabelled = pod("p", namespace="dept-b-ns", cpu="1", labels={"app": "x"})
    assert (await webhook.review(review("UPDATE", new=relabelled, old=old)))["allowed"] is True
    moved = pod("p", namespace="web", cpu="1")
    into_parent = pod("p", namespace="web", cpu="1", quota="dept-a")
    answer = await webhook.review(review("UPDATE", new=into_parent, old=moved))
    assert (
        answer["allowed"] is False and "'dept-a' is a parent group" in answer["status"]["message"]
    )


async def test_a_parent_cannot_claim_a_namespace_that_has_pods(webhook, api):
    api.seed(pod("runner", namespace="claimed", cpu="1"))
    old = quota("empty", is_parent=True, max=RES)
    new = quota("empty", is_parent=True, max=RES, namespaces=["claimed"])
    answer = await webhook.review(review("UPDATE", new=new, old=old))
    assert answer["allowed"] is False
    assert answer["status"]["message"] == (
        f"ElasticQuota quotas/empty: metadata.annotations[{P}namespaces]: a parent group cannot "
        "take namespaces whose pods would be bound to it: claimed/runner"
    )


# ------------------------------------------------------------------ fuzzing

quantities = st.one_of(
    st.text(max_size=12),
    st.integers(),
    st.floats(allow_nan=True),
    st.from_regex(r"[+-]?[0-9]{1,30}(\.[0-9]{0,5})?([numkMGTPE]|[KMGTPE]i|e[+-]?[0-9]{1,4})?\n?"),
    st.none(),
    st.booleans(),
    st.lists(st.integers(), max_size=2),
)
resource_lists = st.one_of(
    st.dictionaries(
        st.sampled_from(["cpu", "memory", "nvidia.com/gpu", "", "x" * 300]), quantities
    ),
    quantities,
)
annotations = st.dictionaries(
    st.sampled_from([P + "shared-weight", P + "namespaces", P + "max-strict-check-resource-keys"]),
    st.one_of(
        st.text(max_size=20),
        resource_lists.map(lambda value: json.dumps(value, default=str)),
        st.just("[" * 3000),
    ),
)
objects = st.fixed_dictionaries(
    {
        "apiVersion": st.just("scheduling.sigs.k8s.io/v1alpha1"),
        "kind": st.just("ElasticQuota"),
        "metadata": st.fixed_dictionaries(
            {
                "name": st.one_of(st.just("fuzzed"), st.text(max_size=5), st.integers()),
                "namespace": st.just("quotas"),
                "labels": st.one_of(
                    st.dictionaries(
                        st.sampled_from([P + "parent", P + "is-parent", "app"]),
                        st.one_of(st.sampled_from(["dept-a", "true", "root"]), st.integers()),
                    ),
                    st.none(),
                ),
                "annotations": st.one_of(annotations, st.none()),
            }
        ),
        "spec": st.one_of(
            st.fixed_dictionaries({"min": resource_lists, "max": resource_lists}), st.text()
        ),
    }
)


@settings(
    max_examples=300,
    deadline=None,
    derandomize=True,  # the same reviews on every run: CI cannot flake on a new example
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    operation=st.sampled_from(["CREATE", "UPDATE", "DELETE"]),
    new=objects,
    old=st.one_of(objects, st.none()),
)
async def test_fuzzed_reviews_never_get_a_5xx_and_denials_name_the_field(
    webhook, operation, new, old
):
    body = {
        **REVIEW,
        "request": {
            "uid": "fuzz",
            "kind": {
                "group": "scheduling.sigs.k8s.io",
                "version": "v1alpha1",
                "kind": "ElasticQuota",
            },
            "operation": operation,
            "namespace": "quotas",
            "object": None if operation == "DELETE" else new,
            "oldObject": old if operation != "CREATE" else None,
        },
    }
    response = await asyncio.wait_for(webhook.post("/validate/elasticquotas", body), timeout=10)
    assert response.status in (200, 400), await response.text()
    if response.status == 400:
        assert (await response.json())["error"]
        return
    answer = (await response.json())["response"]
    if not answer["allowed"]:
        message = answer["status"]["message"]
        assert message.startswith("ElasticQuota "), message
        assert ": " in message.split(" ", 2)[2], message  # the object, then the field


async def test_the_pods_of_a_large_namespace_are_read_a_page_at_a_time(webhook, api):
    """1,200 finished pods before the one that counts: the webhook pages through them (500 a
    page, as kubectl does) instead of one response of them all, and finds the running one."""
    finished = [
        pod(f"done-{i:04}", namespace="batchy", cpu="1", phase="Succeeded") for i in range(1200)
    ]
    api.seed(quota("batchy", namespace="batchy", max=RES), *finished)
    api.seed(pod("zz-running", namespace="batchy", cpu="1"))
    deletion = review("DELETE", old=quota("batchy", namespace="batchy", max=RES))
    await eventually(  # the webhook learns of the new group through its watch
        lambda: _denied(webhook, deletion), what="the webhook to know the group"
    )
    lists_before = api.count("list", "pods")
    answer = await webhook.review(deletion)
    assert answer["status"]["message"] == (
        "ElasticQuota batchy/batchy: metadata.name: cannot delete a group with pods bound to it: "
        "batchy/zz-running"
    )
    assert api.count("list", "pods") - lists_before >= 3 + 2  # three pages, two label queries


async def test_a_pod_off_the_schema_does_not_hide_its_page(webhook, api):
    """The webhook decodes the pods it lists into the fields the engine reads; a pod whose
    priority is a string makes its page decoded whole, and the pod beside it still counts."""
    odd = pod("odd", namespace="mixed", cpu="1")
    odd["spec"]["priority"] = "high"
    api.seed(quota("mixed", namespace="mixed", max=RES), odd, pod("runner", namespace="mixed"))
    deletion = review("DELETE", old=quota("mixed", namespace="mixed", max=RES))
    await eventually(lambda: _denied(webhook, deletion), what="the webhook to know the group")
    answer = await webhook.review(deletion)
    assert answer["status"]["message"] == (
        "ElasticQuota mixed/mixed: metadata.name: cannot delete a group with pods bound to it: "
        "mixed/runner"
    )


async def _denied(webhook: Any, body: dict[str, Any]) -> bool:
    return not (await webhook.review(body))["allowed"]


async def test_when_the_pods_cannot_be_listed_the_denial_names_the_object_and_field(webhook, api):
    # Twice: a denial is judged again on the tree the API server holds, listing the pods again.
    api.fault("GET", "pods", status=503, times=2)
    answer = await webhook.review(review("DELETE", old=quota("solo", max=RES)))
    assert answer["allowed"] is False
    assert answer["status"]["message"].startswith(
        "ElasticQuota quotas/solo: metadata.name: cannot tell which pods are bound to the group "
        "(the API server answered 503"
    )
