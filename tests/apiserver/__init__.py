"""An emulated kube-apiserver 1.32 for tests and benchmarks (see server.ApiServer).

async with ApiServer(Config(window=100), serving=pod_group_crds()) as api:  # more CRDs
    api.seed(node("n1"), pod("p1"))                 # stored as a create would, no admission
    api.admission.configure(render(), {("ns", "svc", 443): "127.0.0.1:9443"})
    api.users["op-token"] = User("system:serviceaccount:ns:op")
    api.fault("PATCH", "pods", status=500, times=2)
    api.write_kubeconfig(path, token="op-token")    # for kubectl, Kopf, the product
    api.compact(); api.watch_error(410); api.close_watches()
    api.get("podgroups.scheduling.x-k8s.io", "train", "team-b")  # a CRD's objects: plural.group
    await api.go_down(); await api.come_up()

The chart's CRDs are served from the start: the ElasticQuota's and Koordinator's
ElasticQuotaProfile (`Config(profiles=False)`: a cluster without it).

For kubectl (tests/kubectl.py runs it against `api.write_kubeconfig`): aggregated and legacy
discovery, Tables (tables.py), `/openapi/v3` (openapi.py) with `fieldValidation` (schemas.py),
custom resources checked against their CRD's schema (schemas.py), merge, JSON and strategic merge
patches (patching.py), label and field selectors. Not served:
protobuf bodies (typed commands such as `kubectl create namespace`: 415), server-side apply,
`/openapi/v2`, the scale subresource.

A request goes from server.py (the state and the helpers above) to routing.py (user, resource,
verb, injected faults), then to reading.py (GET, LIST, WATCH), writing.py (admission.py's
webhooks, strategies.py's rules, storage.py) or discovery.py (the URLs that are not resources).
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
