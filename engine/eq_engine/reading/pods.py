"""Reading a Pod: the full validation (the pydantic models of `parsing.py`, the rule) and a fast
path for the shapes the API server serves, which gives the same Pod or steps aside.

The operator reads every pod of the cluster at start-up and on every watch event, where
pydantic costs about eight times the JSON decoding of the pod. The fast path reads the same
fields: its metadata, spec and status as the structs of `raw.py` (msgspec checks their types as
it decodes or converts them), and caches what pods of one workload share (their resources,
their timestamps). Whatever it is not sure of (a value of an unexpected type, a timestamp in an
unusual form, a bad quantity) it hands to the full validation, which judges it and names the
field in its error. A property test checks both give the same Pod on varied pods.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from ..model import ObjectError, Pod, ResourceList, gang_of, keys, pack_uid
from . import validation
from .fields import PodFields, RequirementItems, node_terms
from .lookups import as_struct, in_units, metadata, moment, read_fields
from .raw import (
    RawContainer,
    RawNodeSelectorTerm,
    RawPod,
    RawPodSpec,
    RawPodStatus,
    RawResourceList,
    RawResources,
)
from .requests import ContainerRequests, pod_request, shared


def parse_pod(raw: RawPod, *, namespace: str = "", key: str | None = None) -> Pod:
    """A Pod from its Kubernetes dict, with its request computed.

    Also a pod as mutating admission sees it: no name yet (only `generateName`, which then
    stands in for it in the key), and `namespace` from the request when the object has none.
    `key`: its `namespace/name` as the caller already holds it, kept rather than made again
    (an engine holds every pod). Raises `ObjectError` naming the field when the pod cannot be
    read.
    """
    fields = read_fields(raw, fast_pod_fields, validation.pod_fields)
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
        ready=fields.ready,
        node_terms=fields.node_terms,
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


# The fast path.


def _resources(resources: RawResources) -> tuple[Any, Any]:
    """A resources block as hashable items: (requests, limits)."""
    return _items(resources.requests), _items(resources.limits)


def _items(amounts: RawResourceList | None) -> tuple[tuple[str, Any], ...]:
    return tuple(amounts.items()) if amounts else ()


def _container(container: RawContainer) -> tuple[Any, Any, bool]:
    resources = container.resources
    requests, limits = ((), ()) if resources is None else _resources(resources)
    return requests, limits, container.restart_policy == "Always"


@lru_cache(maxsize=16384)
def _request(
    containers: tuple[Any, ...],
    init_containers: tuple[Any, ...],
    overhead: tuple[tuple[str, Any], ...],
    pod_level: tuple[Any, Any] | None,
) -> ResourceList:
    """The pod's request from its resources as written: computed once per workload shape, and
    one dict for the shapes of equal requests (`requests.shared`). Callers never change the dict."""

    def read(requests: Any, limits: Any, sidecar: bool = False) -> ContainerRequests:
        return ContainerRequests(in_units(dict(requests)), in_units(dict(limits)), sidecar)

    request = pod_request(
        containers=[read(*c) for c in containers],
        init_containers=[read(*c) for c in init_containers],
        overhead=in_units(dict(overhead)),
        pod_level=None if pod_level is None else read(*pod_level),
    )
    return shared(request)


def fast_pod_fields(raw: RawPod) -> PodFields:
    """The fields `parsing.pod_fields` reads, without the models; `Unsure` when in doubt."""
    meta = metadata(raw)
    spec = as_struct(raw.get("spec"), RawPodSpec)
    status = as_struct(raw.get("status"), RawPodStatus)
    request = _request(
        tuple(map(_container, spec.containers or ())),
        tuple(map(_container, spec.init_containers or ())),
        _items(spec.overhead),
        None if spec.resources is None else _resources(spec.resources),
    )
    group = spec.scheduling_group
    affinity = spec.affinity.node_affinity if spec.affinity else None
    required = affinity.required_during_scheduling_ignored_during_execution if affinity else None
    return PodFields(
        meta=meta,
        node_name=spec.node_name or "",
        gates=tuple(gate.name for gate in spec.scheduling_gates or ()),
        priority=spec.priority or 0,
        phase=status.phase or "",
        start_time=moment(status.start_time),
        request=request,
        scheduling_group=(group.pod_group_name or "") if group else "",
        ready=any(c.type == "Ready" and c.status == "True" for c in status.conditions or ()),
        node_terms=node_terms(
            tuple(spec.node_selector.items()) if spec.node_selector else (),
            None if required is None else tuple(map(_term, required.node_selector_terms or ())),
        ),
    )


def _term(term: RawNodeSelectorTerm) -> RequirementItems:
    return tuple(
        (r.key or "", r.operator or "", tuple(r.values or ())) for r in term.match_expressions or ()
    )
