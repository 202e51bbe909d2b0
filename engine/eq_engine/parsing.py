"""Reading ElasticQuota, Pod and Node objects from the dicts Kubernetes serves.

Pydantic reads the few fields the engine needs (those `raw.py` names) and ignores everything
else, so objects from any Kubernetes version or from Koordinator load unchanged. A malformed
known field raises `ObjectError` naming the object and the field path, e.g.
`ElasticQuota team-a/ml: spec.min: 'lots': not a Kubernetes quantity (resource cpu)`. These
models are the rule for a pod too; `pods.py` adds a fast path that gives the same Pod.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from functools import lru_cache
from typing import Annotated, Any, Final, NamedTuple, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, model_validator

from . import keys
from .errors import ObjectError, QuantityError
from .objects import Node, Quota
from .quantities import ResourceList, resource_list
from .raw import RawElasticQuota, RawNode, RawPod
from .requests import ContainerRequests, pod_request


def _quantities(value: object) -> dict[str, int]:
    if not isinstance(value, Mapping):
        raise ValueError("expected a map of resource names to quantities")
    try:
        return dict(_canonical_items(tuple(value.items())))
    except TypeError:  # an unhashable value: let resource_list name it
        return resource_list(value)


@lru_cache(maxsize=16384)
def _canonical_items(items: tuple[tuple[str, Any], ...]) -> tuple[tuple[str, int], ...]:
    """Cached: the pods of one workload repeat the same resource lists."""
    return tuple(resource_list(dict(items)).items())


_Quantities = Annotated[dict[str, int], BeforeValidator(_quantities)]
"""A ResourceList, read into canonical units as it is validated."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    @model_validator(mode="before")
    @classmethod
    def _prune_nulls(cls, value: Any) -> Any:
        """`labels:` or `min:` left empty in YAML is null, which the API server prunes: absent."""
        if isinstance(value, Mapping):
            return {key: item for key, item in value.items() if item is not None}
        return value


class _OwnerReference(_Model):
    kind: str = ""
    controller: bool = False


class _Metadata(_Model):
    name: str = ""
    generate_name: str = Field("", alias="generateName")
    """Set instead of `name` on a pod that a controller creates: mutating admission sees the
    pod before kube-apiserver generates its name."""
    namespace: str = ""
    uid: str = ""
    deletion_timestamp: datetime | None = Field(None, alias="deletionTimestamp")
    creation_timestamp: datetime | None = Field(None, alias="creationTimestamp")
    labels: dict[str, str] = Field(default_factory=dict)
    annotations: dict[str, str] = Field(default_factory=dict)
    owner_references: list[_OwnerReference] = Field(default_factory=list, alias="ownerReferences")

    @property
    def controller_kind(self) -> str:
        """The kind of the object that manages this one (`ownerReferences[].controller`)."""
        return next((owner.kind for owner in self.owner_references if owner.controller), "")


class _Resources(_Model):
    requests: _Quantities = Field(default_factory=dict)
    limits: _Quantities = Field(default_factory=dict)


class _Container(_Model):
    resources: _Resources = Field(default_factory=_Resources)
    restart_policy: str | None = Field(None, alias="restartPolicy")


class _Gate(_Model):
    name: str


class _SchedulingGroup(_Model):
    pod_group_name: str = Field("", alias="podGroupName")


class _PodSpec(_Model):
    node_name: str = Field("", alias="nodeName")
    scheduling_group: _SchedulingGroup | None = Field(None, alias="schedulingGroup")
    """Kubernetes 1.36's pod group reference (alpha)."""
    scheduling_gates: list[_Gate] = Field(default_factory=list, alias="schedulingGates")
    priority: int = 0
    containers: list[_Container] = Field(default_factory=list)
    init_containers: list[_Container] = Field(default_factory=list, alias="initContainers")
    overhead: _Quantities = Field(default_factory=dict)
    resources: _Resources | None = None
    """Pod-level resources (Kubernetes 1.32, alpha): they win over the containers' sum."""


class _PodStatus(_Model):
    phase: str = ""
    start_time: datetime | None = Field(None, alias="startTime")


class _PodModel(_Model):
    metadata: _Metadata
    spec: _PodSpec = Field(default_factory=_PodSpec)
    status: _PodStatus = Field(default_factory=_PodStatus)


class _QuotaSpec(_Model):
    min: _Quantities = Field(default_factory=dict)
    max: _Quantities = Field(default_factory=dict)


class _QuotaStatus(_Model):
    used: _Quantities = Field(default_factory=dict)


