"""Who is whose parent.

The ElasticQuota objects by name with their children and the namespaces they own (`Catalog`),
each tree's topology with its levels and each pod's group (`Tree`), and the checks that make a
group, or the tree around it, invalid (`checks`, which calls `own_keys` for the product's own
keys).

Must not import any part of the engine but `model`, nor account: request, used and runtime are
`numbers`'.
"""

from . import checks
from .catalog import Catalog, build_catalog, quota_problem
from .topology import DEFAULT, ROOT, SYSTEM, Group, Tree, build_tree, pool_root

__all__ = [
    "DEFAULT",
    "ROOT",
    "SYSTEM",
    "Catalog",
    "Group",
    "Tree",
    "build_catalog",
    "build_tree",
    "checks",
    "pool_root",
    "quota_problem",
]
