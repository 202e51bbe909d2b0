"""`benchmarks.scale`'s churn: pending pods bound to nodes at a steady rate, inside the
emulator's process (as kube-scheduler's bindings would come), and the pods as it leaves them."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from benchmarks.looking import TICK, Groups
from tests.apiserver import ApiServer


def bound(pod: dict[str, Any]) -> dict[str, Any]:
    """A pending pod as the churn leaves it: bound to a node and running."""
    spec = {**pod["spec"], "nodeName": "node-0001"}
    status = {**pod["status"], "phase": "Running", "startTime": "2026-02-01T00:00:00Z"}
    return {**pod, "spec": spec, "status": status}


def churned(pods: list[dict[str, Any]], total: int) -> list[dict[str, Any]]:
    """The pods after the churn has bound the first `total` pending ones."""
    result, left = [], total
    for pod in pods:
        if left and not pod["spec"].get("nodeName"):
            pod, left = bound(pod), left - 1
        result.append(pod)
    return result


async def churn(
    api: ApiServer,
    pending: list[tuple[str, str]],
    *,
    rate: float,
    groups_after: dict[str, dict[str, Any]],
    seconds: float,
) -> dict[str, float]:
    """Bind pending pods to nodes at `rate` a second for `seconds`: each is a watch event
    the operator must turn into a label write, and its group's changed numbers into
    annotation and status writes. Returns the rates, the lag, the group writes per second
    and when every group was right again (`groups_after`: what the engine computes then),
    looked at every TICK from the churn's end, while the labels are still being written."""
    resource = api.catalog.named("pods")
    base = api.count("patch", "pods")

    def group_writes() -> int:
        return api.count("patch", "elasticquotas") + api.count("patch", "elasticquotas", "status")

    groups_base = group_writes()
    groups = Groups(groups_after)
    groups.right(api)  # the first look reads every quota: before the churn, not after it
    total = min(len(pending), int(rate * seconds))
    cpu = time.process_time()
    start, done, backlog = time.perf_counter(), 0, 0
    while done < total:
        due = min(total, int((time.perf_counter() - start) * rate))
        for namespace, name in pending[done:due]:
            stored = api.get("pods", name, namespace)
            assert stored is not None
            api.storage.put(resource, bound(stored), type="MODIFIED")
        done = max(done, due)
        backlog = max(backlog, done - (api.count("patch", "pods") - base))
        await asyncio.sleep(0.01)
    emitted = time.perf_counter() - start
    drained = right = None
    writes, next_look = 0, emitted
    while drained is None or right is None:
        now = time.perf_counter() - start
        if now > 600:
            raise TimeoutError("the labels or the groups did not settle after the churn")
        if drained is None:
            backlog = max(backlog, total - (api.count("patch", "pods") - base))
            if api.count("patch", "pods") - base >= total:
                drained, writes = now, group_writes() - groups_base
        if right is None and now >= next_look:
            next_look += TICK  # due every TICK from the churn's end, not drifting
            right = now if groups.right(api) else None
        await asyncio.sleep(0.01)
    assert drained is not None and right is not None
    return {
        "group_writes": writes / drained,
        "bound": total,
        "offered": total / emitted,
        "kept_up": total / drained,
        "drain": drained - emitted,
        "groups": right - emitted,
        "backlog": backlog,
        "seconds": max(drained, right),
        "emulator_cpu": time.process_time() - cpu,
    }