class _QuotaModel(_Model):
    metadata: _Metadata
    spec: _QuotaSpec = Field(default_factory=_QuotaSpec)
    status: _QuotaStatus = Field(default_factory=_QuotaStatus)


class _NodeCondition(_Model):
    type: str = ""
    status: str = ""


class _NodeSpec(_Model):
    unschedulable: bool = False


class _NodeStatus(_Model):
    allocatable: _Quantities = Field(default_factory=dict)
    conditions: list[_NodeCondition] = Field(default_factory=list)


class _NodeModel(_Model):
    metadata: _Metadata
    spec: _NodeSpec = Field(default_factory=_NodeSpec)
    status: _NodeStatus = Field(default_factory=_NodeStatus)


_Parsed = TypeVar("_Parsed", bound=_Model)


def _validate(model: type[_Parsed], kind: str, raw: Mapping[str, Any]) -> _Parsed:
    try:
        return model.model_validate(raw)
    except ValidationError as error:
        first = error.errors()[0]
        metadata = raw.get("metadata") if isinstance(raw, Mapping) else None
        name = metadata.get("name", "") if isinstance(metadata, Mapping) else ""
        namespace = metadata.get("namespace", "") if isinstance(metadata, Mapping) else ""
        ref = f"{namespace}/{name}" if namespace else str(name)
        cause = first.get("ctx", {}).get("error")
        message = str(cause) if isinstance(cause, Exception) else first["msg"]
        raise ObjectError(kind, ref, _field_path(first["loc"]), message) from None


def _field_path(loc: tuple[int | str, ...]) -> str:
    path = ""
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return path


def _timestamp(moment: datetime | None) -> float | None:
    return None if moment is None else moment.timestamp()


def _json_annotation(quota: _QuotaModel, key: str) -> Any:
    text = quota.metadata.annotations.get(key)
    if text is None or not text.strip():
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise _annotation_error(quota, key, f"not valid JSON ({error.msg})") from None
    except (ValueError, RecursionError) as error:  # a number of 5,000 digits, 50,000 brackets
        raise _annotation_error(quota, key, f"not valid JSON ({error})") from None


def _annotation_error(quota: _QuotaModel, key: str, message: str) -> ObjectError:
    ref = f"{quota.metadata.namespace}/{quota.metadata.name}"
    return ObjectError("ElasticQuota", ref, f"metadata.annotations[{key}]", message)


def _resource_list_annotation(quota: _QuotaModel, key: str) -> ResourceList | None:
    """A JSON resource list annotation in canonical units; None when absent."""
    value = _json_annotation(quota, key)
    if value is None:
        return None
    if not isinstance(value, dict):
        raise _annotation_error(quota, key, "expected a JSON resource list")
    try:
        return resource_list(value)
    except QuantityError as error:
        raise _annotation_error(quota, key, str(error)) from None


_READ_ANNOTATIONS: Final = (
    keys.NAMESPACES,
    keys.STRICT_MAX_KEYS,
    keys.SHARED_WEIGHT,
    keys.TOTAL_RESOURCE,
)
"""The annotations `parse_quota` reads: any other (the operator's own) leaves a group as it is."""

_READ_METADATA: Final = tuple(
    field.alias or name for name, field in _Metadata.model_fields.items() if name != "annotations"
)


def quota_settings(raw: RawElasticQuota) -> tuple[Any, ...] | None:
    """What `parse_quota` reads of `raw` but its status, its namespace and name first; None
    when not plainly shaped (only `parse_quota` may judge it)."""
    metadata = raw.get("metadata") if isinstance(raw, dict) else None
    if not isinstance(metadata, dict):
        return None
    namespace, name = metadata.get("namespace"), metadata.get("name")
    annotations = metadata.get("annotations")
    annotations = {} if annotations is None else annotations
    if type(namespace) is not str or type(name) is not str or not isinstance(annotations, dict):
        return None
    if any(type(value) is not str for value in annotations.values()):
        return None
    return (
        namespace,
        name,
        *(metadata.get(key) for key in _READ_METADATA),
        *(annotations.get(key) for key in _READ_ANNOTATIONS),
        raw.get("spec"),
    )


def status_used(status: Any) -> ResourceList | None:
    """`status.used` as `parse_quota` reads it, by the same model; None if it cannot
    (`parse_quota` then says why)."""
    try:
        return _QuotaStatus.model_validate({} if status is None else status).used
    except ValidationError:
        return None


