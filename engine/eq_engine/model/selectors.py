"""Kubernetes label selectors (metav1.LabelSelector): read once, then matched against labels.

PodDisruptionBudgets select pods with one (`spec.selector`), ElasticQuotaProfiles nodes
(`spec.nodeSelector`). Kubernetes reads both alike (`LabelSelectorAsSelector`): `{}` selects
everything, a missing selector nothing; `parse_selector` returns None for the latter and each
caller says what it means there. A selector is checked as the API server checks it
(`ValidateLabelSelector`): an unknown operator, `In`/`NotIn` without values or
`Exists`/`DoesNotExist` with values raise `ObjectError` naming the field at fault.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from .errors import ObjectError

OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")
_WITH_VALUES = ("In", "NotIn")


@dataclass(frozen=True, slots=True)
class Requirement:
    """One condition on one label: a `matchExpressions` entry, or a `matchLabels` one as
    `key In [value]`."""

    key: str
    operator: str
    """One of `OPERATORS`."""
    values: tuple[str, ...] = ()
    """As written: copied in this order where a requirement is written out again."""

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self.operator == "In":
            return labels.get(self.key) in self.values
        if self.operator == "NotIn":
            return labels.get(self.key) not in self.values
        if self.operator == "Exists":
            return self.key in labels
        return self.key not in labels  # DoesNotExist

    def __str__(self) -> str:
        """`zone In [a, b]`, `gpu Exists`: as a message shows it."""
        values = f" [{', '.join(self.values)}]" if self.values else ""
        return f"{self.key} {self.operator}{values}"


@dataclass(frozen=True, slots=True)
class LabelSelector:
    """A selector that selects something: everything when it holds no condition."""

    match_labels: tuple[tuple[str, str], ...] = ()
    """Sorted by key: Go's maps have no order, so none is kept."""
    expressions: tuple[Requirement, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        return all(labels.get(key) == value for key, value in self.match_labels) and all(
            requirement.matches(labels) for requirement in self.expressions
        )

    @property
    def requirements(self) -> tuple[Requirement, ...]:
        """Every condition as a requirement: the `matchLabels` entries (`key In [value]`, by
        key), then the `matchExpressions` as written."""
        labels = tuple(Requirement(key, "In", (value,)) for key, value in self.match_labels)
        return labels + self.expressions


def parse_selector(raw: object, *, kind: str, ref: str, field: str) -> LabelSelector | None:
    """The selector of object `kind` `ref` at `field` (e.g. `spec.selector`); None when
    missing. `ObjectError` names what is malformed, e.g. `spec.selector.matchExpressions[0]`."""

    def fail(where: str, message: str) -> ObjectError:
        return ObjectError(kind, ref, field + where, message)

    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise fail("", "expected a label selector")
    labels = raw.get("matchLabels") or {}
    if not isinstance(labels, Mapping):
        raise fail(".matchLabels", "expected a map of labels")
    for key, value in labels.items():
        if not isinstance(value, str):
            raise fail(f".matchLabels[{key}]", f"{value!r}: expected a label value (a string)")
    entries = raw.get("matchExpressions") or ()
    if not isinstance(entries, Sequence) or isinstance(entries, str):
        raise fail(".matchExpressions", "expected a list of requirements")
    expressions = tuple(
        _requirement(entry, f".matchExpressions[{index}]", fail)
        for index, entry in enumerate(entries)
    )
    return LabelSelector(tuple(sorted((str(k), v) for k, v in labels.items())), expressions)


def _requirement(entry: object, at: str, report: Callable[[str, str], ObjectError]) -> Requirement:
    """One `matchExpressions` entry, at `at` below the selector."""

    def fail(where: str, message: str) -> ObjectError:
        return report(at + where, message)

    if not isinstance(entry, Mapping):
        raise fail("", "expected a requirement (key, operator, values)")
    key, operator = entry.get("key"), entry.get("operator")
    if not isinstance(key, str) or not key:
        raise fail(".key", "required: the label's name")
    if operator not in OPERATORS:
        raise fail(".operator", f"{operator!r}; expected one of {', '.join(OPERATORS)}")
    values = entry.get("values") or []
    if not isinstance(values, list) or not all(isinstance(value, str) for value in values):
        raise fail(".values", f"{values!r}: expected a list of label values (strings)")
    if operator in _WITH_VALUES and not values:
        raise fail(".values", f"required when the operator is {operator}")
    if operator not in _WITH_VALUES and values:
        raise fail(".values", f"must be empty when the operator is {operator}")
    return Requirement(key, operator, tuple(values))


def satisfiable(requirements: Iterable[Requirement]) -> bool:
    """Whether some value (or its absence) of one label meets every requirement on it."""
    allowed: set[str] | None = None
    excluded: set[str] = set()
    present = absent = False
    for r in requirements:
        if r.operator == "In":
            allowed = set(r.values) if allowed is None else allowed & set(r.values)
        elif r.operator == "NotIn":
            excluded |= set(r.values)
        elif r.operator == "DoesNotExist":
            absent = True
        elif r.operator in ("Exists", "Gt", "Lt"):
            present = True
    if absent:
        return allowed is None and not present
    return allowed is None or bool(allowed - excluded)


def may_use(node_terms: Sequence[Sequence[Requirement]] | None, selector: LabelSelector) -> bool:
    """Whether a pod of these node constraints (`Pod.node_terms`: any term, each a list of
    requirements) may go to some node `selector` selects, as far as labels tell: a term whose
    requirements on a label contradict the selector's excludes the selector's nodes."""
    if node_terms is None:
        return True
    theirs = selector.requirements
    return any(
        all(
            satisfiable([r for r in term if r.key == key] + [r for r in theirs if r.key == key])
            for key in {r.key for r in theirs}
        )
        for term in node_terms
    )
