"""The operator keeps every group's numbers and every pod's label equal to the engine's."""

from __future__ import annotations

import contextlib
import json
from typing import Any

from eq_engine import (
    EngineConfig,
    ObjectError,
    QuotaEngine,
    format_resource_list,
    parse_node,
    parse_pod,
    parse_quota,
)
from eq_engine.model import keys

from tests.kube import NODES, PODS, QUOTAS, store, stored
from tests.manifests import node, pod, quota
from tests.operator.conftest import eventually, start_operator

RES = {"cpu": 40, "memory": "64Gi"}


def tree() -> list[dict[str, Any]]:
    """A department with two teams, one of them a parent of two sub-teams, pods and nodes."""
    return [
        quota("dept", is_parent=True, min={"cpu": 20}, max=RES),
        quota("team-a", namespace="team-a", parent="dept", min={"cpu": 12}, max=RES),
        quota("team-b", parent="dept", is_parent=True, min={"cpu": 8}, max=RES),
        quota("sub-1", namespace="sub-1", parent="team-b", min={"cpu": 4}, max=RES),
        quota("sub-2", namespace="sub-2", parent="team-b", min={"cpu": 4}, max=RES),
        *(pod(f"a-{i}", namespace="team-a", cpu="4", priority=i) for i in range(4)),
        pod("s1-0", namespace="sub-1", cpu="3"),
        pod("s2-0", namespace="sub-2", cpu="6", node=None),
        pod("dns", namespace="kube-system", cpu="1"),
        node("n1", cpu="16", memory="64Gi"),
        node("n2", cpu="16", memory="64Gi"),
    ]


def expected(api: Any) -> tuple[dict[str, dict[str, Any]], dict[str, str | None]]:
    """What the engine computes for the objects the emulator holds now."""
    return computed(stored(api, QUOTAS), stored(api, NODES), stored(api, PODS))


def computed(
    quotas: list[dict[str, Any]], nodes: list[dict[str, Any]], pods: list[dict[str, Any]]
) -> tuple[dict[str, dict[str, Any]], dict[str, str | None]]:
    """Every group's fields and every pod's label as the engine computes them."""
    engine = QuotaEngine(EngineConfig())
    feeds = (
        (quotas, parse_quota, engine.set_quota),
        (nodes, parse_node, engine.set_node),
        (pods, parse_pod, engine.set_pod),
    )
    for objects, parse, feed in feeds:
        for raw in objects:
            with contextlib.suppress(ObjectError):  # unreadable objects count nowhere
                feed(parse(raw))  # type: ignore[operator]
    engine.recompute()
    groups = {}
    for status in engine.statuses():
        runtime = status.runtime
        groups[status.name] = {
            keys.RUNTIME: None if runtime is None else format_resource_list(runtime),
            keys.REQUEST: format_resource_list(status.request),
            keys.USED: format_resource_list(status.used),
            "status.used": format_resource_list(status.used),
        }
    labels = {p.key: label for p, _, label in engine.pods()}
    return groups, labels


def actual(api: Any) -> tuple[dict[str, dict[str, Any]], dict[str, str | None]]:
    labels = {
        f"{raw['metadata']['namespace']}/{raw['metadata']['name']}": (
            raw["metadata"].get("labels") or {}
        ).get(keys.CAPACITY)
        for raw in stored(api, PODS)
    }
    return actual_groups(api), labels


def actual_groups(api: Any) -> dict[str, dict[str, Any]]:
    """Every group's fields as its object holds them."""
    return {raw["metadata"]["name"]: group_fields(raw) for raw in stored(api, QUOTAS)}


def group_fields(raw: dict[str, Any]) -> dict[str, Any]:
    """A quota's annotations the operator writes (as JSON values) and its `status.used`."""
    annotations = raw["metadata"].get("annotations") or {}
    return {
        **{
            k: json.loads(annotations[k]) if k in annotations else None
            for k in (keys.RUNTIME, keys.REQUEST, keys.USED)
        },
        "status.used": (raw.get("status") or {}).get("used"),
    }


def differences(api: Any) -> list[str]:
    """What differs between the objects and the engine's numbers (empty: converged)."""
    want_groups, want_labels = expected(api)
    have_groups, have_labels = actual(api)
    return [
        f"{k}: want {v}, have {have_groups.get(k)}"
        for k, v in want_groups.items()
        if have_groups.get(k) != v
    ] + [
        f"{k}: want {v}, have {have_labels.get(k)}"
        for k, v in want_labels.items()
        if have_labels.get(k) != v
    ]


def converged(api: Any) -> bool:
    want_groups, want_labels = expected(api)
    have_groups, have_labels = actual(api)
    # Objects the engine cannot read are in neither: they are reported, not written.
    return all(have_groups.get(k) == v for k, v in want_groups.items()) and all(
        have_labels.get(k) == v for k, v in want_labels.items()
    )


async def test_a_tree_converges_and_follows_every_change(api, client, tmp_path):
    store(api, *tree())
    operator = await start_operator(tmp_path, api)
    try:
        await eventually(
            lambda: converged(api), what="the first convergence", explain=lambda: differences(api)
        )
        groups, labels = actual(api)
        assert set(groups) >= {
            "koordinator-root-quota",
            "koordinator-system-quota",
            "koordinator-default-quota",
        }  # the built-ins were created
        assert groups["team-a"][keys.USED] == {"cpu": "16", "memory": "0"}
        assert labels["team-a/a-3"] == "in-quota" and labels["team-a/a-0"] == "over-quota"

        changes = [
            client.create(pod("a-4", namespace="team-a", cpu="2", priority=9)),
            client.patch(
                pod("a-0", namespace="team-a"),
                {"status": {"phase": "Succeeded"}},
                subresource="status",
            ),
            client.delete(pod("s1-0", namespace="sub-1")),
            client.patch(quota("team-a", namespace="team-a"), {"spec": {"min": {"cpu": 4}}}),
            client.patch(quota("sub-1", namespace="sub-1"), {"spec": {"max": {"cpu": 2}}}),
            client.patch(
                quota("sub-2", namespace="sub-2"), {"metadata": {"labels": {keys.PARENT: "dept"}}}
            ),
            client.create(node("n3", cpu="8", memory="32Gi")),
        ]
        for change in changes:
            await change
            await eventually(
                lambda: converged(api),
                what="convergence after a change",
                explain=lambda: differences(api),
            )
        assert actual(api)[1]["team-a/a-0"] is None  # a finished pod loses its label
        for raw in stored(api, QUOTAS) + stored(api, PODS):  # nothing of Kopf's on any object
            metadata = raw["metadata"]
            assert not metadata.get("finalizers")
            assert not [k for k in metadata.get("annotations") or {} if "kopf" in k]
    finally:
        await operator.stop()
