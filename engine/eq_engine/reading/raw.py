"""The JSON the engine reads: the API objects' fields, as `TypedDict`s, and the specs and
statuses of pods and nodes as msgspec structs.

As Kopf's `RawBody`, each `TypedDict` is `total=False` (the API server leaves out empty fields)
and names only what the engine reads; anything else an object holds is ignored. A `Raw*` type
says what a parser reads, not that the object holds it: JSON is unchecked, so `parsing.py` (and
the fast paths) check every field they read and name the one that does not fit.

A pod's `metadata`, `spec` and `status` are structs (`RawObjectMeta`, `RawPodSpec`,
`RawPodStatus`): msgspec checks their fields' types as it decodes or converts them, in C, so
the fast paths (`lookups.py`, `pods.py`) read them without checking each type again (a struct
made by hand is checked by nothing). So are a node's `spec` and `status` (`RawNodeSpec`,
`RawNodeStatus`), for `nodes.py`. The caches decode them so; an object from elsewhere (a review,
a file) holds them as JSON maps, which the fast path converts, as it converts the metadata of
the other kinds (`RawMeta`, the same fields as a map). Null is absent, as in the models; a value
of another type makes the fast path step aside, for the models to name the field.

`RawPod` and `RawNode` are also the schemas the caches decode pods and nodes into (`SCHEMAS`,
`eq_kit.decoding`): a field the engine reads and these do not name is not there to read. Tests
hold them to the full validation's models.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final, TypedDict

import msgspec

RawResourceList = Mapping[str, str | int | float]
"""Resource name to quantity as written: `"500m"`, `"2Gi"`, `4`."""


class RawOwnerReference(TypedDict, total=False):
    kind: str
    controller: bool


class RawMeta(TypedDict, total=False):
    name: str
    generateName: str
    namespace: str
    uid: str
    resourceVersion: str
    """Not the engine's: the caches follow it (a schema keeps it, `eq_kit.decoding`)."""
    deletionTimestamp: str
    creationTimestamp: str
    labels: Mapping[str, str]
    annotations: Mapping[str, str]
    ownerReferences: Sequence[RawOwnerReference]


class RawOwner(msgspec.Struct, frozen=True):
    kind: str | None = None
    controller: bool | None = None


class RawObjectMeta(msgspec.Struct, frozen=True, omit_defaults=True, rename="camel"):
    """`metadata` as the fast paths read it (`lookups.metadata`): a pod's as the caches decode
    it, another's (a JSON map) converted."""

    name: str | None = None
    generate_name: str | None = None
    namespace: str | None = None
    uid: str | None = None
    resource_version: str | None = None
    """Not the engine's: the caches follow it."""
    deletion_timestamp: str | None = None
    creation_timestamp: str | None = None
    labels: Mapping[str, str] | None = None
    annotations: Mapping[str, str] | None = None
    owner_references: Sequence[RawOwner] | None = None


class RawResources(msgspec.Struct, frozen=True, omit_defaults=True):
    requests: RawResourceList | None = None
    limits: RawResourceList | None = None


class RawContainer(msgspec.Struct, frozen=True, omit_defaults=True, rename="camel"):
    resources: RawResources | None = None
    restart_policy: str | None = None


class RawSchedulingGate(msgspec.Struct, frozen=True):
    name: str


class RawSchedulingGroup(msgspec.Struct, frozen=True, omit_defaults=True, rename="camel"):
    pod_group_name: str | None = None


class RawNodeSelectorRequirement(msgspec.Struct, frozen=True, omit_defaults=True):
    key: str | None = None
    operator: str | None = None
    values: Sequence[str] | None = None


class RawNodeSelectorTerm(msgspec.Struct, frozen=True, omit_defaults=True, rename="camel"):
    match_expressions: Sequence[RawNodeSelectorRequirement] | None = None


class RawNodeSelector(msgspec.Struct, frozen=True, omit_defaults=True, rename="camel"):
    node_selector_terms: Sequence[RawNodeSelectorTerm] | None = None


class RawNodeAffinity(msgspec.Struct, frozen=True, omit_defaults=True, rename="camel"):
    required_during_scheduling_ignored_during_execution: RawNodeSelector | None = None


class RawAffinity(msgspec.Struct, frozen=True, omit_defaults=True, rename="camel"):
    node_affinity: RawNodeAffinity | None = None


class RawPodSpec(msgspec.Struct, frozen=True, omit_defaults=True, rename="camel"):
    node_name: str | None = None
    node_selector: Mapping[str, str] | None = None
    affinity: RawAffinity | None = None
    """Its required node affinity: which node pools a pod that may go to several may use."""
    scheduling_group: RawSchedulingGroup | None = None
    scheduling_gates: Sequence[RawSchedulingGate] | None = None
    priority: int | None = None
    containers: Sequence[RawContainer] | None = None
    init_containers: Sequence[RawContainer] | None = None
    overhead: RawResourceList | None = None
    resources: RawResources | None = None


class RawPodCondition(msgspec.Struct, frozen=True, omit_defaults=True):
    type: str | None = None
    status: str | None = None


class RawPodStatus(msgspec.Struct, frozen=True, omit_defaults=True, rename="camel"):
    phase: str | None = None
    start_time: str | None = None
    conditions: Sequence[RawPodCondition] | None = None


class RawPod(TypedDict, total=False):
    metadata: RawObjectMeta
    spec: RawPodSpec
    status: RawPodStatus


class RawElasticQuotaSpec(TypedDict, total=False):
    min: RawResourceList
    max: RawResourceList


class RawElasticQuotaStatus(TypedDict, total=False):
    used: RawResourceList


class RawElasticQuota(TypedDict, total=False):
    metadata: RawMeta
    spec: RawElasticQuotaSpec
    status: RawElasticQuotaStatus


class RawNodeCondition(msgspec.Struct, frozen=True, omit_defaults=True):
    type: str | None = None
    status: str | None = None


class RawNodeSpec(msgspec.Struct, frozen=True, omit_defaults=True):
    unschedulable: bool | None = None


class RawNodeStatus(msgspec.Struct, frozen=True, omit_defaults=True):
    allocatable: RawResourceList | None = None
    conditions: Sequence[RawNodeCondition] | None = None


class RawNode(TypedDict, total=False):
    metadata: RawMeta
    spec: RawNodeSpec
    status: RawNodeStatus


SCHEMAS: Final[Mapping[str, type]] = {"Pod": RawPod, "Node": RawNode}
"""By kind: the objects the caches decode into just the fields read (`eq_kit.decoding`), the
many (pods) and the large (a node's status lists its images). The others are read whole."""
