"""A new pod's node affinity for the node pool of its quota tree, as Koordinator's pod webhook
adds it (pkg/webhook/pod/mutating/multi_quota_tree_affinity.go at a7a1b76).

The pool's node selector becomes node selector requirements: each `matchLabels` entry
`key In [value]` (keys sorted: Go's map order is random, a patch should not be), then the
`matchExpressions` as written. They are added to every term of the pod's
`requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms` (terms are ORed, so each must
keep the pod in the pool), or make the one term when there is none; missing `affinity`,
`nodeAffinity` and required objects are made. `matchFields` are left as they are.

Where this differs from Koordinator: a requirement a term carries already is not added again
(the same condition; and a reinvoked webhook changes nothing), and a pool of every node (`{}`)
adds nothing, where Koordinator would add an empty term, which matches no node.

Warnings, for the admission response, when the pod's own constraints exclude the pool's nodes:
its `spec.nodeSelector` contradicts a pool requirement, or every term, once merged, asks the
impossible of one label (In sets that do not meet, In or Exists against DoesNotExist, NotIn
covering every In value).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final, NamedTuple

from ..model import LabelSelector, ObjectError, Requirement, satisfiable

REQUIRED: Final = "requiredDuringSchedulingIgnoredDuringExecution"
_PATH: Final = ("affinity", "nodeAffinity", REQUIRED)
_TERMS: Final = f"spec.affinity.nodeAffinity.{REQUIRED}.nodeSelectorTerms"
_WONT: Final = "the pod will not schedule: "
"""First: the API server may cut a warning of over 256 characters short."""


class PoolAffinity(NamedTuple):
    patch: list[dict[str, Any]]
    """JSON patch operations (RFC 6902) on the pod; empty when it has the affinity already."""
    warnings: list[str]


def node_requirement(requirement: Requirement) -> dict[str, Any]:
    """A `NodeSelectorRequirement` as the API writes it (no `values` when there are none)."""
    entry: dict[str, Any] = {"key": requirement.key, "operator": requirement.operator}
    if requirement.values:
        entry["values"] = list(requirement.values)
    return entry


def pool_affinity(pod: Mapping[str, Any], selector: LabelSelector, *, pool: str) -> PoolAffinity:
    """What keeps `pod` (as admission sends it) on the nodes `selector` selects; `pool` names
    them in warnings, e.g. "ElasticQuotaProfile kube-system/gpu-a". `ObjectError` when the
    affinity to extend is not shaped as the API's."""
    metadata = pod.get("metadata") or {}
    name = metadata.get("name") or metadata.get("generateName", "")  # no name yet: generated
    ref = f"{metadata.get('namespace', '')}/{name}"
    wanted = [node_requirement(r) for r in selector.requirements]
    if not wanted:
        return PoolAffinity([], [])
    spec = pod.get("spec") or {}
    warnings = _selector_warnings(spec.get("nodeSelector"), selector, pool)
    holder, path, field = spec, "/spec", "spec"
    for depth, key in enumerate(_PATH):
        child = _object(holder.get(key), ref, f"{field}.{key}")
        if child is None:
            value: Any = {"nodeSelectorTerms": [{"matchExpressions": wanted}]}
            for outer in reversed(_PATH[depth + 1 :]):
                value = {outer: value}
            return PoolAffinity([_add(f"{path}/{key}", value)], warnings)
        holder, path, field = child, f"{path}/{key}", f"{field}.{key}"
    terms = holder.get("nodeSelectorTerms")
    if terms is None:
        terms = []
    if not isinstance(terms, list):
        raise ObjectError("Pod", ref, _TERMS, "expected a list of node selector terms")
    if not terms:
        return PoolAffinity(
            [_add(f"{path}/nodeSelectorTerms", [{"matchExpressions": wanted}])], warnings
        )
    patch = []
    conflicts = []
    for index, raw in enumerate(terms):
        term = _object(raw, ref, f"{_TERMS}[{index}]")
        if term is None:  # a null term: nothing to add requirements to
            raise ObjectError("Pod", ref, f"{_TERMS}[{index}]", "expected a node selector term")
        expressions = term.get("matchExpressions")
        if expressions is not None and not isinstance(expressions, list):
            raise ObjectError("Pod", ref, f"{_TERMS}[{index}].matchExpressions", "expected a list")
        at = f"{path}/nodeSelectorTerms/{index}/matchExpressions"
        missing = [entry for entry in wanted if entry not in (expressions or ())]
        if expressions is None:
            patch.append(_add(at, missing))
        else:
            patch.extend(_add(f"{at}/-", entry) for entry in missing)
        conflicts.append(_term_conflict(index, expressions or (), selector, pool))
    if all(conflicts):  # no term lets the pod onto the pool
        warnings.extend(conflicts)
    return PoolAffinity(patch, warnings)


def _add(path: str, value: Any) -> dict[str, Any]:
    return {"op": "add", "path": path, "value": value}


def _object(value: object, ref: str, field: str) -> Mapping[str, Any] | None:
    if value is None or isinstance(value, Mapping):
        return value
    raise ObjectError("Pod", ref, field, "expected an object")


def _selector_warnings(node_selector: object, selector: LabelSelector, pool: str) -> list[str]:
    """`spec.nodeSelector` entries that no node of the pool can have."""
    if not isinstance(node_selector, Mapping):
        return []
    return [
        f"{_WONT}spec.nodeSelector {r.key}={node_selector[r.key]} excludes the nodes of {pool} "
        f"({r})"
        for r in selector.requirements
        if r.key in node_selector and not r.matches({r.key: str(node_selector[r.key])})
    ]


def _term_conflict(
    index: int, expressions: Sequence[Any], selector: LabelSelector, pool: str
) -> str:
    """Why term `index`, with the pool's requirements added, matches no node; "" if it may."""
    own = list(enumerate(_readable(expressions)))
    for key in dict.fromkeys(r.key for r in selector.requirements):
        theirs = [r for r in selector.requirements if r.key == key]
        mine = [(at, r) for at, r in own if r.key == key]
        if mine and not satisfiable([r for _, r in mine] + theirs):
            written = ", ".join(f"matchExpressions[{at}] ({r})" for at, r in mine)
            needed = ", ".join(str(r) for r in theirs)
            return f"{_WONT}{_TERMS}[{index}] {written} excludes the nodes of {pool} ({needed})"
    return ""


def _readable(expressions: Sequence[Any]) -> Iterable[Requirement]:
    """The pod's requirements, one per entry; an entry that does not read constrains nothing
    here (the API server refuses it once admission is done): it has no key."""
    for entry in expressions:
        values = entry.get("values") if isinstance(entry, Mapping) else None
        if isinstance(entry, Mapping) and isinstance(values or [], list):
            key, operator = str(entry.get("key")), str(entry.get("operator"))
            yield Requirement(key, operator, tuple(str(value) for value in values or ()))
        else:
            yield Requirement("", "")
