"""What the engine reads of each object, validated: the records that both readings give, the
full validation (`parsing.py`'s pydantic models, the rule) and the fast paths (`pods.py`,
`quotas.py`, `nodes.py`, by the lookups of `lookups.py`); and `canonical`, which both use for
resource lists.

Nothing here needs pydantic: an operator or a webhook reads the objects of a healthy cluster by
the fast paths alone, and loads the models the first time an object needs them (an object the
fast path is unsure of, which the models then judge and name the field of).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any, Final

import msgspec

from ..model import Requirement, ResourceList, resource_list
from .raw import RawMeta


def canonical(amounts: Mapping[str, Any]) -> dict[str, int]:
    """A resource list in canonical units; raises `QuantityError`, or `TypeError` for an
    unhashable quantity."""
    items = tuple(amounts.items())
    if any(type(amount) is bool for _, amount in items):
        return resource_list(amounts)  # not cached: True equals 1 there; it raises
    return dict(_canonical_items(items))


@lru_cache(maxsize=16384)
def _canonical_items(items: tuple[tuple[str, Any], ...]) -> tuple[tuple[str, int], ...]:
    """Cached: the pods of one workload repeat the same resource lists."""
    return tuple(resource_list(dict(items)).items())


READ_METADATA: Final = tuple(
    key for key in RawMeta.__annotations__ if key not in ("resourceVersion", "annotations")
)
"""The keys of `metadata` the readings read (`raw.RawMeta`, which tests hold to the models),
but `annotations`; `resourceVersion` is the caches'."""


class MetadataFields(msgspec.Struct, frozen=True):
    """What the engine reads of an object's `metadata`. These records are made for every
    object read, so they are msgspec structs, made in C (a NamedTuple's constructor is Python:
    five times as long)."""

    namespace: str
    name: str
    generate_name: str
    uid: str
    labels: Mapping[str, str]
    annotations: Mapping[str, str]
    deleted: float | None
    """`deletionTimestamp`: the object is going."""
    created: float | None
    controller_kind: str
    """The kind of the first owner that is its controller; empty: none."""


class ElasticQuotaFields(msgspec.Struct, frozen=True):
    """What the engine reads of an ElasticQuota; `quotas.parse_quota` builds the Quota from
    it."""

    meta: MetadataFields
    min: ResourceList
    max: ResourceList
    used: ResourceList


class PodFields(msgspec.Struct, frozen=True):
    """What the engine reads of a pod; `pods.parse_pod` builds the Pod from it."""

    meta: MetadataFields
    node_name: str
    gates: tuple[str, ...]
    priority: int
    phase: str
    start_time: float | None
    request: ResourceList
    scheduling_group: str
    """`spec.schedulingGroup.podGroupName`; empty: none."""
    ready: bool
    """Its `Ready` condition is True."""
    node_terms: NodeTerms | None = None
    """Its `nodeSelector` and required node affinity (`node_terms`); None: neither."""


NodeTerms = tuple[tuple[Requirement, ...], ...]
"""The nodes a pod may go to: any of these terms, each a list of requirements on node labels."""

RequirementItems = tuple[tuple[str, str, tuple[str, ...]], ...]


@lru_cache(maxsize=4096)
def node_terms(
    selector: tuple[tuple[str, str], ...], terms: tuple[RequirementItems, ...] | None
) -> NodeTerms | None:
    """A pod's `spec.nodeSelector` (items) and its required node affinity's terms as
    (key, operator, values) items, as one list of terms a node must meet one of: the selector
    joins each term (Kubernetes ANDs the two). None when the pod has neither; one object for
    the pods of a workload."""
    if not selector and terms is None:
        return None
    chosen = tuple(Requirement(key, "In", (value,)) for key, value in selector)
    if not terms:
        return (chosen,)
    return tuple(
        chosen + tuple(Requirement(key, op, values) for key, op, values in term) for term in terms
    )


class NodeFields(msgspec.Struct, frozen=True):
    """What the engine reads of a Node; `nodes.parse_node` builds the Node from it."""

    meta: MetadataFields
    allocatable: ResourceList
    unschedulable: bool
    """`spec.unschedulable`: cordoned."""
    conditions: tuple[tuple[str, str], ...]
    """`status.conditions` as (type, status)."""
