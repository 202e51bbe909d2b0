"""ElasticQuota, Pod and Node as the engine sees them: frozen values, in canonical units.

Only the fields the quota accounting needs, read from the API's JSON by the fast paths of
`pods.py`, `quotas.py` and `nodes.py`, or by the full validation (`parsing.py`); nothing here
reads JSON.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import msgspec

from . import keys
from .gangs import GangRef
from .quantities import ResourceList
from .queues import DEFAULT as DEFAULT_QUEUE
from .queues import QueuePolicy
from .selectors import Requirement


def pack_uid(uid: str) -> str | int:
    """A UID as the API server makes it (a UUID's lowercase text, 96 B of the heap as a
    string) as the 128-bit number it spells (48 B): an engine holds one per pod. Any other
    text is kept as it is."""
    if len(uid) != 36 or not uid[8] == uid[13] == uid[18] == uid[23] == "-":
        return uid
    digits = uid.replace("-", "")
    try:
        packed = int(digits, 16)
    except ValueError:
        return uid
    # exactly the text `Pod.uid` gives back: no sign, no "_", lowercase
    return packed if f"{packed:032x}" == digits else uid


@dataclass(frozen=True, slots=True)
class Quota:
    """One ElasticQuota: a quota group and how it sits in the tree."""

    name: str
    namespace: str
    parent: str
    """The parent label's value ("" when absent); the tree decides what it names."""
    parent_labels: tuple[str | None, str | None]
    """(`parent`, `parent-quota-name`) as written, to report when they disagree."""
    is_parent: bool
    allow_lent: bool
    min: ResourceList
    max: ResourceList
    shared_weight: ResourceList | None
    """The annotation as written; `None` when absent (the weight is then `max`)."""
    namespaces: tuple[str, ...]
    force_update: bool = False
    """Label `allow-force-update: "true"`: the min-sum rules are not applied (Koordinator)."""
    strict_keys: tuple[str, ...] = ()
    """Resources whose max must cover `status.used` (`max-strict-check-resource-keys`)."""
    used: ResourceList = field(default_factory=dict, compare=False)
    """`status.used` as last written by the operator; not part of the group's settings."""
    tree_id: str = ""
    """Label `tree-id`: the quota tree (one per node pool) the group is in; "" the default."""
    is_root: bool = False
    """Label `is-root: "true"`: the root of its tree, made from an ElasticQuotaProfile."""
    total_resource: ResourceList | None = None
    """A tree root's `total-resource` annotation: what its tree splits; None when absent."""
    ignore_default_tree: bool = False
    """Label `ignore-default-tree: "true"`: its total is not taken from the default tree's."""
    queue: QueuePolicy = DEFAULT_QUEUE
    """How its gate lets waiting pods go (Koordinator's `koord-queue/` keys)."""
    lending_limit: ResourceList | None = None
    """The `lending-limit` annotation: the most of its min it lends, per resource; None: absent."""
    borrowing_limit: ResourceList | None = None
    """The `borrowing-limit` annotation: the most its runtime exceeds its min by; None: absent."""
    pools: tuple[str, ...] = ()
    """The `pools` annotation: the groups, in order, one of which each of its pods goes to."""

    @property
    def ref(self) -> str:
        return f"{self.namespace}/{self.name}"


