"""An emulated kube-apiserver 1.32 for tests and benchmarks (see server.ApiServer): what a real
server cannot be made to do on demand, and what the product's processes ask of it.

async with ApiServer(Config(window=100), serving=pod_group_crds()) as api:  # more CRDs
    api.seed(node("n1"), pod("p1"))                 # stored as a create would, no admission
    api.users["op-token"] = User("system:serviceaccount:ns:op")
    api.fault("PATCH", "pods", status=500, times=2)
    api.write_kubeconfig(path, token="op-token")    # for the product's processes
    api.compact(); api.watch_error(410); api.close_watches()
    api.get("podgroups.scheduling.x-k8s.io", "train", "team-b")  # a CRD's objects: plural.group
    await api.go_down(); await api.come_up()

The chart's CRDs are served from the start: the ElasticQuota's and Koordinator's
ElasticQuotaProfile (`Config(profiles=False)`: a cluster without it).

Served: storage with lists (label and field selectors, pages) and watches (bookmarks, 410 Gone,
ERROR events, compaction); get, create, update, delete and merge, JSON and strategic merge
patches (patching.py), with `fieldValidation` and custom resources checked against their CRD's
schema (schemas.py); the status, eviction and binding subresources; legacy discovery (`/api`,
`/apis`, a group version's resources: Kopf and the operator read them); the access each
component asked for (access.py). Not served: aggregated discovery, `/version`, `/openapi`,
Tables, admission webhooks, protobuf, server-side apply, the scale subresource: kubectl and the
chart's webhooks meet the real control plane (tests/control_plane) only.

A request goes from server.py (the state and the helpers above) to routing.py (user, resource,
verb, injected faults), then to reading.py (GET, LIST, WATCH) or writing.py (admission.py's
seam, strategies.py's rules, storage.py).
"""

from .admission import User
from .errors import ApiError, disruption_budget
from .faults import Fault
from .resources import pod_group_crds
from .server import ApiServer, Config

__all__ = [
    "ApiError",
    "ApiServer",
    "Config",
    "Fault",
    "User",
    "disruption_budget",
    "pod_group_crds",
]
