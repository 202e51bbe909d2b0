"""ElasticQuota checks: what makes one group, or the tree around it, invalid or risky.

Koordinator's webhook checks are the baseline (its pkg/webhook/elasticquota, read at
a7a1b76; docs/webhook.md); each check is a function returning `Problem`s that name the object,
the field and the numbers, e.g.
`ElasticQuota team-a/ml: spec.min.cpu: 30 + siblings' 80 exceeds parent dept-a's min 100`.

The admission reviews (`reviews.py`) apply these checks to one proposed change, and `audit`
applies them to a whole catalog (the problems `simulate` and the operator report). Pure: a
check reads a `Catalog` and its arguments, nothing else; the rules that depend on the
operation (built-in groups, deletions, pods bound to a group) are the reviews'.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from ..model import Problem, Quota, ResourceList, format_quantity, keys
from . import own_keys
from .catalog import PARENT_FIELD, Catalog, namespace_taken, quota_problem


def _q(resource: str, amount: int) -> str:
    return format_quantity(resource, amount)


def _keys(resources: Iterable[str]) -> str:
    return "{" + ", ".join(sorted(resources)) + "}"


TREE_FIELD = f"metadata.labels[{keys.TREE_ID}]"
"""Where a problem of the group's tree is reported."""


def tree_id_text(tree_id: str) -> str:
    """A tree id as messages show it: `'gpu-a100'`, or `unset` (the default tree)."""
    return repr(tree_id) if tree_id else "unset"


def min_total(quotas: Iterable[Quota], resource: str) -> int:
    """The sum of the groups' min of `resource` (0 where a group has none)."""
    return sum(q.min.get(resource, 0) for q in quotas)


# ------------------------------------------------------------------------- the group itself


def own_problems(quota: Quota) -> Iterator[Problem]:
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
    yield from own_keys.limit_problems(quota)
    yield from own_keys.pools_problems(quota)
    label, seed_label = quota.parent_labels
    if label and seed_label and label != seed_label:
        yield quota_problem(
            quota,
            PARENT_FIELD,
            f"{label!r} disagrees with {keys.PARENT_SEED} {seed_label!r}; {label!r} is used",
        )


def namespace_problems(quota: Quota, catalog: Catalog) -> Iterator[Problem]:
    """The namespaces the group's annotation lists are not another group's by its annotation."""
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


def parent_link_problems(quota: Quota, catalog: Catalog) -> Iterator[Problem]:
    """The parent exists, may have children, and is not this group or below it."""
    parent = catalog.parent_of(quota)
    if parent == catalog.config.root_name:
        return
    fault = catalog.parent_fault(quota)
    if parent == quota.name:
        yield quota_problem(quota, PARENT_FIELD, "a group cannot be its own parent")
    elif fault is not None:
        yield quota_problem(quota, PARENT_FIELD, fault)
    elif parent in set(catalog.descendants(quota.name)):
        yield quota_problem(quota, PARENT_FIELD, f"parent {parent!r} is below this group: a cycle")
    elif not catalog.quotas[parent].is_parent:
        yield quota_problem(
            quota,
            PARENT_FIELD,
            f'parent {parent!r} is not a parent group ({keys.IS_PARENT} is not "true")',
        )


def resource_key_problems(child: Quota, parent: Quota, *, subject: Quota) -> Iterator[Problem]:
    """A child's max resources are its parent's, its min resources among the parent's min;
    reported on `subject`, the child or the parent (then naming the child)."""
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


def tree_problems(child: Quota, parent: Quota, *, subject: Quota) -> Iterator[Problem]:
    """A child is in its parent's tree: their tree ids are equal; reported on `subject`, the
    child or the parent (then naming the child). The one wording of a tree-id mismatch: the
    webhook denies with it, the audit reports it. (Koordinator's `checkTreeID`, in
    pkg/webhook/elasticquota/quota_topology_check.go at a7a1b76; the root's children are
    exempt, as there: each tree's root is one.)

    `tree id is 'v100', parent gpus's is 'a100': a group is in its parent's tree`.
    """
    if child.tree_id != parent.tree_id:
        whose = "" if child is subject else f"child {child.name}'s "
        yield quota_problem(
            subject,
            TREE_FIELD,
            f"{whose}tree id is {tree_id_text(child.tree_id)}, parent {parent.name}'s is "
            f"{tree_id_text(parent.tree_id)}: a group is in its parent's tree",
        )


def sibling_min_problems(quota: Quota, old: Quota | None, catalog: Catalog) -> Iterator[Problem]:
    """Σ min of the parent's children ≤ the parent's min, where this change made it worse:
    the group is new or moved, or raised its min. Skipped with `allow-force-update`."""
    parent_name = catalog.parent_of(quota)
    parent = catalog.quotas.get(parent_name)
    if parent is None or parent_name == catalog.config.root_name or quota.force_update:
        return
    moved = old is None or catalog.parent_of(old) != parent_name
    siblings = [catalog.quotas[n] for n in catalog.children.get(parent_name, ()) if n != quota.name]
    for name, amount in sorted(quota.min.items()):
        if not moved and old is not None and amount <= old.min.get(name, 0):
            continue
        others, limit = min_total(siblings, name), parent.min.get(name, 0)
        if amount + others > limit:
            yield quota_problem(
                quota,
                f"spec.min.{name}",
                f"{_q(name, amount)} + siblings' {_q(name, others)} "
                f"exceeds parent {parent_name}'s min {_q(name, limit)}",
            )


