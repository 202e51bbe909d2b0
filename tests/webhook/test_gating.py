"""The mutating endpoint `/mutate/pods`: new pods of limited groups get the admission gate, as a
JSON Patch the API server applies; system, opted-out and bound pods pass untouched."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.manifests import pod
from tests.webhook.conftest import review, start_webhook, stop_webhook

pytestmark = pytest.mark.asyncio(loop_scope="module")

GATE = {"name": "quota.scheduling.koordinator.sh/admission"}


async def mutate(webhook: Any, new: dict[str, Any], operation: str = "CREATE") -> list[Any]:
    """The JSON Patch the webhook answers with (empty: the pod is let through unchanged)."""
    old = new if operation == "UPDATE" else None
    return await webhook.mutation("/mutate/pods", review(operation, new=new, old=old))


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


def as_mutating_admission_sees_it(
    raw: dict[str, Any], owner: str | None, *, with_namespace: bool = True
) -> dict[str, Any]:
    """The pod a controller (`owner`: its kind) or a person with `generateName` sends, as
    kube-apiserver hands it to mutating admission: no name, uid or status yet."""
    metadata = dict(raw["metadata"])
    metadata["generateName"] = metadata.pop("name") + "-"
    if not with_namespace:
        del metadata["namespace"]
    if owner is not None:
        metadata["ownerReferences"] = [
            {
                "apiVersion": "batch/v1" if owner == "Job" else "apps/v1",
                "kind": owner,
                "name": "owner",
                "uid": "0d2f2a8e-7c55-4d6c-9a51-5d1f3f0f4b1e",
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": raw["spec"]}


@pytest.mark.parametrize("owner", [None, "ReplicaSet", "Job", "StatefulSet"])
@pytest.mark.parametrize("with_namespace", [True, False])
async def test_a_pod_a_controller_creates_gets_the_gate_before_it_has_a_name(
    webhook, owner, with_namespace
):
    raw = as_mutating_admission_sees_it(
        pod("batch", namespace="web", node=None, cpu="1"), owner, with_namespace=with_namespace
    )
    body = review("CREATE", new=raw, namespace="web")
    response = await webhook.post("/mutate/pods", body)
    answer = (await response.json())["response"]
    assert json.loads(base64.b64decode(answer["patch"])) == [
        {"op": "add", "path": "/spec/schedulingGates", "value": [GATE]}
    ]


async def test_a_daemonset_pod_is_never_gated(webhook):
    raw = as_mutating_admission_sees_it(pod("agent", namespace="web", node=None), "DaemonSet")
    response = await webhook.post("/mutate/pods", review("CREATE", new=raw, namespace="web"))
    assert "patch" not in (await response.json())["response"]


async def test_an_unreadable_pod_passes_ungated_and_is_counted(webhook):
    raw = pod("p", namespace="web", node=None)
    raw["spec"]["containers"][0]["resources"]["requests"] = {"cpu": "lots"}
    counted = (
        'elastic_quota_webhook_admissions_total{kind="Pod",operation="CREATE",result="unreadable"}'
    )

    async def unreadable() -> float:
        async with webhook.session.get(webhook.probes + "/metrics") as metrics:
            lines = (await metrics.text()).splitlines()
        return sum(float(line.split()[-1]) for line in lines if line.startswith(counted))

    before = await unreadable()
    assert await mutate(webhook, raw) == []
    assert await unreadable() == before + 1


# A pod as it reaches mutating admission: how it is named, who made it, where, with what.
pod_shapes = st.fixed_dictionaries(
    {
        "named": st.booleans(),  # a name, or generateName only (controllers, `kubectl create`)
        "owner": st.sampled_from([None, "ReplicaSet", "Job", "StatefulSet", "DaemonSet"]),
        "namespace": st.sampled_from(["web", "elsewhere", "kube-system", "koordinator-system"]),
        "node": st.booleans(),  # created already bound (`spec.nodeName`)
        "other_gate": st.booleans(),
        "opt_out": st.booleans(),
        "mirror": st.booleans(),
        "has_gate": st.booleans(),
    }
)


def expected_patch(shape: dict[str, Any]) -> list[dict[str, Any]]:
    """The README's rule ("Quota-gated scheduling"), written out independently of the code."""
    never = (
        shape["node"]
        or shape["opt_out"]
        or shape["has_gate"]
        or shape["owner"] == "DaemonSet"
        or shape["mirror"]
        or shape["namespace"] in ("kube-system", "koordinator-system")  # the system group
    )  # "web" and "elsewhere" (the default group, bounded here) are limited groups
    if never:
        return []
    if shape["other_gate"]:
        return [{"op": "add", "path": "/spec/schedulingGates/-", "value": GATE}]
    return [{"op": "add", "path": "/spec/schedulingGates", "value": [GATE]}]


def shaped(shape: dict[str, Any]) -> dict[str, Any]:
    labels = {"quota.scheduling.koordinator.sh/gate": "false"} if shape["opt_out"] else {}
    raw = pod(
        "p", namespace=shape["namespace"], node="n1" if shape["node"] else None, labels=labels
    )
    gates = [{"name": "example.com/other"}] if shape["other_gate"] else []
    if shape["has_gate"]:
        gates.append(GATE)
    if gates:
        raw["spec"]["schedulingGates"] = gates
    if shape["mirror"]:
        raw["metadata"]["annotations"] = {"kubernetes.io/config.mirror": "0f3c"}
    if not shape["named"] or shape["owner"]:
        raw = as_mutating_admission_sees_it(raw, shape["owner"])
    return raw


@settings(max_examples=60, deadline=None)
@given(shape=pod_shapes)
async def test_the_gate_decision_is_the_documented_rule(webhook, shape):
    patch = await mutate(webhook, shaped(shape))
    assert patch == expected_patch(shape)
