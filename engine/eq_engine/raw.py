"""The JSON the engine reads: the API objects' fields, as `TypedDict`s.

As Kopf's `RawBody`, each is `total=False` (the API server leaves out empty fields) and names
only what the engine reads; anything else an object holds is ignored. A `Raw*` type says what a
parser reads, not that the object holds it: JSON is unchecked, so `parsing.py` (and the fast
path of `pods.py`) check every field they read and name the one that does not fit.

`RawPod` and `RawNode` are also the schemas the caches decode pods and nodes into (`SCHEMAS`,
`eq_kit.decoding`): a field the engine reads and these do not name is not there to read. Tests
hold them to the full validation's models.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final, TypedDict

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


class RawResources(TypedDict, total=False):
    requests: RawResourceList
    limits: RawResourceList


class RawContainer(TypedDict, total=False):
    resources: RawResources
    restartPolicy: str


class RawSchedulingGate(TypedDict, total=False):
    name: str


class RawSchedulingGroup(TypedDict, total=False):
    podGroupName: str


class RawPodSpec(TypedDict, total=False):
    nodeName: str
    schedulingGroup: RawSchedulingGroup
    schedulingGates: Sequence[RawSchedulingGate]
    priority: int
    containers: Sequence[RawContainer]
    initContainers: Sequence[RawContainer]
    overhead: RawResourceList
    resources: RawResources


class RawPodStatus(TypedDict, total=False):
    phase: str
    startTime: str


class RawPod(TypedDict, total=False):
    metadata: RawMeta
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


class RawNodeCondition(TypedDict, total=False):
    type: str
    status: str


class RawNodeSpec(TypedDict, total=False):
    unschedulable: bool


class RawNodeStatus(TypedDict, total=False):
    allocatable: RawResourceList
    conditions: list[RawNodeCondition]


class RawNode(TypedDict, total=False):
    metadata: RawMeta
    spec: RawNodeSpec
    status: RawNodeStatus


SCHEMAS: Final[Mapping[str, type]] = {"Pod": RawPod, "Node": RawNode}
"""By kind: the objects the caches decode into just the fields read (`eq_kit.decoding`), the
many (pods) and the large (a node's status lists its images). The others are read whole."""
