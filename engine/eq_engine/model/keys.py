"""Every label and annotation key the product reads or writes (docs/how-it-works.md).

The keys Koordinator has share its prefix, so that objects written for Koordinator load
unchanged; where the seed documents and Koordinator spell a key differently, both are read.
What Koordinator has no key for is under the product's own prefix (`OWN_PREFIX`).
"""

from typing import Final

PREFIX: Final = "quota.scheduling.koordinator.sh/"
OWN_PREFIX: Final = "elastic-quota.dev/"

# ElasticQuota labels, written by users.
IS_PARENT: Final = PREFIX + "is-parent"
PARENT: Final = PREFIX + "parent"  # Koordinator's current spelling
PARENT_SEED: Final = PREFIX + "parent-quota-name"  # the seed documents' spelling
ALLOW_LENT: Final = PREFIX + "allow-lent-resource"
FORCE_UPDATE: Final = PREFIX + "allow-force-update"  # skips the min-sum checks (Koordinator)
TREE_ID: Final = PREFIX + "tree-id"  # the quota tree (node pool) the group is in; "": the default
IGNORE_DEFAULT_TREE: Final = PREFIX + "ignore-default-tree"  # "true": the pool is not taken from
# the default tree's total (a pool outside the cluster's nodes)

# ElasticQuota labels and annotations of a tree's root, written by the operator from an
# ElasticQuotaProfile (quota.koordinator.sh/v1alpha1), as Koordinator's profile controller does.
IS_ROOT: Final = PREFIX + "is-root"  # "true": the group is its tree's root
PROFILE: Final = PREFIX + "profile"  # the profile's name
TOTAL_RESOURCE: Final = PREFIX + "total-resource"  # the pool's total: the tree's to split
UNSCHEDULABLE_RESOURCE: Final = PREFIX + "unschedulable-resource"  # cordoned, NotReady nodes'

# ElasticQuotaProfile annotation, written by users.
RESOURCE_KEYS: Final = PREFIX + "resource-keys"  # the resources of the root's min and max

# ElasticQuota annotations, written by users.
SHARED_WEIGHT: Final = PREFIX + "shared-weight"
NAMESPACES: Final = PREFIX + "namespaces"
STRICT_MAX_KEYS: Final = PREFIX + "max-strict-check-resource-keys"  # max must cover status.used

# ElasticQuota annotations, written by users: the product's own (Kueue's limits, KEP-1224), JSON
# resource lists as shared-weight is.
LENDING_LIMIT: Final = OWN_PREFIX + "lending-limit"  # at most this much of its min is ever lent
BORROWING_LIMIT: Final = OWN_PREFIX + "borrowing-limit"  # runtime at most min plus this
POOLS: Final = OWN_PREFIX + "pools"  # its pods go to one of these groups (JSON list, in order),
# each in its own tree: the first with room without borrowing, else with borrowing

# Pod label, written by the operator: the group of `pools` its gate chose for the pod.
POOL_QUOTA: Final = OWN_PREFIX + "pool-quota"

# ElasticQuota annotations, written by the operator.
RUNTIME: Final = PREFIX + "runtime"
REQUEST: Final = PREFIX + "request"
USED: Final = PREFIX + "used"
WAITING: Final = PREFIX + "waiting-pods"  # held by the gate: "4", "8 (2 gangs)"; absent: none
LAST_RECLAIM: Final = PREFIX + "last-reclaim"  # when the group's last reclaim round began
REQUEUED_GANGS: Final = PREFIX + "requeued-gangs"  # gangs evicted whole for not starting in time:
# {"gang:ns/name": {"times": 2, "until": "2026-12-05T08:10:00Z"}}

# Pod labels.
POD_QUOTA: Final = PREFIX + "name"  # Koordinator's spelling
POD_QUOTA_SEED: Final = PREFIX + "quota-name"  # the seed documents' spelling
PREEMPTIBLE: Final = PREFIX + "preemptible"
CAPACITY: Final = PREFIX + "capacity"  # written by the operator
GATE_OPT_OUT: Final = PREFIX + "gate"  # "false": the webhook never gates the pod

# Job annotation, written by users: "false": the pods reclaim takes count as the Job's failures.
SPARE_JOB: Final = PREFIX + "spare-job"

# The scheduling gate the webhook puts on new pods and the operator lifts when quota admits them.
ADMISSION_GATE: Final = PREFIX + "admission"

# Kubernetes' own: the kubelet's mirror of a static pod carries this annotation.
MIRROR: Final = "kubernetes.io/config.mirror"

IN_QUOTA: Final = "in-quota"
OVER_QUOTA: Final = "over-quota"
