"""eq_engine: the pure core of hierarchical elastic quota.

Quantities, the quota tree, request/used accounting, the runtime split, over-quota labels and
reclaim plans, as Koordinator defines them (docs/how-it-works.md says how, and
docs/koordinator.md where this differs). No Kubernetes client, no network, no files: the
operator, the webhook and the CLI feed it parsed objects and act on what it returns.
"""

from .decisions.admission import Admissions
from .model.config import EngineConfig
from .model.errors import ObjectError, QuantityError, QuotaError
from .model.objects import Node, Pod, Quota, cluster_capacity
from .model.problems import Problem
from .model.quantities import (
    ResourceList,
    format_quantity,
    format_resource_list,
    is_bytes,
    is_milli,
    parse_quantity,
    to_canonical,
)
from .model.status import Changes, GroupStatus
from .reading.nodes import parse_node
from .reading.pods import parse_pod
from .reading.quota_reader import QuotaReader
from .reading.quotas import parse_quota
from .state.quota_engine import QuotaEngine

__all__ = [
    "Admissions",
    "Changes",
    "EngineConfig",
    "GroupStatus",
    "Node",
    "ObjectError",
    "Pod",
    "Problem",
    "QuantityError",
    "Quota",
    "QuotaEngine",
    "QuotaError",
    "QuotaReader",
    "ResourceList",
    "cluster_capacity",
    "format_quantity",
    "format_resource_list",
    "is_bytes",
    "is_milli",
    "parse_node",
    "parse_pod",
    "parse_quantity",
    "parse_quota",
    "to_canonical",
]
