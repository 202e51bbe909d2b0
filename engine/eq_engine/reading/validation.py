"""The full validation, loaded when first needed: `parsing.py`'s readings, whose pydantic models
are imported the first time an object needs them (one the fast paths of `pods.py`, `quotas.py`
and `nodes.py` are unsure of). A process that reads a healthy cluster never loads pydantic:
0.1 s of every operator's and webhook's start."""

from __future__ import annotations

from ..model import ResourceList
from .fields import ElasticQuotaFields, NodeFields, PodFields
from .raw import RawElasticQuota, RawNode, RawPod


def quota_fields(raw: RawElasticQuota) -> ElasticQuotaFields:
    from . import parsing

    return parsing.quota_fields(raw)


def status_used(raw: RawElasticQuota) -> ResourceList | None:
    from . import parsing

    return parsing.status_used(raw)


def pod_fields(raw: RawPod) -> PodFields:
    from . import parsing

    return parsing.pod_fields(raw)


def node_fields(raw: RawNode) -> NodeFields:
    from . import parsing

    return parsing.node_fields(raw)