def parse_quota(raw: RawElasticQuota) -> Quota:
    """An ElasticQuota from its Kubernetes dict."""
    parsed = _validate(_QuotaModel, "ElasticQuota", raw)
    if not parsed.metadata.name:
        raise ObjectError(
            "ElasticQuota", f"{parsed.metadata.namespace}/", "metadata.name", "required"
        )
    labels = parsed.metadata.labels
    namespaces = _json_annotation(parsed, keys.NAMESPACES) or []
    if not isinstance(namespaces, list) or not all(isinstance(n, str) for n in namespaces):
        raise _annotation_error(parsed, keys.NAMESPACES, "expected a JSON list of namespace names")
    strict_keys = _json_annotation(parsed, keys.STRICT_MAX_KEYS) or []
    if not isinstance(strict_keys, list) or not all(isinstance(k, str) for k in strict_keys):
        raise _annotation_error(parsed, keys.STRICT_MAX_KEYS, "expected a JSON list of resources")
    parent_labels = (labels.get(keys.PARENT), labels.get(keys.PARENT_SEED))
    return Quota(
        name=parsed.metadata.name,
        namespace=parsed.metadata.namespace,
        parent=parent_labels[0] or parent_labels[1] or "",
        parent_labels=parent_labels,
        is_parent=labels.get(keys.IS_PARENT) == "true",
        allow_lent=labels.get(keys.ALLOW_LENT) != "false",
        min=parsed.spec.min,
        max=parsed.spec.max,
        shared_weight=_resource_list_annotation(parsed, keys.SHARED_WEIGHT),
        namespaces=tuple(namespaces),
        force_update=labels.get(keys.FORCE_UPDATE) == "true",
        strict_keys=tuple(strict_keys),
        used=parsed.status.used,
        tree_id=labels.get(keys.TREE_ID, ""),
        is_root=labels.get(keys.IS_ROOT) == "true",
        total_resource=_resource_list_annotation(parsed, keys.TOTAL_RESOURCE),
        ignore_default_tree=labels.get(keys.IGNORE_DEFAULT_TREE) == "true",
    )


class PodFields(NamedTuple):
    """What the engine reads of a pod, validated; `pods.parse_pod` builds the Pod from it."""

    namespace: str
    name: str
    generate_name: str
    uid: str
    labels: Mapping[str, str]
    annotations: Mapping[str, str]
    mirror: bool
    """Annotated as a static pod's mirror."""
    terminating: bool
    created: float | None
    controller_kind: str
    node_name: str
    gates: tuple[str, ...]
    priority: int
    phase: str
    start_time: float | None
    request: dict[str, int]
    scheduling_group: str
    """`spec.schedulingGroup.podGroupName`; empty: none."""


def pod_fields(raw: RawPod) -> PodFields:
    """A pod's fields through the full validation: the rule, and the error messages."""
    parsed = _validate(_PodModel, "Pod", raw)
    metadata, spec = parsed.metadata, parsed.spec
    request = pod_request(
        containers=[_requests(c) for c in spec.containers],
        init_containers=[_requests(c) for c in spec.init_containers],
        overhead=spec.overhead,
        pod_level=None if spec.resources is None else _requests(spec.resources),
    )
    return PodFields(
        namespace=metadata.namespace,
        name=metadata.name,
        generate_name=metadata.generate_name,
        uid=metadata.uid,
        labels=metadata.labels,
        annotations=metadata.annotations,
        mirror=keys.MIRROR in metadata.annotations,
        terminating=metadata.deletion_timestamp is not None,
        created=_timestamp(metadata.creation_timestamp),
        controller_kind=metadata.controller_kind,
        node_name=spec.node_name,
        gates=tuple(gate.name for gate in spec.scheduling_gates),
        priority=spec.priority,
        phase=parsed.status.phase,
        start_time=_timestamp(parsed.status.start_time),
        request=request,
        scheduling_group=spec.scheduling_group.pod_group_name if spec.scheduling_group else "",
    )


def _requests(holder: _Container | _Resources) -> ContainerRequests:
    """A container's requests, or the pod-level ones (`spec.resources`)."""
    if isinstance(holder, _Resources):
        return ContainerRequests(requests=holder.requests, limits=holder.limits)
    return ContainerRequests(
        requests=holder.resources.requests,
        limits=holder.resources.limits,
        sidecar=holder.restart_policy == "Always",
    )


def parse_node(raw: RawNode) -> Node:
    """A Node from its Kubernetes dict."""
    parsed = _validate(_NodeModel, "Node", raw)
    ready = any(c.type == "Ready" and c.status == "True" for c in parsed.status.conditions)
    return Node(
        name=parsed.metadata.name,
        allocatable=parsed.status.allocatable,
        labels=parsed.metadata.labels,
        schedulable=ready and not parsed.spec.unschedulable,
    )
