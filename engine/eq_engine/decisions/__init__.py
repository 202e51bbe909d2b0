"""What to do now.

Which gated pods may go and why the others wait (`admissions`), which pods give a guarantee
back (`reclaims`, `reclaim_plan`), which make room in their group for a more important waiting
pod (`preemptions`), which admitted gangs did not start in time (`stalled`), the webhook's
verdicts on one ElasticQuota or Pod write (`review_quota`, `review_pod`) and the tree id a new
group takes from its parent (`inherited_tree_id`), and which new pods wait behind the gate
(`gate_exemption`).

Each reads the engine and returns frozen plans. Must not change the engine's state, and knows
nothing of how a plan is carried out.
"""

from .admission import Admissions, Blocked, admissions
from .gating import gate_exemption
from .preemption import GroupPreemption, preemption_plan, preemptions
from .queueing import Cause, queue_order
from .reclaim import Candidate, GroupReclaim, Victim, reclaim_plan, reclaims
from .requeue import Stall, backoff, stalled, started
from .verdicts import (
    BoundPodQuery,
    Operation,
    Verdict,
    bound_pod_query,
    inherited_tree_id,
    needs_bound_pods,
    review_pod,
    review_quota,
)

__all__ = [
    "Admissions",
    "Blocked",
    "BoundPodQuery",
    "Candidate",
    "Cause",
    "GroupPreemption",
    "GroupReclaim",
    "Operation",
    "Stall",
    "Verdict",
    "Victim",
    "admissions",
    "backoff",
    "bound_pod_query",
    "gate_exemption",
    "inherited_tree_id",
    "needs_bound_pods",
    "preemption_plan",
    "preemptions",
    "queue_order",
    "reclaim_plan",
    "reclaims",
    "review_pod",
    "review_quota",
    "stalled",
    "started",
]
