"""eq_engine: the pure core of hierarchical elastic quota.

Quantities, the quota tree, request/used accounting, the runtime split, over-quota labels and
reclaim plans, as Koordinator defines them (docs/how-it-works.md says how, and
docs/koordinator.md where this differs). No Kubernetes client, no network, no files: the
operator, the webhook and the CLI feed it parsed objects (`QuotaEngine`), recompute, and act on
the `Snapshot` it hands back. docs/architecture.md maps its sub-packages.
"""

from .decisions import Admissions
from .model import (
    Changes,
    EngineConfig,
    GroupStatus,
    Node,
    ObjectError,
    Pod,
    Problem,
    QuantityError,
    Quota,
    QuotaError,
    ResourceList,
    cluster_capacity,
    format_quantity,
    format_resource_list,
    is_bytes,
    is_milli,
    parse_quantity,
    to_canonical,
)
from .reading import QuotaReader, parse_node, parse_pod, parse_quota
from .state import QuotaEngine, Snapshot, StaleSnapshot

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
    "Snapshot",
    "StaleSnapshot",
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
