"""Configuration rules: what the admission webhook enforces and `simulate` reports.

Koordinator's webhook checks (koordinator-semantics.md 4) are the baseline; each rule is a
function returning `Problem`s that name the object, the field and the numbers, e.g.
`ElasticQuota team-a/ml: spec.min.cpu: 30 + siblings' 80 exceeds parent dept-a's min 100`.

`review_quota` and `review_pod` judge one admission against a `Catalog` of the existing
objects; `audit` applies the same rules to a whole catalog. Pure: the pods a rule needs
(`bound_pod_query`) are looked up by the caller and passed in.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from enum import StrEnum

from . import keys
from .catalog import Catalog, namespace_taken, quota_problem
from .objects import Pod, Quota
from .problems import SHOWN, Problem, listing
from .quantities import ResourceList, format_quantity


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


def _q(resource: str, amount: int) -> str:
    return format_quantity(resource, amount)


def _keys(resources: Iterable[str]) -> str:
    return "{" + ", ".join(sorted(resources)) + "}"


# ------------------------------------------------------------------------- the group itself


def self_problems(quota: Quota) -> Iterator[Problem]:
    """Values and keys of one ElasticQuota, whatever the rest of the tree is."""
    fields = {"spec.max": quota.max, "spec.min": quota.min}
    for path, resources in fields.items():
        for name, amount in sorted(resources.items()):
            if amount < 0:
                yield quota_problem(quota, f"{path}.{name}", f"{_q(name, amount)} is negative")
    for name, amount in sorted((quota.shared_weight or {}).items()):
        if amount < 0:
            field = f"metadata.annotations[{keys.SHARED_WEIGHT}]"
            yield quota_problem(quota, field, f"{name} {_q(name, amount)} is negative")
    for name, amount in sorted(quota.min.items()):
        if name not in quota.max:
            yield quota_problem(quota, f"spec.min.{name}", "the resource is not in spec.max")
        elif amount > quota.max[name]:
            yield quota_problem(
                quota,
                f"spec.min.{name}",
                f"{_q(name, amount)} exceeds spec.max.{name} {_q(name, quota.max[name])}",
            )
    for name in quota.strict_keys:
        used = quota.used.get(name)
        if used is None:
            continue
        if name not in quota.max:
            yield quota_problem(
                quota,
                "spec.max",
                f"has no {name}, but {keys.STRICT_MAX_KEYS} asks it to cover "
                f"status.used.{name} {_q(name, used)}",
            )
        elif quota.max[name] < used:
            yield quota_problem(
                quota,
                f"spec.max.{name}",
                f"{_q(name, quota.max[name])} is below "
                f"status.used.{name} {_q(name, used)} ({keys.STRICT_MAX_KEYS})",
            )
    label, seed_label = quota.parent_labels
    if label and seed_label and label != seed_label:
        yield quota_problem(
            quota,
            f"metadata.labels[{keys.PARENT}]",
            f"{label!r} disagrees with {keys.PARENT_SEED} {seed_label!r}; {label!r} is used",
        )


def _namespace_problems(quota: Quota, catalog: Catalog) -> Iterator[Problem]:
    for namespace in quota.namespaces:
        owner = catalog.namespace_owner.get(namespace)
        claimed = (
            owner is not None and owner != quota.name and namespace in _annotated(catalog, owner)
        )
        if claimed:
            assert owner is not None
            yield namespace_taken(quota, namespace, owner)


def _annotated(catalog: Catalog, name: str) -> tuple[str, ...]:
    quota = catalog.quotas.get(name)
    return quota.namespaces if quota else ()


# ------------------------------------------------------------------------- the tree around it


def _parent_link_problems(quota: Quota, catalog: Catalog) -> Iterator[Problem]:
    """The parent exists, may have children, and is not this group or below it."""
    parent = catalog.parent_of(quota)
    field = f"metadata.labels[{keys.PARENT}]"
    if parent == catalog.config.root_name:
        return
    if parent == quota.name:
        yield quota_problem(quota, field, "a group cannot be its own parent")
    elif not catalog.exists(parent):
        yield quota_problem(quota, field, f"parent {parent!r} does not exist")
    elif catalog.is_builtin(parent):
        yield quota_problem(quota, field, f"parent {parent!r} is a built-in group without children")
    elif parent in set(catalog.descendants(quota.name)):
        yield quota_problem(quota, field, f"parent {parent!r} is below this group: a cycle")
    elif not catalog.quotas[parent].is_parent:
        yield quota_problem(
            quota,
            field,
            f'parent {parent!r} is not a parent group ({keys.IS_PARENT} is not "true")',
        )


def _key_problems(child: Quota, parent: Quota, *, subject: Quota) -> Iterator[Problem]:
    """A child's max resources are its parent's, its min resources among the parent's min."""
    whose = "" if child is subject else f"child {child.name}'s "
    if set(child.max) != set(parent.max):
        yield quota_problem(
            subject,
            "spec.max",
            f"{whose}resources {_keys(child.max)} differ from parent {parent.name}'s "
            f"{_keys(parent.max)}",
        )
    extra = set(child.min) - set(parent.min)
    if extra:
        yield quota_problem(
            subject,
            "spec.min",
            f"{whose}resources {_keys(extra)} are not in parent {parent.name}'s min",
        )


