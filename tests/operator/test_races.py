"""Interleavings of the watch with the operator's own awaits: only the watch changes the
engine, so what arrives while a request is in flight is never undone by the operator."""

from __future__ import annotations

from typing import Any

from eq_engine import Pod
from eq_operator.writing import Placement

from tests.manifests import node, pod, quota
from tests.operator.inprocess import in_process
from tests.waiting import eventually


def gated(name: str) -> dict[str, Any]:
    return pod(name, namespace="team", node=None, gated=True, cpu="1")


def ungated(api: Any) -> list[str]:
    return sorted(
        p["metadata"]["name"] for p in api.objects("pods") if not p["spec"].get("schedulingGates")
    )


async def test_a_pod_deleted_while_its_gate_lift_is_in_flight_holds_no_budget(api):
    """The lift's answer comes after the watch's DELETED: no ghost keeps the group's room."""
    api.seed(quota("team", namespace="team", min={"cpu": 1}, max={"cpu": 1}), node("n1", cpu="8"))
    api.seed(gated("first"))
    async with in_process(api) as op:
        lift = op.writer.lift_gate

        async def lift_then_deleted(admitted: Pod, placement: Placement | None) -> bool:
            lifted = await lift(admitted, placement)
            # Deleted at once; the watch's DELETED comes before this answer is read.
            api.storage.remove(api.catalog.named("pods"), "team/first")
            await eventually(lambda: op.view.engine.pod(admitted.key) is None, what="DELETED")
            return lifted

        op.writer.lift_gate = lift_then_deleted  # type: ignore[method-assign]
        await op.loop.step()
        await op.admitter.settled()  # the lift goes out beside the loop
        op.writer.lift_gate = lift  # type: ignore[method-assign]
        api.seed(gated("second"))
        op.run()
        await op.converged(lambda: "second" in ungated(api), "the second pod admitted")
