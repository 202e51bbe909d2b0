"""Kubernetes JSON into the model.

The wire's shapes (`Raw*` TypedDicts, msgspec structs for a pod's and a node's spec and
status), the fields each object is read for, a fast path for the common object, and the full
validation (pydantic) as the rule, loaded only when an object needs it; a pod's request the
Kubernetes way; whether a Job has the pods reclaim takes counted as its failures; the gangs
the operator requeued, as it records them on a group.

Must not import any part of the engine but `model`, nor import pydantic when it is imported (a
healthy cluster is read without it). The engine's core never imports it: the edges read, the
core reasons on what was read.
"""

from .gangs import requeued_annotation, requeued_gangs
from .jobs import TRACKING_FINALIZER, counted_evictions
from .nodes import parse_node
from .pods import parse_pod
from .quota_reader import QuotaReader
from .quotas import parse_quota
from .raw import SCHEMAS, RawElasticQuota, RawNode, RawObjectMeta, RawPod

__all__ = [
    "SCHEMAS",
    "TRACKING_FINALIZER",
    "QuotaReader",
    "RawElasticQuota",
    "RawNode",
    "RawObjectMeta",
    "RawPod",
    "counted_evictions",
    "parse_node",
    "parse_pod",
    "parse_quota",
    "requeued_annotation",
    "requeued_gangs",
]
