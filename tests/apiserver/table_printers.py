"""Each kind's Table columns and row cells (tables.py renders them), as kube-apiserver 1.32 has
them.

- Custom resources: the version's `additionalPrinterColumns`, evaluated as the tableconvertor
  does (`Name` first; a JSONPath's first result; missing or mistyped values are `null` cells;
  `string` cells print maps and lists as compact JSON; `date` cells are ages; `Age` only when
  the CRD declares no column).
- Built-ins, as pkg/printers/internalversion prints them (always wide: kubectl hides the
  `priority` 1 columns itself): pods (NAME READY STATUS RESTARTS AGE | IP NODE NOMINATED NODE
  READINESS GATES, with the SchedulingGated and Terminating statuses), core Events, nodes,
  namespaces, Deployments. Other kinds get the default convertor's `Name` and `Created At`.
"""

from __future__ import annotations

import datetime
import json
from typing import Any

from . import jsonpath
from .table_columns import JSON, NAME, Cells, Column, age, named

Printing = tuple[tuple[Column, ...], Cells]
"""A kind's columns, and the cells of its rows."""

# Custom resources.


def crd_columns(version: JSON) -> tuple[Column, ...]:
    declared = version.get("additionalPrinterColumns") or []
    if not declared:  # serveDefaultColumnsIfEmpty
        declared = [{"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}]
    return (
        NAME,
        *(
            Column(
                c["name"],
                c["type"],
                c.get("format", ""),
                c.get("description", ""),
                int(c.get("priority", 0)),
                jsonpath.parse(c["jsonPath"]),
            )
            for c in declared
        ),
    )


def _custom_cell(column: Column, obj: JSON, now: datetime.datetime) -> Any:
    value = jsonpath.first(column.path, obj)
    if value is jsonpath.MISSING:
        return None
    if column.type == "string":
        if isinstance(value, dict | list):
            return json.dumps(value, separators=(",", ":"))
        if isinstance(value, bool):
            return "true" if value else "false"
        return "" if value is None else str(value)
    if column.type == "integer":
        return (
            int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
        )
    if column.type == "number":
        return (
            float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
        )
    if column.type == "boolean":
        return value if isinstance(value, bool) else None
    if column.type == "date":
        return age(value, now) if isinstance(value, str) else None
    return None


def crd_printing(columns: tuple[Column, ...]) -> Printing:
    """The columns `crd_columns` read from a CRD, with the cells of its objects."""

    def cells(obj: JSON, now: datetime.datetime) -> list[Any]:
        return [obj["metadata"]["name"], *(_custom_cell(c, obj, now) for c in columns[1:])]

    return columns, cells


# Built-ins.


def _pod_cells(pod: JSON, now: datetime.datetime) -> list[Any]:
    spec, status, metadata = pod.get("spec") or {}, pod.get("status") or {}, pod["metadata"]
    reason = status.get("reason") or status.get("phase") or ""
    for condition in status.get("conditions") or ():
        if condition.get("type") == "PodScheduled" and condition.get("reason") == "SchedulingGated":
            reason = "SchedulingGated"
    restarts = ready = 0
    running = False
    for container in reversed(status.get("containerStatuses") or []):
        restarts += int(container.get("restartCount") or 0)
        state = container.get("state") or {}
        if (state.get("waiting") or {}).get("reason"):
            reason = state["waiting"]["reason"]
        elif (state.get("terminated") or {}).get("reason"):
            reason = state["terminated"]["reason"]
        elif container.get("ready") and "running" in state:
            running = True
            ready += 1
    if reason == "Completed" and running:
        reason = "Running"
    if metadata.get("deletionTimestamp") and status.get("phase") not in ("Succeeded", "Failed"):
        reason = "Terminating"
    gates = spec.get("readinessGates") or []
    return [
        metadata["name"],
        f"{ready}/{len(spec.get('containers') or [])}",
        reason,
        str(restarts),
        age(metadata.get("creationTimestamp"), now),
        status.get("podIP") or "<none>",
        spec.get("nodeName") or "<none>",
        status.get("nominatedNodeName") or "<none>",
        f"0/{len(gates)}" if gates else "<none>",
    ]


_POD_COLUMNS = (
    NAME,
    Column("Ready", description="The aggregate readiness state of this pod for accepting traffic."),
    Column("Status", description="The aggregate status of the containers in this pod."),
    Column(
        "Restarts",
        description="The number of times the containers in this pod have been restarted and "
        "when the last container in this pod has restarted.",
    ),
    Column(
        "Age",
        description="CreationTimestamp is a timestamp representing the server time when this "
        "object was created.",
    ),
    Column("IP", priority=1, description="IP address allocated to the pod."),
    Column("Node", priority=1, description="Name of the node the pod is assigned to."),
    Column("Nominated Node", priority=1, description="Name of the node the pod is nominated to."),
    Column("Readiness Gates", priority=1, description="Pod readiness gates."),
)


def _event_cells(event: JSON, now: datetime.datetime) -> list[Any]:
    first_seen = age(event.get("firstTimestamp") or event.get("eventTime"), now)
    last_seen = age(event["lastTimestamp"], now) if event.get("lastTimestamp") else first_seen
    count = event.get("count") or 1
    if event.get("series"):
        last_seen = age(event["series"].get("lastObservedTime"), now)
        count = event["series"].get("count", count)
    involved = event.get("involvedObject") or {}
    kind = str(involved.get("kind", "")).lower()
    target = f"{kind}/{involved['name']}" if involved.get("name") else kind
    source = event.get("source") or {}
    if source.get("component"):
        origin = ", ".join(v for v in (source["component"], source.get("host")) if v)
    else:
        origin = ", ".join(
            v for v in (event.get("reportingComponent"), event.get("reportingInstance")) if v
        )
    return [
        last_seen,
        event.get("type", ""),
        event.get("reason", ""),
        target,
        involved.get("fieldPath", ""),
        origin,
        str(event.get("message", "")).strip(),
        first_seen,
        int(count),
        event["metadata"]["name"],
    ]


_EVENT_COLUMNS = named(
    "Last Seen",
    "Type",
    "Reason",
    "Object",
    "Message",
    wide=("Subobject", "Source", "First Seen", "Count", "Name"),
    order=(
        "Last Seen",
        "Type",
        "Reason",
        "Object",
        "Subobject",
        "Source",
        "Message",
        "First Seen",
        "Count",
        "Name",
    ),
)


def _node_cells(node: JSON, now: datetime.datetime) -> list[Any]:
    status, metadata = node.get("status") or {}, node["metadata"]
    ready = [c for c in status.get("conditions") or () if c.get("type") == "Ready"]
    state = "Unknown"
    if ready:
        state = {"True": "Ready", "False": "NotReady"}.get(ready[0].get("status"), "Unknown")
    if (node.get("spec") or {}).get("unschedulable"):
        state += ",SchedulingDisabled"
    prefix = "node-role.kubernetes.io/"
    roles = sorted(k[len(prefix) :] for k in metadata.get("labels") or {} if k.startswith(prefix))
    info = status.get("nodeInfo") or {}
    addresses = {a.get("type"): a.get("address") for a in status.get("addresses") or ()}
    return [
        metadata["name"],
        state,
        ",".join(roles) or "<none>",
        age(metadata.get("creationTimestamp"), now),
        info.get("kubeletVersion", ""),
        addresses.get("InternalIP") or "<none>",
        addresses.get("ExternalIP") or "<none>",
        info.get("osImage") or "<unknown>",
        info.get("kernelVersion") or "<unknown>",
        info.get("containerRuntimeVersion") or "<unknown>",
    ]


_NODE_COLUMNS = (
    NAME,
    *named(
        "Status",
        "Roles",
        "Age",
        "Version",
        wide=("Internal-IP", "External-IP", "OS-Image", "Kernel-Version", "Container-Runtime"),
    ),
)


def _namespace_cells(namespace: JSON, now: datetime.datetime) -> list[Any]:
    metadata = namespace["metadata"]
    phase = (namespace.get("status") or {}).get("phase", "")
    return [metadata["name"], phase, age(metadata.get("creationTimestamp"), now)]


def _deployment_cells(deployment: JSON, now: datetime.datetime) -> list[Any]:
    spec, status, metadata = (
        deployment.get("spec") or {},
        deployment.get("status") or {},
        deployment["metadata"],
    )
    containers = ((spec.get("template") or {}).get("spec") or {}).get("containers") or []
    selector = (spec.get("selector") or {}).get("matchLabels") or {}
    return [
        metadata["name"],
        f"{status.get('readyReplicas', 0)}/{spec.get('replicas', 1)}",
        int(status.get("updatedReplicas", 0)),
        int(status.get("availableReplicas", 0)),
        age(metadata.get("creationTimestamp"), now),
        ",".join(c.get("name", "") for c in containers),
        ",".join(c.get("image", "") for c in containers),
        ",".join(f"{k}={v}" for k, v in sorted(selector.items())) or "<none>",
    ]


_DEPLOYMENT_COLUMNS = (
    NAME,
    *named("Ready", "Up-to-date", "Available", "Age", wide=("Containers", "Images", "Selector")),
)


def _default_cells(obj: JSON, now: datetime.datetime) -> list[Any]:
    return [obj["metadata"]["name"], obj["metadata"].get("creationTimestamp")]


_BUILTIN: dict[str, Printing] = {
    "pods": (_POD_COLUMNS, _pod_cells),
    "events": (_EVENT_COLUMNS, _event_cells),
    "nodes": (_NODE_COLUMNS, _node_cells),
    "namespaces": (
        (NAME, Column("Status", description="The status of the namespace"), Column("Age")),
        _namespace_cells,
    ),
    "deployments": (_DEPLOYMENT_COLUMNS, _deployment_cells),
}
_DEFAULT: Printing = ((NAME, Column("Created At", "date")), _default_cells)


def builtin_printing(plural: str) -> Printing:
    """The columns and cells of a built-in kind (its plural), or the default convertor's."""
    return _BUILTIN.get(plural, _DEFAULT)
