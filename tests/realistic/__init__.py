"""Objects shaped like `kubectl get -o json` output on Kubernetes 1.30-1.32.

`tests/manifests.py` builds the few fields a rule reads; this package builds what a cluster
really holds: full metadata (uid, resourceVersion, managedFields, ownerReferences, the labels
each controller sets), the fields the API server defaults and the admission plugins inject,
and a status per phase. Feeding such objects to the product catches what minimal dicts hide.

Every value that a cluster would make up (uids, hashes, IPs, container ids) is derived from the
object's identity, so the objects are the same on every run (metadata.py).

    kubectl_list(
        koordinator_default_quota(),
        deployment_pod("shop", "web", requests={"cpu": "500m"}),
        job_pod("etl", "load", phase="Succeeded"),
        node("worker-1", cpu="8"),
    )

Pods: `pod` (pods.py, with its status from pod_status.py) and each controller's (workloads.py);
ElasticQuotas and Koordinator's built-in groups (quotas.py); nodes, namespaces and lists
(cluster.py); AdmissionReviews (reviews.py).
"""

from .cluster import kubectl_list, namespace, node
from .pods import named_by_server, pod
from .quotas import (
    NO_LIMIT,
    P,
    elastic_quota,
    elastic_quota_profile,
    koordinator_builtins,
    koordinator_default_quota,
    koordinator_root_quota,
    koordinator_system_quota,
)
from .reviews import REPLICASET_CONTROLLER, admission_review
from .workloads import (
    cronjob_pod,
    daemonset_pod,
    deployment_pod,
    job_pod,
    product_pods,
    statefulset_pod,
    static_mirror_pod,
)

__all__ = [
    "NO_LIMIT",
    "REPLICASET_CONTROLLER",
    "P",
    "admission_review",
    "cronjob_pod",
    "daemonset_pod",
    "deployment_pod",
    "elastic_quota",
    "elastic_quota_profile",
    "job_pod",
    "koordinator_builtins",
    "koordinator_default_quota",
    "koordinator_root_quota",
    "koordinator_system_quota",
    "kubectl_list",
    "named_by_server",
    "namespace",
    "node",
    "pod",
    "product_pods",
    "statefulset_pod",
    "static_mirror_pod",
]