def _sum(quotas: Iterable[Quota], resource: str) -> int:
    return sum(q.min.get(resource, 0) for q in quotas)


def _sibling_problems(quota: Quota, old: Quota | None, catalog: Catalog) -> Iterator[Problem]:
    """Σ min of the parent's children ≤ the parent's min, where this change made it worse."""
    parent_name = catalog.parent_of(quota)
    parent = catalog.quotas.get(parent_name)
    if parent is None or parent_name == catalog.config.root_name or quota.force_update:
        return
    moved = old is None or catalog.parent_of(old) != parent_name
    siblings = [catalog.quotas[n] for n in catalog.children.get(parent_name, ()) if n != quota.name]
    for name, amount in sorted(quota.min.items()):
        if not moved and old is not None and amount <= old.min.get(name, 0):
            continue
        others, limit = _sum(siblings, name), parent.min.get(name, 0)
        if amount + others > limit:
            yield quota_problem(
                quota,
                f"spec.min.{name}",
                f"{_q(name, amount)} + siblings' {_q(name, others)} "
                f"exceeds parent {parent_name}'s min {_q(name, limit)}",
            )


def _children_problems(quota: Quota, old: Quota | None, catalog: Catalog) -> Iterator[Problem]:
    """Σ min of this group's children ≤ its min, where this change lowered it; their keys."""
    children = [catalog.quotas[n] for n in catalog.children.get(quota.name, ())]
    if not children:
        return
    for child in children:
        yield from _key_problems(child, quota, subject=quota)
    if quota.force_update:
        return
    for name in sorted({k for child in children for k in child.min}):
        amount = quota.min.get(name, 0)
        if old is not None and amount >= old.min.get(name, 0):
            continue
        total = _sum(children, name)
        if total > amount:
            yield quota_problem(
                quota,
                f"spec.min.{name}",
                f"{_q(name, amount)} is below its children's min {_q(name, total)}",
            )


def _topology_problems(quota: Quota, old: Quota | None, catalog: Catalog) -> Iterator[Problem]:
    links = list(_parent_link_problems(quota, catalog))
    yield from links
    parent = catalog.quotas.get(catalog.parent_of(quota))
    if not links and parent is not None and not catalog.is_builtin(parent.name):
        yield from _key_problems(quota, parent, subject=quota)
        yield from _sibling_problems(quota, old, catalog)
    yield from _children_problems(quota, old, catalog)


# ------------------------------------------------------------------------- warnings


def _warnings(quota: Quota, catalog: Catalog, capacity: ResourceList | None) -> Iterator[str]:
    parent = catalog.quotas.get(catalog.parent_of(quota))
    if parent is not None:
        for name, amount in sorted(quota.max.items()):
            if name in parent.max and amount > parent.max[name]:
                yield (
                    f"spec.max.{name} {_q(name, amount)} is above parent {parent.name}'s max "
                    f"{_q(name, parent.max[name])}: the group can never use more than its parent"
                )
    weight = quota.shared_weight or {}
    for name, amount in sorted(weight.items()):
        if amount == 0 and name in quota.max and any(weight.values()):
            yield f"shared weight of {name} is 0: the group never borrows {name}"
    missing = set(quota.max) - set(weight)
    if any(weight.values()) and missing:
        yield (f"{keys.SHARED_WEIGHT} has no {_keys(missing)}: their max is used as their weight")
    if capacity is not None and catalog.parent_of(quota) == catalog.config.root_name:
        top = [
            catalog.quotas[n]
            for n in catalog.children.get(catalog.config.root_name, ())
            if n != quota.name
        ]
        for name, amount in sorted(quota.min.items()):
            total = amount + _sum(top, name)
            if name in capacity and total > capacity[name]:
                yield (
                    f"the top-level groups' min {name} {_q(name, total)} exceeds the cluster's "
                    f"{_q(name, capacity[name])}: their mins will be scaled down"
                )


