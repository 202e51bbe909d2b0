"""The full validation of ElasticQuota, Pod and Node objects: the rule for reading them.

Pydantic reads the few fields the engine needs (those `raw.py` names) and ignores everything
else, so objects from any Kubernetes version or from Koordinator load unchanged. A malformed
known field raises `ObjectError` naming the object and the field path, e.g.
`ElasticQuota team-a/ml: spec.min: 'lots': not a Kubernetes quantity (resource cpu)`. The fast
paths of `pods.py`, `quotas.py` and `nodes.py` read the same fields (into the records of
`fields.py`) from the shapes the API server serves, and step aside for these models when
unsure: they import this module then, so that a process reading a healthy cluster never loads
pydantic (0.1 s of every operator's and webhook's start).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Annotated, Any, TypeVar

import msgspec
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, model_validator

from ..model import ObjectError, ResourceList, resource_list
from .fields import (
    ElasticQuotaFields,
    MetadataFields,
    NodeFields,
    PodFields,
    RequirementItems,
    canonical,
    node_terms,
)
from .raw import RawElasticQuota, RawNode, RawPod
from .requests import ContainerRequests, pod_request, shared


def _quantities(value: object) -> dict[str, int]:
    if not isinstance(value, Mapping):
        raise ValueError("expected a map of resource names to quantities")
    try:
        return canonical(value)
    except TypeError:  # an unhashable value: let resource_list name it
        return resource_list(value)


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


class _NodeSelectorRequirement(_Model):
    key: str = ""
    operator: str = ""
    values: list[str] = Field(default_factory=list)


class _NodeSelectorTerm(_Model):
    match_expressions: list[_NodeSelectorRequirement] = Field(
        default_factory=list, alias="matchExpressions"
    )


class _NodeSelector(_Model):
    node_selector_terms: list[_NodeSelectorTerm] = Field(
        default_factory=list, alias="nodeSelectorTerms"
    )


class _NodeAffinity(_Model):
    required: _NodeSelector | None = Field(
        None, alias="requiredDuringSchedulingIgnoredDuringExecution"
    )


class _Affinity(_Model):
    node_affinity: _NodeAffinity | None = Field(None, alias="nodeAffinity")


class _PodSpec(_Model):
    node_name: str = Field("", alias="nodeName")
    node_selector: dict[str, str] = Field(default_factory=dict, alias="nodeSelector")
    affinity: _Affinity | None = None
    scheduling_group: _SchedulingGroup | None = Field(None, alias="schedulingGroup")
    """Kubernetes 1.36's pod group reference (alpha)."""
    scheduling_gates: list[_Gate] = Field(default_factory=list, alias="schedulingGates")
    priority: int = 0
    containers: list[_Container] = Field(default_factory=list)
    init_containers: list[_Container] = Field(default_factory=list, alias="initContainers")
    overhead: _Quantities = Field(default_factory=dict)
    resources: _Resources | None = None
    """Pod-level resources (Kubernetes 1.32, alpha): they win over the containers' sum."""


class _Condition(_Model):
    type: str = ""
    status: str = ""


class _PodStatus(_Model):
    phase: str = ""
    start_time: datetime | None = Field(None, alias="startTime")
    conditions: list[_Condition] = Field(default_factory=list)


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


class _NodeSpec(_Model):
    unschedulable: bool = False


class _NodeStatus(_Model):
    allocatable: _Quantities = Field(default_factory=dict)
    conditions: list[_Condition] = Field(default_factory=list)


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
        name = (metadata.get("name") or "") if isinstance(metadata, Mapping) else ""  # null: none
        namespace = (metadata.get("namespace") or "") if isinstance(metadata, Mapping) else ""
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


def status_used(raw: RawElasticQuota) -> ResourceList | None:
    """`status.used` as `quota_fields` reads it, by the same model; None if it cannot
    (`quota_fields` then says why)."""
    try:
        status = raw.get("status")
        return _QuotaStatus.model_validate({} if status is None else status).used
    except ValidationError:
        return None


def _metadata(model: _Metadata) -> MetadataFields:
    return MetadataFields(
        namespace=model.namespace,
        name=model.name,
        generate_name=model.generate_name,
        uid=model.uid,
        labels=model.labels,
        annotations=model.annotations,
        deleted=_timestamp(model.deletion_timestamp),
        created=_timestamp(model.creation_timestamp),
        controller_kind=model.controller_kind,
    )


def quota_fields(raw: RawElasticQuota) -> ElasticQuotaFields:
    """An ElasticQuota's fields through the full validation: the rule, and the error
    messages."""
    parsed = _validate(_QuotaModel, "ElasticQuota", raw)
    return ElasticQuotaFields(
        _metadata(parsed.metadata), parsed.spec.min, parsed.spec.max, parsed.status.used
    )


def pod_fields(raw: RawPod) -> PodFields:
    """A pod's fields through the full validation: the rule, and the error messages."""
    parsed = _validate(_PodModel, "Pod", _as_json(raw))
    spec = parsed.spec
    request = pod_request(
        containers=[_requests(c) for c in spec.containers],
        init_containers=[_requests(c) for c in spec.init_containers],
        overhead=spec.overhead,
        pod_level=None if spec.resources is None else _requests(spec.resources),
    )
    return PodFields(
        meta=_metadata(parsed.metadata),
        node_name=spec.node_name,
        gates=tuple(gate.name for gate in spec.scheduling_gates),
        priority=spec.priority,
        phase=parsed.status.phase,
        start_time=_timestamp(parsed.status.start_time),
        request=shared(request),
        scheduling_group=spec.scheduling_group.pod_group_name if spec.scheduling_group else "",
        ready=any(c.type == "Ready" and c.status == "True" for c in parsed.status.conditions),
        node_terms=node_terms(tuple(spec.node_selector.items()), _required_terms(spec.affinity)),
    )


def _required_terms(affinity: _Affinity | None) -> tuple[RequirementItems, ...] | None:
    required = affinity.node_affinity.required if affinity and affinity.node_affinity else None
    if required is None:
        return None
    return tuple(
        tuple((r.key, r.operator, tuple(r.values)) for r in term.match_expressions)
        for term in required.node_selector_terms
    )


def _as_json(raw: Mapping[str, Any]) -> Mapping[str, Any]:
    """The object as JSON gives it, for the models: a metadata, spec or status the caches
    decoded into a struct (`raw.RawObjectMeta`, `RawPodSpec`, `RawNodeStatus`, ...) as a map
    again."""
    if type(raw) is not dict:
        return raw
    parts = {
        part: raw[part]
        for part in ("metadata", "spec", "status")
        if isinstance(raw.get(part), msgspec.Struct)
    }
    return {**raw, **msgspec.to_builtins(parts)} if parts else raw


def _requests(holder: _Container | _Resources) -> ContainerRequests:
    """A container's requests, or the pod-level ones (`spec.resources`)."""
    if isinstance(holder, _Resources):
        return ContainerRequests(requests=holder.requests, limits=holder.limits)
    return ContainerRequests(
        requests=holder.resources.requests,
        limits=holder.resources.limits,
        sidecar=holder.restart_policy == "Always",
    )


def node_fields(raw: RawNode) -> NodeFields:
    """A Node's fields through the full validation: the rule, and the error messages."""
    parsed = _validate(_NodeModel, "Node", _as_json(raw))
    return NodeFields(
        meta=_metadata(parsed.metadata),
        allocatable=parsed.status.allocatable,
        unschedulable=parsed.spec.unschedulable,
        conditions=tuple((c.type, c.status) for c in parsed.status.conditions),
    )