class Pod(msgspec.Struct, frozen=True, gc=False):
    """One pod as the quota accounting sees it.

    Kept small and quick to make: an engine holds every pod of the cluster and reads one on
    every pod event. Repeated strings are interned and equal requests share one (read-only)
    dict. A msgspec struct, not a dataclass: made in C (a frozen dataclass sets each field
    through `object.__setattr__`, five times slower), and out of the garbage collector's
    sight (`gc=False`: it refers to no container that could refer back to it), 16 B less.
    Two pods are equal when every field is.
    """

    key: str
    """`namespace/name`."""
    packed_uid: str | int
    """`metadata.uid` (`pack_uid`), for Events about the pod, those about its eviction too
    (`uid`)."""
    namespace: str
    priority: int
    start_time: float | None
    """Seconds since the epoch, or `None` while the pod has not started."""
    node_name: str
    phase: str
    terminating: bool
    """Deletion has begun (`metadata.deletionTimestamp`): still counted, no longer evicted."""
    request: ResourceList
    """The pod's request as Kubernetes counts it (see `requests.py`), not yet masked."""
    scheduling_gates: tuple[str, ...] = ()
    """`spec.schedulingGates` by name: the scheduler leaves the pod alone while any is set."""
    created: float = 0.0
    """`metadata.creationTimestamp`, seconds since the epoch: waiting pods queue in this order."""
    node_pinned: bool = False
    """Made for one node: a DaemonSet's pod or a static pod's mirror. Its controller (or the
    kubelet) places it and recreates it there at once, so it is neither gated nor evicted."""
    gang: GangRef | None = None
    """The pod group it belongs to (`gangs.py`); None: a gang of one."""
    labels: Mapping[str, str] = msgspec.field(default_factory=dict)
    """Its labels but the operator's capacity label: those below read them, and so do
    PodDisruptionBudgets' selectors. One dict is shared by the pods whose labels are alike,
    where a field for each label read would cost every pod a slot."""
    ready: bool = False
    """Its `Ready` condition is True: running, and passing its readiness probes (a pod without
    any is Ready once its containers run). A gang has started once its minimum is."""
    node_terms: tuple[tuple[Requirement, ...], ...] | None = None
    """The nodes it may go to by its `nodeSelector` and required node affinity: any of these
    terms, each a list of requirements on node labels; None: any node. Read for the pods that
    may go to several node pools, which skip a pool none of whose nodes they may go to."""

    @property
    def name(self) -> str:
        return self.key[len(self.namespace) + 1 :]

    @property
    def quota_labels(self) -> tuple[str | None, str | None]:
        """(`name`, `quota-name`) pod labels as written."""
        return self.labels.get(keys.POD_QUOTA), self.labels.get(keys.POD_QUOTA_SEED)

    @property
    def preemptible_label(self) -> str | None:
        """The `preemptible` label as written: it may not change once set (or unset)."""
        return self.labels.get(keys.PREEMPTIBLE)

    @property
    def preemptible(self) -> bool:
        return self.preemptible_label != "false"

    @property
    def pool_quota(self) -> str | None:
        """The group of its group's `pools` the gate chose for it (the operator's label)."""
        return self.labels.get(keys.POOL_QUOTA)

    @property
    def gate_opt_out(self) -> bool:
        """Labelled `gate: "false"`: the webhook lets it through without the admission gate."""
        return self.labels.get(keys.GATE_OPT_OUT) == "false"

    @property
    def uid(self) -> str:
        packed = self.packed_uid
        return packed if isinstance(packed, str) else str(uuid.UUID(int=packed))

    @property
    def terminal(self) -> bool:
        """Finished pods count nowhere (as in Koordinator)."""
        return self.phase in ("Succeeded", "Failed")

    @property
    def scheduled(self) -> bool:
        """Bound to a node and not finished: the pod counts in `used`."""
        return bool(self.node_name) and not self.terminal

    @property
    def gated(self) -> bool:
        """Waiting for quota: it carries the admission gate."""
        return keys.ADMISSION_GATE in self.scheduling_gates

    @property
    def other_gates(self) -> tuple[str, ...]:
        """Its scheduling gates but the admission gate: what it keeps once quota admits it."""
        return tuple(name for name in self.scheduling_gates if name != keys.ADMISSION_GATE)


@dataclass(frozen=True, slots=True)
class Node:
    name: str
    allocatable: ResourceList
    labels: Mapping[str, str] = field(default_factory=dict)
    """What ElasticQuotaProfiles' node selectors match."""
    schedulable: bool = True
    """Ready and not cordoned: its allocatable is not in the pool's `unschedulable-resource`."""


def cluster_capacity(nodes: Iterable[Node]) -> dict[str, int]:
    """The cluster's total: every node's allocatable, cordoned and NotReady nodes included
    (their pods still count in used; leaving them out would shrink the total under the running
    pods during a drain). `state.Store` keeps the same sum incrementally."""
    total: dict[str, int] = {}
    for node in nodes:
        for name, amount in node.allocatable.items():
            total[name] = total.get(name, 0) + amount
    return total