# ------------------------------------------------------------------------- admissions


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
    warnings = () if denials else tuple(_warnings(new, catalog, capacity))
    return Verdict(tuple(denials), warnings)


def _same_place(new: Quota, old: Quota) -> bool:
    """The edit leaves what the tree's rules look at as it was: the parent link, `is-parent`,
    the `namespaces` annotation and the spec (Koordinator checks nothing then either)."""
    return (new.parent, new.is_parent, new.namespaces, new.min, new.max) == (
        old.parent,
        old.is_parent,
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
    before = set(self_problems(old))
    denials = tuple(p for p in self_problems(new) if p not in before)
    if denials:
        return Verdict(denials)
    standing = [
        f"the tree already has a problem: {problem.field}: {problem.message}"
        for problem in _change_problems(Operation.UPDATE, new, old, catalog, pods)
    ]
    return Verdict((), (*standing, *_warnings(new, catalog, capacity)))


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
    yield from self_problems(new)
    yield from _namespace_problems(new, catalog)
    if not catalog.is_builtin(new.name):
        yield from _topology_problems(new, old, catalog)
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


# ------------------------------------------------------------------------- a whole catalog


def audit(catalog: Catalog) -> list[Problem]:
    """Every rule applied to every existing group, as if each had just been created.

    Missing parents and cycles are left to the tree, which repairs and reports them.
    """
    problems: list[Problem] = []
    for name, quota in catalog.quotas.items():
        problems.extend(self_problems(quota))  # namespaces bound twice: the catalog's problems
        if catalog.is_builtin(name):
            continue
        parent = catalog.parent_of(quota)
        if parent == catalog.config.root_name or not catalog.exists(parent):
            continue
        if catalog.is_builtin(parent) or parent in set(catalog.descendants(name)):
            continue
        problems.extend(_parent_link_problems(quota, catalog))
        parent_quota = catalog.quotas[parent]
        problems.extend(_key_problems(quota, parent_quota, subject=quota))
    for parent, children in catalog.children.items():
        owner = catalog.quotas.get(parent)
        if owner is None or owner.force_update or catalog.is_builtin(parent):
            continue
        members = [catalog.quotas[n] for n in children]
        for name in sorted({k for child in members for k in child.min}):
            total, limit = _sum(members, name), owner.min.get(name, 0)
            if total > limit:
                problems.append(
                    quota_problem(
                        owner,
                        f"spec.min.{name}",
                        f"{_q(name, limit)} is below its children's min {_q(name, total)}",
                    )
                )
    return problems


def gate_exemption(pod: Pod, catalog: Catalog) -> str | None:
    """Why a new pod does not wait behind the admission gate; None: it waits until its group
    has room for it. The one rule of which pods are gated (README, "Quota-gated scheduling").

    Whatever made the pod (a person, with a name or `generateName`, or a controller), it is
    gated unless: it is bound to a node already (the API server refuses gates there), it opts
    out (label `gate: "false"`), it has the gate already, it is a DaemonSet's or a mirror pod
    (placed on its node by its controller or the kubelet), or its group limits nothing: the
    system group, or the default group without a max (the gate would only add a wait on the
    operator).
    """
    if pod.node_name:
        return "bound to a node already"
    if pod.gate_opt_out:
        return f'labelled {keys.GATE_OPT_OUT}: "false"'
    if pod.gated:
        return "has the admission gate already"
    if pod.node_pinned:
        return "a DaemonSet or mirror pod, placed on its node by its controller"
    group, _ = catalog.group_of(pod)
    if not catalog.limits(group):
        return f"its group {group} has no limit"
    return None
