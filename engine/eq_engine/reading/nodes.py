"""Reading a Node: the full validation (`parsing.node_fields`, the rule) or a fast path for the
shapes the API server serves, which gives the same fields or steps aside; then the Node.

An operator and a webhook read every node of the cluster at start-up, and again on each status
update the kubelets send: through the models a node costs about three times what the fast
path's lookups cost (`lookups.py`), and the models would be loaded for it alone.
"""

from __future__ import annotations

from ..model import Node
from . import validation
from .fields import NodeFields
from .lookups import as_struct, in_units, metadata, read_fields
from .raw import RawNode, RawNodeSpec, RawNodeStatus


def parse_node(raw: RawNode) -> Node:
    """A Node from its Kubernetes dict. Raises `ObjectError` naming the field when it cannot be
    read."""
    return _build(read_fields(raw, fast_node_fields, validation.node_fields))


def fast_node_fields(raw: RawNode) -> NodeFields:
    """The fields `parsing.node_fields` reads, by the lookups of `lookups.py` and the structs of
    `raw.py`; `Unsure` when in doubt."""
    meta = metadata(raw)
    spec = as_struct(raw.get("spec"), RawNodeSpec)
    status = as_struct(raw.get("status"), RawNodeStatus)
    return NodeFields(
        meta=meta,
        allocatable=in_units(status.allocatable or {}),
        unschedulable=bool(spec.unschedulable),
        conditions=tuple((c.type or "", c.status or "") for c in status.conditions or ()),
    )


def _build(fields: NodeFields) -> Node:
    ready = any(kind == "Ready" and state == "True" for kind, state in fields.conditions)
    return Node(
        name=fields.meta.name,
        allocatable=fields.allocatable,
        labels=fields.meta.labels,
        schedulable=ready and not fields.unschedulable,
    )