def children_min_problems(
    parent: Quota, children: Sequence[Quota], *, old: Quota | None = None
) -> Iterator[Problem]:
    """Σ min of the children ≤ the parent's min, for each resource a child's min names;
    `old`: only where this change lowered the parent's min. Skipped with `allow-force-update`.

    Children with min cpu 80 and 10 under a parent with min cpu 50: `spec.min.cpu: 50 is
    below its children's min 90`.
    """
    if parent.force_update:
        return
    for name in sorted({k for child in children for k in child.min}):
        amount = parent.min.get(name, 0)
        if old is not None and amount >= old.min.get(name, 0):
            continue
        total = min_total(children, name)
        if total > amount:
            yield quota_problem(
                parent,
                f"spec.min.{name}",
                f"{_q(name, amount)} is below its children's min {_q(name, total)}",
            )


def topology_problems(quota: Quota, old: Quota | None, catalog: Catalog) -> Iterator[Problem]:
    """Everything the tree's rules say of the group where it is: its parent link and tree id,
    then (the link being sound: the rules apply within a tree) its keys and min among its
    siblings, then its children's tree ids, keys and min."""
    links = list(parent_link_problems(quota, catalog))
    parent = catalog.quotas.get(catalog.parent_of(quota))
    if parent is not None and catalog.is_builtin(parent.name):
        parent = None  # the root (any tree's top), or a built-in group: a broken link
    if parent is not None and parent.name != quota.name:
        links.extend(tree_problems(quota, parent, subject=quota))
    yield from links
    if not links and parent is not None:
        yield from resource_key_problems(quota, parent, subject=quota)
        yield from sibling_min_problems(quota, old, catalog)
    children = [catalog.quotas[n] for n in catalog.children.get(quota.name, ())]
    for child in children:
        yield from tree_problems(child, quota, subject=quota)
        yield from resource_key_problems(child, quota, subject=quota)
    if children:
        yield from children_min_problems(quota, children, old=old)


# ------------------------------------------------------------------------- warnings


def quota_warnings(quota: Quota, catalog: Catalog, capacity: ResourceList | None) -> Iterator[str]:
    """Legal settings that do not do what they seem to: a max above the parent's, a zero
    shared weight, a weight without every resource of max, a lending limit on a group that
    does not lend, pool groups its pods cannot go to, top-level mins above the cluster, a
    queue key the gate cannot read (`model.queues`: its default applies)."""
    yield from quota.queue.problems
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
    yield from _pool_warnings(quota, catalog)
    if quota.lending_limit and not quota.allow_lent:
        yield (
            f'{keys.LENDING_LIMIT} has no effect while {keys.ALLOW_LENT} is "false": the group '
            "lends none of its min"
        )
    if capacity is not None and catalog.parent_of(quota) == catalog.config.root_name:
        top = [  # the top-level groups of its own tree: another tree's draw on another pool
            catalog.quotas[n]
            for n in catalog.children.get(catalog.config.root_name, ())
            if n != quota.name and catalog.quotas[n].tree_id == quota.tree_id
        ]
        tree_total = catalog.tree_total(quota.tree_id, capacity)
        tree = f" in tree {quota.tree_id!r}" if quota.tree_id else ""
        whose = (
            "tree's total"
            if quota.tree_id
            else "default tree's total"
            if catalog.pooled
            else "cluster's"
        )
        for name, amount in sorted(quota.min.items()):
            total = amount + min_total(top, name)
            if name in tree_total and total > tree_total[name]:
                yield (
                    f"the top-level groups' min {name} {_q(name, total)}{tree} exceeds the "
                    f"{whose} {_q(name, tree_total[name])}: their mins will be scaled down"
                )


def _pool_warnings(quota: Quota, catalog: Catalog) -> Iterator[str]:
    """Pool groups listed that its pods cannot go to, or two in one tree."""
    trees: dict[str, str] = {}
    for name in quota.pools:
        listed = catalog.quotas.get(name)
        if listed is None:
            yield f"{keys.POOLS}: {name!r} does not exist (yet): its pods go to the others"
        elif listed.is_parent:
            yield f"{keys.POOLS}: {name!r} is a parent group: its pods go to the others"
        elif listed.tree_id in trees:
            yield (
                f"{keys.POOLS}: {name!r} and {trees[listed.tree_id]!r} are both in tree "
                f"{tree_id_text(listed.tree_id)}: a pod goes to the first with room, so "
                "list one group per node pool"
            )
        else:
            trees[listed.tree_id] = name


# ------------------------------------------------------------------------- a whole catalog


def audit(catalog: Catalog) -> list[Problem]:
    """Every check applied to every existing group, as if each had just been created.

    Missing parents, cycles and parents in another tree are left to the tree, which repairs
    and reports them.
    """
    problems: list[Problem] = []
    for name, quota in catalog.quotas.items():
        problems.extend(own_problems(quota))  # namespaces bound twice: the catalog's problems
        if catalog.is_builtin(name):
            continue
        parent = catalog.parent_of(quota)
        if parent == catalog.config.root_name or catalog.parent_fault(quota) is not None:
            continue
        if parent in set(catalog.descendants(name)):
            continue
        if catalog.quotas[parent].tree_id != quota.tree_id:
            continue  # not followed: the tree places it under its own tree's root, and says so
        problems.extend(parent_link_problems(quota, catalog))
        problems.extend(tree_problems(quota, catalog.quotas[parent], subject=quota))
        problems.extend(resource_key_problems(quota, catalog.quotas[parent], subject=quota))
    for parent, children in catalog.children.items():
        owner = catalog.quotas.get(parent)
        if owner is None or catalog.is_builtin(parent):
            continue
        kin = [catalog.quotas[n] for n in children if catalog.quotas[n].tree_id == owner.tree_id]
        problems.extend(children_min_problems(owner, kin))
    return problems
