"""PodDisruptionBudgets (policy/v1) as reclaim reads them: which pods each covers, and how many
disruptions it allows now.

A reclaim plan skips a candidate that a budget covering one of its pods could not let go
(`status.disruptionsAllowed`, as the disruption controller last wrote it): it takes the next
candidate instead, rather than asking the Eviction API for a refusal. The Eviction API still
has the last word. Matching is Kubernetes': a budget covers the pods of its own namespace that
its `spec.selector` selects; an empty selector (`{}`) selects every pod there, a missing one
none.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .errors import ObjectError


@dataclass(frozen=True, slots=True)
class Requirement:
    """One `matchExpressions` entry."""

    key: str
    operator: str
    values: frozenset[str]

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self.operator == "In":
            return labels.get(self.key) in self.values
        if self.operator == "NotIn":
            return labels.get(self.key) not in self.values
        if self.operator == "Exists":
            return self.key in labels
        return self.key not in labels  # DoesNotExist


@dataclass(frozen=True, slots=True)
class DisruptionBudget:
    key: str
    """`namespace/name`."""
    namespace: str
    match_labels: tuple[tuple[str, str], ...] | None
    """None: the budget has no selector and covers no pod."""
    expressions: tuple[Requirement, ...] = ()
    allowed: int = 0
    """`status.disruptionsAllowed`; 0 until the disruption controller has written it."""

    def covers(self, namespace: str, labels: Mapping[str, str]) -> bool:
        if self.match_labels is None or namespace != self.namespace:
            return False
        return all(labels.get(k) == v for k, v in self.match_labels) and all(
            requirement.matches(labels) for requirement in self.expressions
        )


_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


def parse_disruption_budget(raw: Mapping[str, Any]) -> DisruptionBudget:
    """A PodDisruptionBudget from its Kubernetes dict; `ObjectError` names a malformed field."""
    metadata = raw.get("metadata") or {}
    namespace, name = metadata.get("namespace", ""), metadata.get("name", "")
    ref = f"{namespace}/{name}"

    def fail(field: str, message: str) -> ObjectError:
        return ObjectError("PodDisruptionBudget", ref, field, message)

    selector = (raw.get("spec") or {}).get("selector")
    allowed = (raw.get("status") or {}).get("disruptionsAllowed", 0)
    if not isinstance(allowed, int):
        raise fail("status.disruptionsAllowed", f"{allowed!r} is not a whole number")
    if selector is None:
        return DisruptionBudget(ref, namespace, None, allowed=allowed)
    if not isinstance(selector, Mapping):
        raise fail("spec.selector", "expected a label selector")
    labels = selector.get("matchLabels") or {}
    if not isinstance(labels, Mapping):
        raise fail("spec.selector.matchLabels", "expected a map of labels")
    requirements = []
    for index, entry in enumerate(selector.get("matchExpressions") or ()):
        field = f"spec.selector.matchExpressions[{index}]"
        operator = entry.get("operator") if isinstance(entry, Mapping) else None
        if operator not in _OPERATORS:
            raise fail(
                f"{field}.operator", f"{operator!r}; expected one of {', '.join(_OPERATORS)}"
            )
        values = entry.get("values") or ()
        requirements.append(Requirement(str(entry.get("key", "")), operator, frozenset(values)))
    return DisruptionBudget(
        ref,
        namespace,
        tuple(sorted((str(k), str(v)) for k, v in labels.items())),
        tuple(requirements),
        allowed,
    )
