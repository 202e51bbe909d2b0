"""The engine's state and the façade the edges hold.

The objects fed in, each pod placed in its group (`Store`); pod groups; the capacity labels
(in-quota, over-quota); every group's status as the edges read it; and `QuotaEngine`, which
takes events and hands back, on each recompute, a `Snapshot`: what changed, and the state the
decisions read.

The only package that changes state, and the only one that sees the store. Must not decide:
which pod goes or is evicted is `decisions`'.
"""

from .classification import running_units
from .pod_groups import gang_minimum, gang_problem, gang_unready
from .quota_engine import QuotaEngine
from .snapshot import Snapshot, StaleSnapshot
from .store import Member

__all__ = [
    "Member",
    "QuotaEngine",
    "Snapshot",
    "StaleSnapshot",
    "gang_minimum",
    "gang_problem",
    "gang_unready",
    "running_units",
]
