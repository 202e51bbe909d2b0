"""The values the engine reasons about, each on its own.

ElasticQuota, Pod and Node as frozen objects; quantities in canonical units and the limit
above which an amount means "no practical limit"; the well-known keys (labels, annotations,
the admission gate) in `keys`; problems and errors; the engine's settings; a group's published
status; gangs, disruption budgets and label selectors, each read from its own small object.

Must not: compute over several objects, import any other part of the engine, or do I/O.
"""

from . import gangs, keys, queues
from .budgets import DisruptionBudget, parse_disruption_budget
from .config import EngineConfig
from .errors import ObjectError, QuantityError, QuotaError
from .gangs import (
    KOORDINATOR,
    POD_GROUP_KINDS,
    PodGroup,
    PodGroupKind,
    Requeue,
    gang_of,
    parse_pod_group,
)
from .objects import Node, Pod, Quota, cluster_capacity, pack_uid
from .problems import SHOWN, Problem, listing
from .quantities import (
    LIMIT,
    ResourceList,
    clamp,
    format_quantity,
    format_resource_list,
    is_bytes,
    is_milli,
    limits,
    parse_quantity,
    resource_list,
    to_canonical,
)
from .queues import QueuePolicy, queue_policy
from .selectors import LabelSelector, Requirement, may_use, parse_selector, satisfiable
from .status import Changes, GroupStatus

__all__ = [
    "KOORDINATOR",
    "LIMIT",
    "POD_GROUP_KINDS",
    "SHOWN",
    "Changes",
    "DisruptionBudget",
    "EngineConfig",
    "GroupStatus",
    "LabelSelector",
    "Node",
    "ObjectError",
    "Pod",
    "PodGroup",
    "PodGroupKind",
    "Problem",
    "QuantityError",
    "QueuePolicy",
    "Quota",
    "QuotaError",
    "Requeue",
    "Requirement",
    "ResourceList",
    "clamp",
    "cluster_capacity",
    "format_quantity",
    "format_resource_list",
    "gang_of",
    "gangs",
    "is_bytes",
    "is_milli",
    "keys",
    "limits",
    "listing",
    "may_use",
    "pack_uid",
    "parse_disruption_budget",
    "parse_pod_group",
    "parse_quantity",
    "parse_selector",
    "queue_policy",
    "queues",
    "resource_list",
    "satisfiable",
    "to_canonical",
]
