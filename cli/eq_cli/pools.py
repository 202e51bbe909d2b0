"""ElasticQuotaProfiles in `simulate`'s input: each profile's tree root, made as the operator
makes it (`eq_engine.pools.profile_roots`) from the Nodes in the input.

A root the input holds already is patched as the operator patches it (the labels, annotations,
min and max the profile owns; its other labels and annotations stay), so the trees split what
the nodes in the input hold now, not what the root said when the dump was taken. A root whose
profile is not in the input is left as it is (as the operator leaves the root of a deleted
profile). `kubectl eq` does not come here: it shows the roots the operator wrote.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, cast

from eq_engine import Problem, parse_quota
from eq_engine.explaining import Object
from eq_engine.pools import Profile, desired_roots, profile_of_tree, root_body, root_patch
from eq_engine.reading import RawElasticQuota

from .loading import Objects


@dataclass(frozen=True)
class Pools:
    objects: Objects
    """The input with each profile's root as the operator would write it now."""
    made_by: Mapping[str, str]
    """Tree id to where its root comes from: `ElasticQuotaProfile NS/NAME on N nodes`."""
    problems: tuple[Problem, ...] = ()
    """The profiles' problems: a malformed ratio or keys, a selector that matches no node,
    profiles that overlap."""
    roots: frozenset[str] = frozenset()
    """The roots made, by `namespace/name`."""


def pools(objects: Objects, *, make_roots: bool) -> Pools:
    """`simulate`'s (`make_roots`: each profile's root made from the nodes) or `kubectl eq`'s
    (the roots as the operator wrote them); the profiles' problems either way."""
    if make_roots:
        return made_roots(objects)
    problems = desired_roots(objects.profiles, objects.nodes).problems if objects.profiles else ()
    return Pools(objects, made_by_profiles(objects.profiles), problems)


def made_roots(objects: Objects) -> Pools:
    """`objects` with every profile's root made from its nodes; unchanged without profiles."""
    if not objects.profiles:
        return Pools(objects, {})
    wanted = desired_roots(objects.profiles, objects.nodes)
    quotas = {quota.ref: quota for quota in objects.quotas}
    bodies = dict(objects.bodies)
    made_by: dict[str, list[str]] = {}
    for root in wanted.roots:
        existing = bodies.get(root.ref)
        if existing is None:
            body = root_body(root)
        else:
            body = merged(existing, root_patch(root, existing) or {})
        bodies[root.ref] = body
        quotas[root.ref] = parse_quota(cast(RawElasticQuota, body))
        count = len(root.nodes)
        made_by.setdefault(root.tree_id, []).append(
            f"ElasticQuotaProfile {root.profile} on {count} node{'' if count == 1 else 's'}"
        )
    made = dataclasses.replace(objects, quotas=list(quotas.values()), bodies=bodies)
    texts = {tree: ", ".join(sources) for tree, sources in made_by.items()}
    return Pools(made, texts, wanted.problems, frozenset(root.ref for root in wanted.roots))


@dataclass(frozen=True)
class WhatIfObjects:
    cluster: list[Object]
    changes: list[Object]
    written: frozenset[str] = frozenset()
    """The roots among `changes` that the operator writes, not the user (`namespace/name`):
    the webhook's answers to them are not the user's to read."""


def what_if_roots(objects: Objects, changes: Objects) -> WhatIfObjects:
    """The cluster and the changes `--what-if` compares, each profile's root made before and
    after them: the roots the changes move (a node that joins, a profile changed) are changed
    too, as the operator would write them; a root changed by hand is put back."""
    before = made_roots(objects).objects
    if not before.profiles and not changes.profiles:
        return WhatIfObjects(objects.everything(), changes.everything())
    after = made_roots(overlaid(before, changes))
    was = {quota.ref: quota for quota in before.quotas}
    by_hand = {quota.ref for quota in changes.quotas}
    moved = [
        quota
        for quota in after.objects.quotas
        if quota.ref in after.roots and (was.get(quota.ref) != quota or quota.ref in by_hand)
    ]
    written = frozenset(quota.ref for quota in moved) - by_hand
    return WhatIfObjects(before.everything(), [*changes.everything(), *moved], written)


def made_by_profiles(profiles: Iterable[Profile]) -> dict[str, str]:
    """Tree id to the profile that makes its root (`profile_of_tree`), for roots the operator
    wrote: `ElasticQuotaProfile NS/NAME`."""
    listed = list(profiles)
    makers = {tree: profile_of_tree(listed, tree) for tree in {p.tree_id for p in listed}}
    return {tree: f"ElasticQuotaProfile {maker.ref}" for tree, maker in makers.items() if maker}


def overlaid(objects: Objects, changes: Objects) -> Objects:
    """`changes` applied over `objects` as `--what-if` applies them: an object of the same
    kind, namespace and name replaced, others added (pods and the rest are not needed here)."""
    profiles = {p.ref: p for p in [*objects.profiles, *changes.profiles]}
    nodes = {n.name: n for n in [*objects.nodes, *changes.nodes]}
    quotas = {q.ref: q for q in [*objects.quotas, *changes.quotas]}
    return Objects(
        quotas=list(quotas.values()),
        nodes=list(nodes.values()),
        profiles=list(profiles.values()),
        bodies={**objects.bodies, **changes.bodies},
    )


def merged(target: Mapping[str, Any], patch: Mapping[str, Any]) -> dict[str, Any]:
    """`patch` applied to `target` as a JSON merge patch (RFC 7386), as the API server applies
    the operator's."""
    result = dict(target)
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        elif isinstance(value, Mapping):
            inner = result.get(key)
            result[key] = merged(inner if isinstance(inner, Mapping) else {}, value)
        else:
            result[key] = value
    return result
