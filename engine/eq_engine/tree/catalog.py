"""The ElasticQuota objects of a cluster, looked up the ways every rule needs.

A `Catalog` is what the quota tree and the admission rules share: groups by name (names are
unique cluster-wide), children by parent name as the labels say, and which group the pods of a
namespace belong to. Building one is a few dictionary passes, cheap enough to redo whenever an
ElasticQuota changes. The tree (`tree.py`) adds the arithmetic order and repairs broken links;
the checks (`checks.py`) and the admission reviews (`reviews.py`) judge a proposed change
against a catalog.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from ..model import EngineConfig, Pod, Problem, Quota, ResourceList, keys, limits


@dataclass(frozen=True, slots=True)
class Catalog:
    config: EngineConfig
    quotas: Mapping[str, Quota]
    """By name. With two objects of one name, the first by namespace (the other is reported)."""
    children: Mapping[str, tuple[str, ...]]
    """Parent name (the root's name for top-level groups) to its children's names, sorted."""
    namespace_owner: Mapping[str, str]
    """Namespace to the group its unlabelled pods belong to."""
    namespace_rule: Mapping[str, str]
    """Namespace to the rule that gave it its owner, in words (for explanations)."""
    problems: tuple[Problem, ...]
    pools: Mapping[str, ResourceList] = field(default_factory=dict)
    """Tree id to its total: the `total-resource` of its roots (groups labelled `is-root`,
    made from ElasticQuotaProfiles), summed. The default tree ("") is not among them."""
    pooled: ResourceList = field(default_factory=dict)
    """What the pools take from the default tree's total: every pool's total but those of
    roots labelled `ignore-default-tree` (Koordinator's handling of a tree's root)."""
    pool_lists: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """The groups that list `pools`, to their lists as written."""

    def tree_total(self, tree_id: str, capacity: Mapping[str, int]) -> dict[str, int]:
        """What tree `tree_id` splits: its pool's total, or for the default tree the cluster's
        `capacity` less what the pools take (never below zero)."""
        if tree_id:
            return dict(self.pools.get(tree_id, {}))
        pooled = self.pooled
        return {name: max(amount - pooled.get(name, 0), 0) for name, amount in capacity.items()}

    def parent_of(self, quota: Quota) -> str:
        """The parent the labels name; the root's name when they name none (or "root")."""
        return self.config.root_name if quota.parent in ("", "root") else quota.parent

    def parent_fault(self, quota: Quota) -> str | None:
        """Why the parent the labels name cannot hold the group; None when it can (the root,
        or a group that exists; whether it is a parent, or below the group, is the checks').

        The one wording of a broken parent link: the webhook denies with it, the tree places
        the group under the root and says so. `parent 'ghost' does not exist`.
        """
        parent = self.parent_of(quota)
        if parent == self.config.root_name:
            return None
        if self.is_builtin(parent):
            return f"parent {parent!r} is a built-in group that cannot have children"
        if parent not in self.quotas:
            return f"parent {parent!r} does not exist"
        return None

    def is_builtin(self, name: str) -> bool:
        return name in self.config.builtin_names

    def is_parent(self, name: str) -> bool:
        """Whether pods may not be bound to the group `name` (the root is a parent)."""
        quota = self.quotas.get(name)
        return name == self.config.root_name or (
            quota is not None and quota.is_parent and not self.is_builtin(name)
        )

    @property
    def default_max(self) -> ResourceList | None:
        """The default group's max: its object's, else the configured one; None when it limits
        nothing (absent, empty, or every amount at or above the no-practical-limit amount)."""
        quota = self.quotas.get(self.config.default_name)
        written = quota.max if quota is not None and quota.max else self.config.default_max
        return written if limits(written) else None

    def limits(self, name: str) -> bool:
        """Whether the group's pods are held to its runtime: every group but the system group
        and a default group without a max (the one rule for gating, reclaim and the columns)."""
        if name == self.config.system_name:
            return False
        return name != self.config.default_name or self.default_max is not None

    def exists(self, name: str) -> bool:
        return name in self.quotas or self.is_builtin(name)

    def descendants(self, name: str) -> Iterable[str]:
        """Every group below `name`, depth first (stops at cycles)."""
        seen: set[str] = set()
        stack = list(self.children.get(name, ()))
        while stack:
            child = stack.pop()
            if child not in seen:
                seen.add(child)
                yield child
                stack.extend(self.children.get(child, ()))

    def group_of(self, pod: Pod) -> tuple[str, Problem | None]:
        """The group a pod belongs to (docs/how-it-works.md), and a problem if its label
        misleads."""
        found = self.membership(pod)
        return found.group, found.problem

    def membership(self, pod: Pod) -> Membership:
        """The group a pod belongs to, by which rule, and a problem if its label misleads.

        Its home group (`home`), unless that group lists `pools`: then the one of them its gate
        chose (the operator's `pool-quota` label), or, until it chooses, the first of them,
        where its request counts while it waits.
        """
        home = self.home(pod)
        pools = self.pools_of(home.group)
        if not pools:
            return home
        listed = f"its group {home.group} lists {keys.POOLS} {', '.join(pools)}"
        if pod.pool_quota in pools:
            return Membership(
                pod.pool_quota, f"{listed}; its gate chose {pod.pool_quota}", home.problem
            )
        return Membership(
            pools[0], f"{listed}; counted in the first until its gate chooses", home.problem
        )

    def open_pools(self, pod: Pod) -> tuple[str, tuple[str, ...]]:
        """The group whose `pools` a pod waits to be given one of, and those pools (`pools_of`);
        `("", ())` once its gate chose one (its `pool-quota` label names one of them), or when
        its group lists none."""
        home = self.home(pod).group
        pools = self.pools_of(home)
        return (home, pools) if pools and pod.pool_quota not in pools else ("", ())

    def pools_of(self, group: str) -> tuple[str, ...]:
        """The groups of `group`'s `pools` annotation that a pod may go to: those that exist
        and are not parents, in its order."""
        listed = self.pool_lists.get(group, ())
        return tuple(n for n in listed if self.exists(n) and not self.is_parent(n))

    def home(self, pod: Pod) -> Membership:
        """The group a pod's labels and namespace give it, by which rule.

        System namespaces first, then the pod's label, then the namespace's group (an
        ElasticQuota named like the namespace, else one listing it in its `namespaces`
        annotation, else the only ElasticQuota there; never a parent or built-in group but by
        the annotation), else the default group.
        """
        config = self.config
        if pod.namespace in config.system_namespaces:
            return Membership(
                config.system_name, f"namespace {pod.namespace} is a system namespace"
            )
        label, seed_label = pod.quota_labels
        problem = None
        if label and seed_label and label != seed_label:
            problem = _pod_problem(
                pod,
                keys.POD_QUOTA,
                f"disagrees with {keys.POD_QUOTA_SEED} ({seed_label!r}); {label!r} is used",
            )
        name = label or seed_label
        if name:
            spelled = keys.POD_QUOTA if label else keys.POD_QUOTA_SEED
            if not self.exists(name):
                why = f"names no ElasticQuota ({name!r}); the default group is used"
                return Membership(
                    config.default_name,
                    f"its label {spelled} {why}",
                    _pod_problem(pod, keys.POD_QUOTA, why),
                )
            if self.is_parent(name):
                problem = _pod_problem(
                    pod, keys.POD_QUOTA, f"names a parent group ({name!r}); pods belong in leaves"
                )
            return Membership(name, f"its label {spelled} names it", problem)
        owner = self.namespace_owner.get(pod.namespace)
        if owner is None:
            return Membership(
                config.default_name, f"no group claims namespace {pod.namespace}", problem
            )
        if self.is_parent(owner):
            problem = Problem(
                "Pod",
                pod.key,
                "metadata.namespace",
                f"namespace {pod.namespace!r} is bound to parent group {owner!r} by its "
                f"{keys.NAMESPACES} annotation; pods belong in leaves",
            )
        return Membership(owner, self.namespace_rule[pod.namespace], problem)


@dataclass(frozen=True, slots=True)
class Membership:
    group: str
    how: str
    """Which rule chose the group, in words: `its label quota.../name names it`."""
    problem: Problem | None = None


PARENT_FIELD = f"metadata.labels[{keys.PARENT}]"
"""Where a problem of the parent link is reported, whichever of the two labels names it."""


def _pod_problem(pod: Pod, label: str, message: str) -> Problem:
    return Problem("Pod", pod.key, f"metadata.labels[{label}]", message)


def quota_problem(quota: Quota, field: str, message: str) -> Problem:
    return Problem("ElasticQuota", quota.ref, field, message)


def namespace_taken(quota: Quota, namespace: str, owner: str) -> Problem:
    """The one wording of "a namespace is bound (by annotation) to at most one group"."""
    return quota_problem(
        quota,
        f"metadata.annotations[{keys.NAMESPACES}]",
        f"namespace {namespace!r} is already bound to {owner!r}; "
        "a namespace belongs to at most one group",
    )


def build_catalog(quotas: Iterable[Quota], config: EngineConfig) -> Catalog:
    problems: list[Problem] = []
    unique: dict[str, Quota] = {}
    for quota in sorted(quotas, key=lambda q: (q.name, q.namespace)):
        if quota.name in unique:
            problems.append(
                quota_problem(
                    quota,
                    "metadata.name",
                    f"another ElasticQuota has this name ({unique[quota.name].ref}); names are "
                    "unique cluster-wide, this one is ignored",
                )
            )
        else:
            unique[quota.name] = quota
    children: dict[str, list[str]] = defaultdict(list)
    catalog = Catalog(config, unique, {}, {}, {}, ())
    for name, quota in unique.items():
        if not catalog.is_builtin(name):
            children[catalog.parent_of(quota)].append(name)
    owners = _namespace_owners(unique, config, problems)
    pools, pooled = _pools(unique.values())
    return Catalog(
        config=config,
        quotas=unique,
        children={parent: tuple(sorted(names)) for parent, names in children.items()},
        namespace_owner={ns: owner for ns, (owner, _) in owners.items()},
        namespace_rule={ns: how for ns, (_, how) in owners.items()},
        problems=tuple(problems),
        pools=pools,
        pooled=pooled,
        pool_lists={name: quota.pools for name, quota in unique.items() if quota.pools},
    )


def _pools(quotas: Iterable[Quota]) -> tuple[dict[str, ResourceList], ResourceList]:
    """Each tree's total from its roots, and what they take from the default tree. A root of
    the default tree, or without the annotation, adds nothing (as in Koordinator)."""
    pools: dict[str, dict[str, int]] = {}
    pooled: dict[str, int] = {}
    for quota in quotas:
        if not quota.is_root or not quota.tree_id:
            continue
        pool = pools.setdefault(quota.tree_id, {})
        for name, amount in (quota.total_resource or {}).items():
            pool[name] = pool.get(name, 0) + amount
            if not quota.ignore_default_tree:
                pooled[name] = pooled.get(name, 0) + amount
    return dict(pools), pooled


def _namespace_owners(
    unique: Mapping[str, Quota], config: EngineConfig, problems: list[Problem]
) -> dict[str, tuple[str, str]]:
    """Namespace to group for pods without a label: named-like, then annotated, then only one.

    Named-like and only-one are guesses, which never pick a parent or a built-in group: a
    namespace holding a department's object is not that department's (the built-in groups
    share the product's namespace). The annotation is the user's word and always counts.
    """
    by_namespace: dict[str, list[str]] = defaultdict(list)
    annotated: dict[str, str] = {}
    for name, quota in unique.items():
        if name in config.builtin_names and name != config.default_name:
            continue
        if name != config.default_name and not quota.is_parent:
            by_namespace[quota.namespace].append(name)
        for namespace in quota.namespaces:  # the default group may list namespaces too
            owner = annotated.setdefault(namespace, name)
            if owner != name:
                problems.append(namespace_taken(quota, namespace, owner))
    owners = {
        ns: (owner, f"the {keys.NAMESPACES} annotation of {owner} lists namespace {ns}")
        for ns, owner in annotated.items()
    }
    for namespace, members in by_namespace.items():
        if namespace in members:
            owners[namespace] = (
                namespace,
                f"the ElasticQuota {namespace} is named like its namespace",
            )
        elif namespace not in annotated and len(members) == 1:
            owners[namespace] = (
                members[0],
                f"{members[0]} is the only ElasticQuota in namespace {namespace}",
            )
    return owners
