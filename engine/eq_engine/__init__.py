"""eq_engine: the pure core of hierarchical elastic quota.

Quantities, the quota tree, request/used accounting, the runtime split, over-quota labels and
reclaim plans, as Koordinator defines them (docs/how-it-works.md says how, and
docs/koordinator.md where this differs). No Kubernetes client, no network, no files: the
operator, the webhook and the CLI feed it parsed objects and act on what it returns.
"""

from .admission import Admissions
from .config import EngineConfig
from .engine import QuotaEngine
from .errors import ObjectError, QuantityError, QuotaError
from .nodes import parse_node
from .objects import Node, Pod, Quota, cluster_capacity
from .pods import parse_pod
from .problems import Problem
from .quantities import (
    ResourceList,
    format_quantity,
    format_resource_list,
    is_bytes,
    is_milli,
    parse_quantity,
    to_canonical,
)
from .quota_reader import QuotaReader
from .quotas import parse_quota
from .status import Changes, GroupStatus

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
