"""Reading a Pod: the full validation (the pydantic models of `parsing.py`, the rule) and a fast
path for the shapes the API server serves, which gives the same Pod or steps aside.

The operator reads every pod of the cluster at start-up and on every watch event, where
pydantic costs about eight times the JSON decoding of the pod. The fast path reads the same
fields with plain dict lookups and caches what pods of one workload share (their resources,
their timestamps). Whatever it is not sure of (a value of an unexpected type, a timestamp in
an unusual form, a bad quantity) it hands to the full validation, which judges it and names
the field in its error. A property test checks both give the same Pod on varied pods.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from datetime import datetime
from functools import lru_cache
from typing import Any

from . import keys
from .errors import ObjectError, QuantityError
from .gangs import gang_of
from .objects import Pod, pack_uid
from .parsing import PodFields, pod_fields
from .quantities import ResourceList, resource_list
from .raw import RawPod
from .requests import ContainerRequests, pod_request


def parse_pod(raw: RawPod, *, namespace: str = "", key: str | None = None) -> Pod:
    """A Pod from its Kubernetes dict, with its request computed.

    Also a pod as mutating admission sees it: no name yet (only `generateName`, which then
    stands in for it in the key), and `namespace` from the request when the object has none.
    `key`: its `namespace/name` as the caller already holds it, kept rather than made again
    (an engine holds every pod). Raises `ObjectError` naming the field when the pod cannot be
    read.
    """
    try:
        fields = fast_pod_fields(raw)
    except _Unsure:
        fields = pod_fields(raw)
    return _build(fields, namespace, key)


def _build(fields: PodFields, namespace: str, key: str | None = None) -> Pod:
    namespace = sys.intern(fields.namespace or namespace)
    if not fields.name and not fields.generate_name:
        raise ObjectError("Pod", f"{namespace}/", "metadata.name", "required (or generateName)")
    return Pod(
        key=key or sys.intern(f"{namespace}/{fields.name or fields.generate_name}"),
        packed_uid=pack_uid(fields.uid),
        namespace=namespace,
        priority=fields.priority,
        start_time=fields.start_time,
        node_name=sys.intern(fields.node_name),
        terminating=fields.terminating,
        phase=sys.intern(fields.phase),
        request=_shared(tuple(sorted(fields.request.items()))),
        scheduling_gates=_gates(tuple(map(sys.intern, fields.gates))) if fields.gates else (),
        created=fields.created or 0.0,
        node_pinned=fields.controller_kind == "DaemonSet" or fields.mirror,
        gang=gang_of(namespace, fields.labels, fields.annotations, fields.scheduling_group),
        labels=_shared_labels(_label_items(fields.labels)),
    )


def _label_items(labels: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """The labels but the capacity label, as a key of `_shared_labels`. Not sorted: the API
    server writes a map's keys in order, and labels met in another order only make one more
    (equal) dict."""
    if keys.CAPACITY in labels:
        return tuple(item for item in labels.items() if item[0] != keys.CAPACITY)
    return tuple(labels.items())


@lru_cache(maxsize=1024)
def _gates(names: tuple[str, ...]) -> tuple[str, ...]:
    return names


@lru_cache(maxsize=65536)
def _shared_labels(items: tuple[tuple[str, str], ...]) -> Mapping[str, str]:
    """One dict for every pod with the same labels (the replicas of a workload)."""
    return dict(items)


@lru_cache(maxsize=65536)
def _shared(items: tuple[tuple[str, int], ...]) -> ResourceList:
    """One dict for every pod with the same request (pods of a Deployment are alike)."""
    return dict(items)


# The fast path.


class _Unsure(Exception):
    """The fast path met something only the full validation may judge."""


_EMPTY: dict[str, Any] = {}


def _map(holder: Any, key: str) -> dict[str, Any]:
    value = holder.get(key)
    if value is None:
        return _EMPTY
    if type(value) is not dict:
        raise _Unsure
    return value


def _list(holder: Mapping[str, Any], key: str) -> list[Any]:
    value = holder.get(key)
    if value is None:
        return []
    if type(value) is not list:
        raise _Unsure
    return value


def _text(holder: Mapping[str, Any], key: str) -> str:
    value = holder.get(key)
    if value is None:
        return ""
    if type(value) is not str:
        raise _Unsure
    return value


def _strings(holder: Mapping[str, Any], key: str) -> dict[str, str]:
    value = _map(holder, key)
    for item in value.values():
        if type(item) is not str:
            raise _Unsure
    return value


_RFC3339 = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,6})?(Z|[+-]\d\d:\d\d)")


@lru_cache(maxsize=4096)
def _moment(text: str) -> float:
    """Seconds since the epoch of an RFC 3339 timestamp with a zone, as the API server
    writes them; anything else goes to the full validation."""
    if not _RFC3339.fullmatch(text):
        raise _Unsure
    try:
        return datetime.fromisoformat(text).timestamp()
    except ValueError:
        raise _Unsure from None


def _timestamp(holder: Mapping[str, Any], key: str) -> float | None:
    value = holder.get(key)
    if value is None:
        return None
    if type(value) is not str:
        raise _Unsure
    return _moment(value)


def _resources(holder: Mapping[str, Any]) -> tuple[Any, Any]:
    """A resources block as hashable items: (requests, limits)."""
    return _items(_map(holder, "requests")), _items(_map(holder, "limits"))


def _items(amounts: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
    return tuple(amounts.items()) if amounts else ()


def _container(container: Any) -> tuple[Any, Any, bool]:
    if type(container) is not dict:
        raise _Unsure
    policy = container.get("restartPolicy")
    if policy is not None and type(policy) is not str:
        raise _Unsure
    requests, limits = _resources(_map(container, "resources"))
    return requests, limits, policy == "Always"


@lru_cache(maxsize=16384)
def _request(
    containers: tuple[Any, ...],
    init_containers: tuple[Any, ...],
    overhead: tuple[tuple[str, Any], ...],
    pod_level: tuple[Any, Any] | None,
) -> dict[str, int]:
    """The pod's request from its resources as written: computed once per workload shape.
    Callers never change the dict."""

    def read(requests: Any, limits: Any, sidecar: bool = False) -> ContainerRequests:
        return ContainerRequests(_amounts(requests), _amounts(limits), sidecar)

    return pod_request(
        containers=[read(*c) for c in containers],
        init_containers=[read(*c) for c in init_containers],
        overhead=_amounts(overhead),
        pod_level=None if pod_level is None else read(*pod_level),
    )


def _amounts(items: tuple[tuple[str, Any], ...]) -> dict[str, int]:
    try:
        return resource_list(dict(items))
    except (QuantityError, TypeError, ValueError):
        raise _Unsure from None


def fast_pod_fields(raw: RawPod) -> PodFields:
    """The fields `parsing.pod_fields` reads, by plain lookups; `_Unsure` when in doubt."""
    if type(raw) is not dict:
        raise _Unsure
    metadata = raw.get("metadata")
    if type(metadata) is not dict:
        raise _Unsure
    spec, status = _map(raw, "spec"), _map(raw, "status")
    controller_kind: str | None = None  # the first controller's, as `_Metadata` reads it
    for owner in _list(metadata, "ownerReferences"):
        if type(owner) is not dict:
            raise _Unsure
        controller = owner.get("controller")
        if controller is not None and type(controller) is not bool:
            raise _Unsure
        kind = _text(owner, "kind")
        if controller and controller_kind is None:
            controller_kind = kind
    gates = []
    for gate in _list(spec, "schedulingGates"):
        if type(gate) is not dict or type(gate.get("name")) is not str:
            raise _Unsure
        gates.append(gate["name"])
    priority = spec.get("priority")
    if priority is not None and type(priority) is not int:
        raise _Unsure
    pod_level = spec.get("resources")
    if pod_level is not None and type(pod_level) is not dict:
        raise _Unsure
    try:
        request = _request(
            tuple(map(_container, _list(spec, "containers"))),
            tuple(map(_container, _list(spec, "initContainers"))),
            _items(_map(spec, "overhead")),
            None if pod_level is None else _resources(pod_level),
        )
    except TypeError:  # an unhashable quantity
        raise _Unsure from None
    annotations = _strings(metadata, "annotations")
    return PodFields(
        namespace=_text(metadata, "namespace"),
        name=_text(metadata, "name"),
        generate_name=_text(metadata, "generateName"),
        uid=_text(metadata, "uid"),
        labels=_strings(metadata, "labels"),
        annotations=annotations,
        mirror=keys.MIRROR in annotations,
        terminating=_timestamp(metadata, "deletionTimestamp") is not None,
        created=_timestamp(metadata, "creationTimestamp"),
        controller_kind=controller_kind or "",
        node_name=_text(spec, "nodeName"),
        gates=tuple(gates),
        priority=priority or 0,
        phase=_text(status, "phase"),
        start_time=_timestamp(status, "startTime"),
        request=request,
        scheduling_group=_text(_map(spec, "schedulingGroup"), "podGroupName"),
    )
