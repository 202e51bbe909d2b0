"""The mutating endpoint `/mutate/pods`: new pods of limited groups get the admission gate, as a
JSON Patch the API server applies; system, opted-out and bound pods pass untouched."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from tests.manifests import pod
from tests.webhook.conftest import review, start_webhook, stop_webhook

pytestmark = pytest.mark.asyncio(loop_scope="module")

GATE = {"name": "quota.scheduling.koordinator.sh/admission"}


async def mutate(webhook: Any, new: dict[str, Any], operation: str = "CREATE") -> list[Any]:
    """The JSON Patch the webhook answers with (empty: the pod is let through unchanged)."""
    old = new if operation == "UPDATE" else None
    response = await webhook.post("/mutate/pods", review(operation, new=new, old=old))
    assert response.status == 200, await response.text()
    answer = (await response.json())["response"]
    assert answer["allowed"] is True
    if "patch" not in answer:
        return []
    assert answer["patchType"] == "JSONPatch"
    return json.loads(base64.b64decode(answer["patch"]))


async def test_a_new_pod_of_a_limited_group_gets_the_gate(webhook):
    patch = await mutate(webhook, pod("p", namespace="web", node=None, cpu="1"))
    assert patch == [{"op": "add", "path": "/spec/schedulingGates", "value": [GATE]}]


async def test_the_gate_joins_the_gates_a_pod_already_has(webhook):
    raw = pod("p", namespace="web", node=None, cpu="1")
    raw["spec"]["schedulingGates"] = [{"name": "example.com/other"}]
    patch = await mutate(webhook, raw)
    assert patch == [{"op": "add", "path": "/spec/schedulingGates/-", "value": GATE}]


@pytest.mark.parametrize(
    "raw",
    [
        pod("p", namespace="kube-system", node=None, cpu="1"),  # the system group
        pod(
            "p",
            namespace="web",
            node=None,
            labels={"quota.scheduling.koordinator.sh/gate": "false"},
        ),
        pod("p", namespace="web", node="n1", cpu="1"),  # bound already: a gate is refused
        pod("p", namespace="web", node=None, gated=True),  # has it already
    ],
    ids=["system", "opted-out", "bound", "gated"],
)
async def test_these_pods_are_never_gated(webhook, raw):
    assert await mutate(webhook, raw) == []


async def test_updates_are_never_gated(webhook):
    assert await mutate(webhook, pod("p", namespace="web", node=None), "UPDATE") == []


async def test_with_gating_off_every_pod_passes_untouched(api, certificates, tmp_path):
    off = await start_webhook(tmp_path, str(api.url), certificates, "--gate-pods", "false")
    try:
        assert await mutate(off, pod("p", namespace="web", node=None, cpu="1")) == []
    finally:
        await stop_webhook(off)
