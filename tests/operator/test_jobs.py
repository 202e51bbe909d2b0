"""Reclaim takes a Job's pod out of its Job's count before the eviction, and puts it back when
the eviction is refused: a refusal, on demand here (the real control plane's budgets refuse only
when they changed after the watch showed them), leaves a pod its Job still counts. The stories
of Jobs through the real Job controller: tests/control_plane/test_reclaim.py."""

from __future__ import annotations

from typing import Any

from tests.kube import store
from tests.operator.conftest import eventually, start_operator
from tests.operator.test_reclaim import Evictions, borrowing, lender_comes_back

TRACKING = "batch.kubernetes.io/job-tracking"
JOB_UID = "7a9c2d8e-0000-4000-8000-000000000001"


def jobs_pods(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The borrower's pods made by its Job `train`, as the Job controller makes them, and the
    Job."""
    for obj in objects:
        if obj["kind"] == "Pod":
            obj["metadata"]["finalizers"] = [TRACKING]
            obj["metadata"]["ownerReferences"] = [
                {
                    "apiVersion": "batch/v1",
                    "kind": "Job",
                    "name": "train",
                    "uid": JOB_UID,
                    "controller": True,
                }
            ]
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "train", "namespace": "borrower", "uid": JOB_UID},
        "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": []}}},
    }
    return [*objects, job]


def finalizers(api: Any, name: str) -> list[str]:
    return api.get("pods", name, "borrower")["metadata"].get("finalizers") or []


async def test_a_refused_eviction_puts_the_job_tracking_finalizer_back(api, client, tmp_path):
    store(api, *jobs_pods(borrowing()))
    evictions = Evictions(api, client, refuse={"b4"})
    seen: dict[str, list[str]] = {}
    react = evictions.react

    def looking(pod: dict[str, Any]) -> Any:  # the pod as the Eviction API receives it
        seen.setdefault(pod["metadata"]["name"], list(pod["metadata"].get("finalizers") or []))
        return react(pod)

    api.evictions = looking
    operator = await start_operator(tmp_path, api, "--reclaim-delay", "0.5")
    try:
        await lender_comes_back(client)
        await eventually(lambda: {"b4", "b3"} <= set(evictions.names), what="b4 refused, b3 taken")
        # Taken out of the Job's count before each eviction, refused or not.
        assert seen["b4"] == [] and seen["b3"] == [], seen
        # b4 stays, its Job counting it again; b3 went.
        await eventually(lambda: finalizers(api, "b4") == [TRACKING], what="b4's finalizer back")
        assert api.get("pods", "b3", "borrower") is None
    finally:
        await operator.stop()
