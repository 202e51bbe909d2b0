"""Quota-gated scheduling against the emulator: the operator's first decision at start-up takes
the pods already waiting most important first, says why the others wait, and counts how long
the admitted ones waited (`elastic_quota_gate_wait_seconds`).

Gating of pods made by Deployments, StatefulSets, Jobs and users, most important first and
never beyond the runtime, the admission hold, ungated pods and evicted pods' replacements: on
the real control plane (tests/control_plane/test_gating.py, test_reclaim.py)."""

from __future__ import annotations

from typing import Any

from eq_engine.model import keys

from tests.kube import PODS, store, stored
from tests.manifests import node, pod, quota
from tests.operator.conftest import eventually, start_operator
from tests.operator.test_reclaim import annotation, events


def gated(name: str, namespace: str = "team", *, cpu: str = "1", **kwargs: Any) -> dict[str, Any]:
    """A new pod as the mutating webhook lets it in: pending, behind the admission gate."""
    return pod(name, namespace=namespace, node=None, gated=True, cpu=cpu, **kwargs)


def pods_of(api: Any, namespace: str) -> list[dict[str, Any]]:
    return [p for p in stored(api, PODS) if p["metadata"]["namespace"] == namespace]


def admitted(api: Any, namespace: str) -> list[str]:
    """Pods of `namespace` without the gate that are still running or about to."""
    return sorted(
        p["metadata"]["name"]
        for p in pods_of(api, namespace)
        if not p["spec"].get("schedulingGates")
        and p["status"].get("phase") not in ("Succeeded", "Failed")
    )


def waiting(api: Any, namespace: str) -> list[str]:
    return sorted(
        p["metadata"]["name"] for p in pods_of(api, namespace) if p["spec"].get("schedulingGates")
    )


async def test_pods_wait_beyond_the_runtime_and_go_most_important_first(api, client, tmp_path):
    team = quota("team", namespace="team", min={"cpu": 2}, max={"cpu": 2})
    # All five wait before the operator starts: its first decision sees them together.
    waiting_pods = [gated(f"p{i}", priority=priority) for i, priority in enumerate([1, 5, 3, 4, 2])]
    store(api, team, node("n1", cpu="100"), *waiting_pods)
    operator = await start_operator(tmp_path, api)
    try:
        await eventually(lambda: admitted(api, "team") == ["p1", "p3"], what="p1 and p3 admitted")
        await eventually(
            lambda: annotation(api, "team", keys.WAITING) == "3", what="3 waiting on the quota"
        )

        def messages() -> dict[str, str]:
            waiting = events(api, "WaitingForQuota")
            return {e["involvedObject"]["name"]: e["message"] for e in waiting}

        await eventually(lambda: set(messages()) == {"p0", "p2", "p4"}, what="3 Events")
        # about the pod as `kubectl describe pod` finds them: by its uid too
        uids = {p["metadata"]["name"]: p["metadata"]["uid"] for p in stored(api, PODS)}
        about = {
            e["involvedObject"]["name"]: e["involvedObject"]["uid"]
            for e in events(api, "WaitingForQuota")
        }
        assert about == {name: uids[name] for name in ("p0", "p2", "p4")}
        assert (
            messages()["p2"]
            == "waiting for quota: team runtime cpu 2, used or admitted 2, this pod 1"
        )
        status, text = await operator.get("/metrics")
        assert status == 200
        assert (
            'elastic_quota_group_waiting_pods{group="team",namespace="team",'
            'parent="koordinator-root-quota",tree=""} 3.0'
        ) in text
        assert "elastic_quota_gate_wait_seconds_count 2.0" in text  # p1 and p3 were let in

        # p1 finishes: the next most important (p2, priority 3) goes.
        await client.patch(gated("p1"), {"status": {"phase": "Succeeded"}}, subresource="status")
        await eventually(lambda: admitted(api, "team") == ["p2", "p3"], what="p2 admitted")
        # The group's max grows: the other two go, and nobody waits any more.
        await client.patch(team, {"spec": {"max": {"cpu": "4"}, "min": {"cpu": "4"}}})
        await eventually(lambda: waiting(api, "team") == [], what="everybody admitted")
        await eventually(
            lambda: annotation(api, "team", keys.WAITING) is None, what="the count removed"
        )
    finally:
        await operator.stop()
