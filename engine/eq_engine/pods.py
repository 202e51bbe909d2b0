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

import sys
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from . import keys
from .errors import ObjectError
from .gangs import gang_of
from .lookups import Unsure, in_units, listing, mapping, metadata, quantities, text, timestamp
from .objects import Pod, pack_uid
from .parsing import PodFields, pod_fields
from .quantities import ResourceList
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
        fields = fast_pod_fields(raw)  # its request one of `_shared`'s already
    except Unsure:
        fields = pod_fields(raw)
        fields = fields._replace(request=_shared(tuple(sorted(fields.request.items()))))
    return _build(fields, namespace, key)


def _build(fields: PodFields, namespace: str, key: str | None = None) -> Pod:
    meta = fields.meta
    namespace = sys.intern(meta.namespace or namespace)
    if not meta.name and not meta.generate_name:
        raise ObjectError("Pod", f"{namespace}/", "metadata.name", "required (or generateName)")
    return Pod(
        key=key or sys.intern(f"{namespace}/{meta.name or meta.generate_name}"),
        packed_uid=pack_uid(meta.uid),
        namespace=namespace,
        priority=fields.priority,
        start_time=fields.start_time,
        node_name=sys.intern(fields.node_name),
        terminating=meta.deleted is not None,
        phase=sys.intern(fields.phase),
        request=fields.request,
        scheduling_gates=_gates(tuple(map(sys.intern, fields.gates))) if fields.gates else (),
        created=meta.created or 0.0,
        # a static pod's mirror, like a DaemonSet's pod, runs where it is
        node_pinned=meta.controller_kind == "DaemonSet" or keys.MIRROR in meta.annotations,
        gang=gang_of(namespace, meta.labels, meta.annotations, fields.scheduling_group),
        labels=_shared_labels(_label_items(meta.labels)),
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


def _resources(holder: Mapping[str, Any]) -> tuple[Any, Any]:
    """A resources block as hashable items: (requests, limits)."""
    return _items(quantities(holder, "requests")), _items(quantities(holder, "limits"))


def _items(amounts: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
    return tuple(amounts.items()) if amounts else ()


def _container(container: Any) -> tuple[Any, Any, bool]:
    if type(container) is not dict:
        raise Unsure
    policy = container.get("restartPolicy")
    if policy is not None and type(policy) is not str:
        raise Unsure
    requests, limits = _resources(mapping(container, "resources"))
    return requests, limits, policy == "Always"


@lru_cache(maxsize=16384)
def _request(
    containers: tuple[Any, ...],
    init_containers: tuple[Any, ...],
    overhead: tuple[tuple[str, Any], ...],
    pod_level: tuple[Any, Any] | None,
) -> ResourceList:
    """The pod's request from its resources as written: computed once per workload shape, and
    one dict for the shapes of equal requests (`_shared`). Callers never change the dict."""

    def read(requests: Any, limits: Any, sidecar: bool = False) -> ContainerRequests:
        return ContainerRequests(in_units(dict(requests)), in_units(dict(limits)), sidecar)

    request = pod_request(
        containers=[read(*c) for c in containers],
        init_containers=[read(*c) for c in init_containers],
        overhead=in_units(dict(overhead)),
        pod_level=None if pod_level is None else read(*pod_level),
    )
    return _shared(tuple(sorted(request.items())))


def fast_pod_fields(raw: RawPod) -> PodFields:
    """The fields `parsing.pod_fields` reads, by plain lookups; `Unsure` when in doubt."""
    meta = metadata(raw)
    spec, status = mapping(raw, "spec"), mapping(raw, "status")
    gates = []
    for gate in listing(spec, "schedulingGates"):
        if type(gate) is not dict or type(gate.get("name")) is not str:
            raise Unsure
        gates.append(gate["name"])
    priority = spec.get("priority")
    if priority is not None and type(priority) is not int:
        raise Unsure
    pod_level = spec.get("resources")
    if pod_level is not None and type(pod_level) is not dict:
        raise Unsure
    try:
        request = _request(
            tuple(map(_container, listing(spec, "containers"))),
            tuple(map(_container, listing(spec, "initContainers"))),
            _items(quantities(spec, "overhead")),
            None if pod_level is None else _resources(pod_level),
        )
    except TypeError:  # an unhashable quantity
        raise Unsure from None
    return PodFields(
        meta=meta,
        node_name=text(spec, "nodeName"),
        gates=tuple(gates),
        priority=priority or 0,
        phase=text(status, "phase"),
        start_time=timestamp(status, "startTime"),
        request=request,
        scheduling_group=text(mapping(spec, "schedulingGroup"), "podGroupName"),
    )
