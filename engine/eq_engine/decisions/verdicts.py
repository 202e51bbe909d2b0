"""Admission reviews: the webhook's decision on one ElasticQuota or pod CREATE, UPDATE or DELETE.

`review_quota` and `review_pod` judge one operation against a `Catalog` of the existing objects
and return a `Verdict`: the denials (`Problem`s naming the object, the field and the numbers)
and the warnings. The checks of a group and the tree around it are `checks.py`'s; the rules
here are those of the operation: built-in groups, names taken in another namespace, becoming
or ceasing to be a parent, deletions, and the pod rules.

`inherited_tree_id` is the one default a new group is given before it is judged: its parent's
tree id, as Koordinator's mutating webhook fills it in.

Pure: the pods a rule needs (`bound_pod_query`) are looked up by the caller and passed in.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from enum import StrEnum

from ..model import SHOWN, Pod, Problem, Quota, ResourceList, keys, listing
from ..tree import Catalog, checks, quota_problem


class Operation(StrEnum):
    CREATE = "CREATE"
    UPDATE = "UPDATE"
    DELETE = "DELETE"


@dataclass(frozen=True, slots=True)
class Verdict:
    denials: tuple[Problem, ...] = ()
    warnings: tuple[str, ...] = ()

    @property
    def allowed(self) -> bool:
        return not self.denials

    @property
    def message(self) -> str:
        return "; ".join(str(denial) for denial in self.denials)


@dataclass(frozen=True, slots=True)
class BoundPodQuery:
    """Where to look for the pods bound to a group: these label values, these namespaces."""

    name: str
    namespaces: tuple[str, ...]
    enough: int = SHOWN + 1
    """Pods that count (not finished) after which a lister may stop: a denial names a few."""


# ------------------------------------------------------------------------- the pods it needs


def needs_bound_pods(operation: Operation, new: Quota | None, old: Quota | None) -> bool:
    """Whether `review_quota` needs the group's pods: to delete it, to make it a parent, or to
    give a parent namespaces (whose pods would be bound to it)."""
    if operation is Operation.DELETE:
        return True
    return (
        new is not None
        and new.is_parent
        and ((old is not None and not old.is_parent) or bool(_gained(new, old)))
    )


def _gained(new: Quota, old: Quota | None) -> set[str]:
    """The namespaces the `namespaces` annotation gives the group with this change."""
    return set(new.namespaces) - set(old.namespaces if old is not None else ())


def bound_pod_query(quota: Quota, catalog: Catalog) -> BoundPodQuery:
    """Pods labelled with the group's name, and pods of the namespaces whose pods it owns."""
    namespaces = {ns for ns, owner in catalog.namespace_owner.items() if owner == quota.name}
    namespaces.update(quota.namespaces)
    if quota.name == quota.namespace:
        namespaces.add(quota.namespace)
    return BoundPodQuery(name=quota.name, namespaces=tuple(sorted(namespaces)))


@dataclass(frozen=True, slots=True)
class _Pods:
    """The pods a rule looks at, and whether they are all that `bound_pod_query` matches."""

    pods: tuple[Pod, ...]
    complete: bool = True

    def named(self, keys: Sequence[str]) -> str:
        return listing(keys, complete=self.complete)


def _bound(quota: Quota, pods: Iterable[Pod], catalog: Catalog) -> list[str]:
    """The pods that count in the group: finished ones (Succeeded, Failed) count nowhere."""
    return sorted(
        pod.key for pod in pods if not pod.terminal and catalog.group_of(pod)[0] == quota.name
    )


# ------------------------------------------------------------------------- ElasticQuota


def review_quota(
    operation: Operation,
    *,
    new: Quota | None,
    old: Quota | None,
    catalog: Catalog,
    capacity: ResourceList | None = None,
    pods: Iterable[Pod] = (),
    all_pods: bool = True,
) -> Verdict:
    """Whether an ElasticQuota CREATE, UPDATE or DELETE keeps the tree valid. `pods`: those
    `bound_pod_query` finds; `all_pods` False when the lister stopped after the first few."""
    found = _Pods(tuple(pods), all_pods)
    if operation is Operation.DELETE:
        assert old is not None
        return Verdict(tuple(_deletion_problems(old, catalog, found)))
    assert new is not None
    if operation is Operation.UPDATE and old is not None:
        if new == old:
            return Verdict()  # only keys the operator owns, or unrelated ones, changed
        changeable = new.name not in (catalog.config.root_name, catalog.config.system_name)
        if changeable and _same_place(new, old):
            return _settings_update(new, old, catalog, capacity, found)
    denials = list(_change_problems(operation, new, old, catalog, found))
    warnings = () if denials else tuple(checks.quota_warnings(new, catalog, capacity))
    return Verdict(tuple(denials), warnings)


def inherited_tree_id(new: Quota, catalog: Catalog) -> str | None:
    """The tree id a group created without one takes from its parent, before it is judged:
    Koordinator's mutating webhook fills it in so (`fillQuotaDefaultInformation`, in
    pkg/webhook/elasticquota/quota_topology.go at v1.8.0), and its validator then accepts the
    child. None when the group names a tree id, hangs from the root or a built-in group, or its
    parent is unknown (the validator says so) or in the default tree."""
    if new.tree_id:
        return None
    parent = catalog.quotas.get(catalog.parent_of(new))
    if parent is None or catalog.is_builtin(parent.name) or not parent.tree_id:
        return None
    return parent.tree_id


def _same_place(new: Quota, old: Quota) -> bool:
    """The edit leaves what the tree's rules look at as it was: the parent link, `is-parent`,
    the tree id, the `namespaces` annotation and the spec (Koordinator checks nothing then
    either: `quotaFieldsCopy` in its quota_topology_check.go)."""
    return (new.parent, new.is_parent, new.tree_id, new.namespaces, new.min, new.max) == (
        old.parent,
        old.is_parent,
        old.tree_id,
        old.namespaces,
        old.min,
        old.max,
    )


