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
from .selectors import LabelSelector, parse_selector


@dataclass(frozen=True, slots=True)
class DisruptionBudget:
    key: str
    """`namespace/name`."""
    namespace: str
    selector: LabelSelector | None
    """None: the budget has no selector and covers no pod."""
    allowed: int = 0
    """`status.disruptionsAllowed`; 0 until the disruption controller has written it."""

    def covers(self, namespace: str, labels: Mapping[str, str]) -> bool:
        if self.selector is None or namespace != self.namespace:
            return False
        return self.selector.matches(labels)


def parse_disruption_budget(raw: Mapping[str, Any]) -> DisruptionBudget:
    """A PodDisruptionBudget from its Kubernetes dict; `ObjectError` names a malformed field."""
    metadata = raw.get("metadata") or {}
    namespace, name = metadata.get("namespace", ""), metadata.get("name", "")
    ref = f"{namespace}/{name}"
    allowed = (raw.get("status") or {}).get("disruptionsAllowed", 0)
    if not isinstance(allowed, int):
        raise ObjectError(
            "PodDisruptionBudget",
            ref,
            "status.disruptionsAllowed",
            f"{allowed!r} is not a whole number",
        )
    selector = parse_selector(
        (raw.get("spec") or {}).get("selector"),
        kind="PodDisruptionBudget",
        ref=ref,
        field="spec.selector",
    )
    return DisruptionBudget(ref, namespace, selector, allowed)
