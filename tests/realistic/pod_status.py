"""A pod's status as kubelet (or the scheduler, for a pod not bound yet) reports it in each
phase: conditions, container statuses, IPs, QoS class, kubelet's eviction."""

from __future__ import annotations

from typing import Any

from .metadata import CREATED, FINISHED, STARTED, digest, ip

EVICTION = (
    "The node was low on resource: memory. Threshold quantity: 100Mi, available: 94208Ki. "
    "Container {container} was using 1873920Ki, request is {request}, has larger consumption "
    "of memory. "
)


def _qos(resources: dict[str, Any]) -> str:
    requests, limits = resources.get("requests", {}), resources.get("limits", {})
    if not requests and not limits:
        return "BestEffort"
    guaranteed = all(
        limits.get(r) and requests.get(r, limits[r]) == limits[r] for r in ("cpu", "memory")
    )
    return "Guaranteed" if guaranteed else "Burstable"


def _condition(
    kind: str, status: bool, time: str, reason: str | None = None, message: str | None = None
) -> dict[str, Any]:
    condition: dict[str, Any] = {"lastProbeTime": None, "lastTransitionTime": time}
    if message:
        condition["message"] = message
    if reason:
        condition["reason"] = reason
    condition["status"] = "True" if status else "False"
    condition["type"] = kind
    return condition


def _container_status(container: dict[str, Any], key: str, state: dict[str, Any]) -> dict[str, Any]:
    running = "running" in state
    status: dict[str, Any] = {
        "containerID": "containerd://" + digest("container", key).hex(),
        "image": container["image"],
        "imageID": container["image"].split(":")[0] + "@sha256:" + digest(container["image"]).hex(),
        "lastState": {},
        "name": container["name"],
        "ready": running,
        "restartCount": 0,
        "started": running,
        "state": state,
    }
    status["volumeMounts"] = [
        {**mount, "recursiveReadOnly": "Disabled"} for mount in container.get("volumeMounts", [])
    ]
    return status


def pod_status(spec: dict[str, Any], key: str, phase: str, *, evicted: bool) -> dict[str, Any]:
    """The status kubelet (or the scheduler, for a pod not bound yet) reports in `phase`."""
    qos = _qos(spec["containers"][0].get("resources", {}))
    if phase == "Pending" and "nodeName" not in spec:
        gated = bool(spec.get("schedulingGates"))
        unscheduled = (
            "Scheduling is blocked due to non-empty scheduling gates"
            if gated
            else "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are "
            "available: 3 No preemption victims found for incoming pod."
        )
        reason = "SchedulingGated" if gated else "Unschedulable"
        condition = _condition("PodScheduled", False, CREATED, reason, unscheduled)
        return {"conditions": [condition], "phase": "Pending", "qosClass": qos}
    finished = phase in ("Succeeded", "Failed")
    if phase == "Pending":  # bound, the image is being pulled
        state: dict[str, Any] = {"waiting": {"reason": "ContainerCreating"}}
    elif finished:
        code, why = (0, "Completed") if phase == "Succeeded" else (137 if evicted else 1, "Error")
        state = {
            "terminated": {
                "containerID": "containerd://" + digest("container", key).hex(),
                "exitCode": code,
                "finishedAt": FINISHED,
                "reason": why,
                "startedAt": STARTED,
            }
        }
    else:
        state = {"running": {"startedAt": STARTED}}
    ready, end = phase == "Running", FINISHED if finished else STARTED
    not_ready = "PodCompleted" if finished else ("ContainersNotReady" if not ready else None)
    message = (
        None
        if ready or finished
        else f"containers with unready status: [{spec['containers'][0]['name']}]"
    )
    conditions = [
        _condition("PodReadyToStartContainers", not finished and phase != "Pending", end),
        _condition("Initialized", True, CREATED, "PodCompleted" if finished else None),
        _condition("Ready", ready, end, not_ready, message),
        _condition("ContainersReady", ready, end, not_ready, message),
        _condition("PodScheduled", True, CREATED),
    ]
    host = ip("10.0", spec["nodeName"])
    pod_ip = ip("10.244", key)
    status: dict[str, Any] = {"conditions": conditions}
    if phase != "Pending":
        status["containerStatuses"] = [_container_status(spec["containers"][0], key, state)]
    status.update(hostIP=host, hostIPs=[{"ip": host}])
    if evicted:
        request = spec["containers"][0].get("resources", {}).get("requests", {}).get("memory", "0")
        message = EVICTION.format(container=spec["containers"][0]["name"], request=request)
        conditions.insert(
            0, _condition("DisruptionTarget", True, FINISHED, "TerminationByKubelet", message)
        )
        status.update(message=message, reason="Evicted")
    status["phase"] = phase
    if phase == "Running" or (finished and not evicted):
        status.update(podIP=pod_ip, podIPs=[{"ip": pod_ip}])
    status.update(qosClass=qos, startTime=STARTED)
    return status