def _settings_update(
    new: Quota, old: Quota, catalog: Catalog, capacity: ResourceList | None, pods: _Pods
) -> Verdict:
    """An edit of settings only (shared weight, `allow-lent-resource`, ...): denied only for
    what it breaks itself; the problems the tree already has are warnings, so that a tree can
    always be repaired one step at a time."""
    before = set(checks.own_problems(old))
    denials = tuple(p for p in checks.own_problems(new) if p not in before)
    if denials:
        return Verdict(denials)
    standing = [
        f"the tree already has a problem: {problem.field}: {problem.message}"
        for problem in _change_problems(Operation.UPDATE, new, old, catalog, pods)
    ]
    return Verdict((), (*standing, *checks.quota_warnings(new, catalog, capacity)))


def _change_problems(
    operation: Operation, new: Quota, old: Quota | None, catalog: Catalog, pods: _Pods
) -> Iterator[Problem]:
    config = catalog.config
    if catalog.is_builtin(new.name):
        if new.namespace != config.namespace:
            yield quota_problem(
                new,
                "metadata.name",
                f"{new.name!r} is a built-in group, which lives in namespace {config.namespace!r}",
            )
        elif operation is Operation.UPDATE and new.name != config.default_name:
            yield quota_problem(new, "metadata.name", "the built-in group cannot be changed")
        if new.name != config.default_name:
            return
    existing = catalog.quotas.get(new.name)
    if (
        operation is Operation.CREATE
        and existing is not None
        and existing.namespace != new.namespace
    ):
        yield quota_problem(
            new,
            "metadata.name",
            f"an ElasticQuota named {new.name!r} already exists in "
            f"namespace {existing.namespace!r}; names are unique cluster-wide",
        )
        return
    yield from checks.own_problems(new)
    yield from checks.namespace_problems(new, catalog)
    if old is not None and old.tree_id != new.tree_id:  # Koordinator's checkTreeID
        yield quota_problem(
            new,
            checks.TREE_FIELD,
            f"cannot change ({checks.tree_id_text(old.tree_id)} -> "
            f"{checks.tree_id_text(new.tree_id)}): a group stays in the tree it was made in",
        )
    if not catalog.is_builtin(new.name):
        yield from checks.topology_problems(new, old, catalog)
    if old is not None and old.is_parent and not new.is_parent:
        children = catalog.children.get(new.name, ())
        if children:
            yield quota_problem(
                new,
                f"metadata.labels[{keys.IS_PARENT}]",
                f"cannot stop being a parent while it has child groups {listing(children)}",
            )
    if old is not None and new.is_parent and not old.is_parent:
        bound = _bound(new, pods.pods, catalog)
        if bound:
            yield quota_problem(
                new,
                f"metadata.labels[{keys.IS_PARENT}]",
                f"cannot become a parent while pods are bound to it: {pods.named(bound)}",
            )
    gained = _gained(new, old) if new.is_parent else set()
    arriving = sorted(
        pod.key
        for pod in pods.pods
        if pod.namespace in gained
        and not pod.terminal
        and not any(pod.quota_labels)
        and pod.namespace not in catalog.config.system_namespaces
    )
    if arriving:
        yield quota_problem(
            new,
            f"metadata.annotations[{keys.NAMESPACES}]",
            f"a parent group cannot take namespaces whose pods would be bound to it: "
            f"{pods.named(arriving)}",
        )


def _deletion_problems(old: Quota, catalog: Catalog, pods: _Pods) -> Iterator[Problem]:
    if catalog.is_builtin(old.name) and old.namespace == catalog.config.namespace:
        yield quota_problem(old, "metadata.name", "a built-in group cannot be deleted")
        return
    children = catalog.children.get(old.name, ())
    if children:
        yield quota_problem(
            old, "metadata.name", f"cannot delete a group with child groups: {listing(children)}"
        )
    bound = _bound(old, pods.pods, catalog)
    if bound:
        yield quota_problem(
            old,
            "metadata.name",
            f"cannot delete a group with pods bound to it: {pods.named(bound)}",
        )


# ------------------------------------------------------------------------- Pod


def review_pod(operation: Operation, *, new: Pod, old: Pod | None, catalog: Catalog) -> Verdict:
    """Pods may not be bound to a parent group, and `preemptible` may not change.

    An UPDATE is refused for its group only when it changes what decides the group (the quota
    labels) and the pod is not being deleted: a pod that is already where it is (a parent that
    claimed its namespace later, a pod made while the webhook was down) can still be changed,
    and above all have its finalizers removed.
    """
    problems: list[Problem] = []
    group, _ = catalog.group_of(new)
    judged = (
        operation is not Operation.UPDATE
        or old is None
        or (old.quota_labels != new.quota_labels and not new.terminating)
    )
    if judged and catalog.is_parent(group):
        labelled = any(new.quota_labels)
        field = f"metadata.labels[{keys.POD_QUOTA}]" if labelled else "metadata.namespace"
        problems.append(
            Problem("Pod", new.key, field, f"{group!r} is a parent group: pods belong in leaves")
        )
    if (
        old is not None
        and operation is Operation.UPDATE
        and (old.preemptible_label != new.preemptible_label)
    ):
        problems.append(
            Problem(
                "Pod",
                new.key,
                f"metadata.labels[{keys.PREEMPTIBLE}]",
                f"cannot change ({_label(old.preemptible_label)} -> "
                f"{_label(new.preemptible_label)})",
            )
        )
    return Verdict(tuple(problems))


def _label(value: str | None) -> str:
    return "unset" if value is None else repr(value)
