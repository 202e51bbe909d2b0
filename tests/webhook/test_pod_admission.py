"""Pod admissions over HTTPS: no pod in a parent group; `preemptible` never changes."""

from __future__ import annotations

import pytest

from tests.manifests import P, pod
from tests.webhook.conftest import review

pytestmark = pytest.mark.asyncio(loop_scope="module")


def relabelled(before: str | None, after: str | None) -> dict:
    labels_old = {} if before is None else {P + "preemptible": before}
    labels_new = {} if after is None else {P + "preemptible": after}
    old = pod("db-0", quota="solo", cpu="1", labels=labels_old)
    new = pod("db-0", quota="solo", cpu="1", labels=labels_new)
    return review("UPDATE", new=new, old=old)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            review("CREATE", new=pod("p", quota="dept-a", cpu="1")),
            f"Pod apps/p: metadata.labels[{P}name]: 'dept-a' is a parent group: pods belong in "
            "leaves",
        ),
        (
            review("CREATE", new=pod("p", labels={P + "quota-name": "empty"})),
            f"Pod apps/p: metadata.labels[{P}name]: 'empty' is a parent group",
        ),
        (
            review("CREATE", new=pod("p", quota="koordinator-root-quota")),
            "'koordinator-root-quota' is a parent group",
        ),
        (
            review("CREATE", new=pod("p", namespace="dept-b-ns", cpu="1")),
            "Pod dept-b-ns/p: metadata.namespace: 'dept-b' is a parent group: pods belong in "
            "leaves",
        ),
        (
            review("UPDATE", new=pod("p", quota="dept-a"), old=pod("p", quota="solo")),
            "'dept-a' is a parent group",
        ),
        (
            relabelled("false", None),
            f"Pod apps/db-0: metadata.labels[{P}preemptible]: cannot change ('false' -> unset)",
        ),
        (relabelled(None, "false"), "cannot change (unset -> 'false')"),
        (relabelled("true", "false"), "cannot change ('true' -> 'false')"),
        (
            review("CREATE", new=pod("p", quota="solo", cpu="two")),
            "Pod apps/p: spec.containers[0].resources.requests: 'two': not a Kubernetes quantity",
        ),
    ],
)
async def test_invalid_pods_are_denied_with_their_message(webhook, body, message):
    answer = await webhook.review(body)
    assert answer["allowed"] is False
    assert message in answer["status"]["message"]


@pytest.mark.parametrize(
    "body",
    [
        review("CREATE", new=pod("p", quota="solo", cpu="1")),
        review("CREATE", new=pod("p", namespace="nlp", cpu="1")),
        review("CREATE", new=pod("p", namespace="anywhere", cpu="1")),
        review("CREATE", new=pod("dns", namespace="kube-system", quota="dept-a")),
        relabelled("false", "false"),
        relabelled(None, None),
        review("DELETE", old=pod("p", quota="dept-a")),
    ],
)
async def test_valid_pods_are_allowed(webhook, body):
    answer = await webhook.review(body)
    assert answer["allowed"] is True, answer.get("status")
