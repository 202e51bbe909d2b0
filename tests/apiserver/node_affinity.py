"""Which nodes a pod may run on, as kube-scheduler's NodeAffinity filter decides
(`k8s.io/component-helpers/scheduling/corev1/nodeaffinity`, `GetRequiredNodeAffinity`):

- `spec.nodeSelector`: every key=value is one of the node's labels;
- and `spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution`, when set:
  one of its `nodeSelectorTerms` matches (an empty list matches no node). A term with neither
  `matchExpressions` nor `matchFields` matches no node; otherwise all its requirements hold:
  `matchExpressions` on the node's labels (In, NotIn, Exists, DoesNotExist as label selectors
  read them, see selectors.py; Gt and Lt compare the label's value as a base-10 int64 and fail
  where it is missing or not one), `matchFields` on the node's fields (`metadata.name`; any
  other key reads as "").

A term the scheduler cannot parse matches no node, as `LazyErrorNodeSelector` skips it: an
unknown operator, In/NotIn without values, Exists/DoesNotExist with values, Gt/Lt without
exactly one integer, a `matchFields` requirement other than In/NotIn with one value. Keys and
values are not checked for label syntax (the API server refuses such pods at create).

Preferred affinity (a score, not a filter) and taints are other plugins' business: not here."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from .client import JSON
from .selectors import Labels, Match, from_label_selector

NodeMatch = Callable[[JSON], bool]
_INT64 = re.compile(r"[+-]?[0-9]+")  # what Go's strconv.ParseInt(v, 10, 64) reads
# The label selectors' operators (selectors.py), and whether each takes values or none.
_SET_BASED = {"In": True, "NotIn": True, "Exists": False, "DoesNotExist": False}


def allows(pod: JSON, node: JSON) -> bool:
    """Whether `node` passes the pod's `spec.nodeSelector` and required node affinity."""
    spec = pod.get("spec") or {}
    labels: Labels = node["metadata"].get("labels") or {}
    if not from_label_selector({"matchLabels": spec.get("nodeSelector") or {}})(labels):
        return False
    affinity = (spec.get("affinity") or {}).get("nodeAffinity") or {}
    required = affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    if required is None:
        return True
    terms = (_term(term) for term in required.get("nodeSelectorTerms") or ())
    return any(term is not None and term(node) for term in terms)


def _term(term: Mapping[str, Any]) -> NodeMatch | None:
    """A term's test of a node; None where it matches no node (empty, or not parseable)."""
    expressions, fields = term.get("matchExpressions") or (), term.get("matchFields") or ()
    if not expressions and not fields:
        return None
    on_labels = _all([_label_requirement(r) for r in expressions])
    on_fields = _all([_field_requirement(r) for r in fields])
    if on_labels is None or on_fields is None:
        return None

    def matches(node: JSON) -> bool:
        metadata = node["metadata"]
        node_fields = {"metadata.name": metadata["name"]}  # what `extractNodeFields` gives
        return on_labels(metadata.get("labels") or {}) and on_fields(node_fields)

    return matches


def _all(checks: list[Match | None]) -> Match | None:
    """Every one of `checks`; None where one is (a requirement the scheduler refuses)."""
    known = [check for check in checks if check is not None]
    if len(known) < len(checks):
        return None
    return lambda labels: all(check(labels) for check in known)


def _label_requirement(requirement: Mapping[str, Any]) -> Match | None:
    """One `matchExpressions` entry as `labels.NewRequirement` reads it; None if it refuses."""
    key, operator = requirement.get("key", ""), requirement.get("operator")
    values = list(requirement.get("values") or ())
    if operator in _SET_BASED and bool(values) == _SET_BASED[operator]:
        return from_label_selector({"matchExpressions": [requirement]})
    bound = _int64(values[0]) if operator in ("Gt", "Lt") and len(values) == 1 else None
    if bound is None:
        return None
    greater = operator == "Gt"

    def compare(labels: Labels) -> bool:
        value = _int64(labels.get(key))
        return value is not None and (value > bound if greater else value < bound)

    return compare


def _int64(text: str | None) -> int | None:
    if text is None or not _INT64.fullmatch(text):
        return None
    number = int(text)
    return number if -(2**63) <= number < 2**63 else None


def _field_requirement(requirement: Mapping[str, Any]) -> Match | None:
    """One `matchFields` entry: In or NotIn with exactly one value, else None (refused)."""
    key, operator = requirement.get("key", ""), requirement.get("operator")
    values = list(requirement.get("values") or ())
    if operator not in ("In", "NotIn") or len(values) != 1:
        return None
    equal = operator == "In"
    return lambda fields: (fields.get(key, "") == values[0]) == equal
