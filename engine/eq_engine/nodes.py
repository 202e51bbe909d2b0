"""Reading a Node: the full validation (`parsing.node_fields`, the rule) or a fast path for the
shapes the API server serves, which gives the same fields or steps aside; then the Node.

An operator and a webhook read every node of the cluster at start-up, and again on each status
update the kubelets send: through the models a node costs about three times what the fast
path's lookups cost (`lookups.py`), and the models would be loaded for it alone.
"""

from __future__ import annotations

from typing import Any

from . import validation
from .fields import NodeFields
from .lookups import Unsure, in_units, mapping, metadata, quantities, read_fields
from .objects import Node
from .raw import RawNode


def parse_node(raw: RawNode) -> Node:
    """A Node from its Kubernetes dict. Raises `ObjectError` naming the field when it cannot be
    read."""
    return _build(read_fields(raw, fast_node_fields, validation.node_fields))


def fast_node_fields(raw: RawNode) -> NodeFields:
    """The fields `parsing.node_fields` reads, by the lookups of `lookups.py`; `Unsure` when in
    doubt."""
    meta = metadata(raw)
    spec, status = mapping(raw, "spec"), mapping(raw, "status")
    unschedulable = spec.get("unschedulable")
    if unschedulable is not None and type(unschedulable) is not bool:
        raise Unsure  # the models read "true" and 1 as booleans too
    conditions = status.get("conditions")
    if conditions is not None and type(conditions) is not list:
        raise Unsure
    return NodeFields(
        meta=meta,
        allocatable=in_units(quantities(status, "allocatable")),
        unschedulable=bool(unschedulable),
        conditions=tuple(map(_condition, conditions or ())),
    )


def _condition(condition: Any) -> tuple[str, str]:
    if type(condition) is not dict:
        raise Unsure
    kind, state = condition.get("type"), condition.get("status")
    if not (kind is None or type(kind) is str) or not (state is None or type(state) is str):
        raise Unsure
    return kind or "", state or ""


def _build(fields: NodeFields) -> Node:
    ready = any(kind == "Ready" and state == "True" for kind, state in fields.conditions)
    return Node(
        name=fields.meta.name,
        allocatable=fields.allocatable,
        labels=fields.meta.labels,
        schedulable=ready and not fields.unschedulable,
    )
