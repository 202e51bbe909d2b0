"""The node-pool cluster of `python -m benchmarks.scale --trees N`: N quota trees, one per node
pool (Koordinator's MultiQuotaTree), with the same pods as the single tree.

Each pool `pool-NN` is an ElasticQuotaProfile (namespace `quotas`, labelled with the readable
tree id `pool-NN`) selecting its share of the nodes by their label `pool: pool-NN` (5,000 / N
nodes; with 20 pools, 250); its root ElasticQuota `pool-NN` is not seeded: the operator makes
it from the profile. Below it, 1,000 / N teams of 10 sub-teams (with 20 pools, 50 teams and 550
groups a tree, 11,000 in all), each labelled with the tree id, the teams' parent label naming
the root. The sub-teams and their pods are drawn as `cluster.pods` draws the single tree's
(the same 10,000 sub-teams, requests and phases); a running pod sits on a node of its pool.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, cast

from eq_engine import parse_node
from eq_engine.model import keys
from eq_engine.pools import desired_roots, parse_profile, root_body
from eq_engine.reading import RawNode

from benchmarks import cluster
from tests.apiserver.resources import load_crd
from tests.kube import NODES, PODS, QUOTAS, stored
from tests.operator.test_accounting import actual, actual_groups, computed
from tests.paths import REPO
from tests.realistic import elastic_quota_profile

NAMESPACE = "quotas"
LEAVES = 10_000
SUBTEAMS = 10
RESOURCES = ["cpu", "memory", "nvidia.com/gpu", "pods"]
PROFILE_CRD = REPO / "crds" / "elasticquotaprofiles.quota.koordinator.sh.yaml"
ROOT_ANNOTATIONS = (keys.TOTAL_RESOURCE, keys.UNSCHEDULABLE_RESOURCE)
Objects = tuple[list[dict[str, Any]], ...]


def profile_crd() -> dict[str, Any]:
    """Koordinator's ElasticQuotaProfile CRD, for the emulator to serve (`ApiServer(serving=)`;
    installing it again where the emulator serves it already changes nothing)."""
    return load_crd(PROFILE_CRD)


def pool(index: int) -> str:
    return f"pool-{index:02d}"


def profile(name: str) -> dict[str, Any]:
    """Pool `name`'s profile: its root is `name`, a parent, over cpu, memory, GPUs and pods."""
    raw = elastic_quota_profile(
        name,
        NAMESPACE,
        quota_name=name,
        node_selector={"matchLabels": {"pool": name}},
        resource_keys=RESOURCES,
        quota_labels={keys.IS_PARENT: "true"},
    )
    raw["metadata"]["labels"] = {keys.TREE_ID: name}
    return raw


def in_tree(raw: dict[str, Any], tree_id: str) -> dict[str, Any]:
    raw["metadata"]["labels"][keys.TREE_ID] = tree_id
    return raw


def quotas(trees: int) -> list[dict[str, Any]]:
    """Each pool's teams and sub-teams (its root is the operator's to make)."""
    teams = LEAVES // SUBTEAMS // trees
    objects = []
    for p in range(trees):
        root = pool(p)
        for t in range(teams):
            team = f"{root}-team-{t}"
            objects.append(in_tree(cluster.quota(team, root, 80, 320, 10, is_parent=True), root))
            for s in range(SUBTEAMS):
                sub = cluster.quota(
                    f"{team}-sub-{s}", team, 8, 32, 1, is_parent=False, lend=(s % 7 != 0)
                )
                objects.append(in_tree(sub, root))
    return objects


def nodes(count: int, trees: int) -> list[dict[str, Any]]:
    """`count` Ready nodes, the first `count // trees` in pool-00, and so on (any left over in
    no pool, the default tree's)."""
    size = count // trees
    result = cluster.nodes(count)
    for i, node in enumerate(result[: size * trees]):
        node["metadata"]["labels"]["pool"] = pool(i // size)
    return result


def objects(pods: int, trees: int, node_count: int) -> Objects:
    """The quotas, pods, nodes and profiles of `trees` pools, `pods` pods in all."""
    groups = quotas(trees)
    size = node_count // trees
    first_node = {  # each sub-team's pool's first node
        q["metadata"]["name"]: int(q["metadata"]["labels"][keys.TREE_ID][5:]) * size
        for q in groups
        if q["metadata"]["namespace"] != NAMESPACE
    }
    pod_objects = cluster.leaf_pods([*first_node], per_subteam=max(1, pods // len(first_node)))
    for raw in pod_objects:  # the node drawn, moved into the pool of the pod's tree
        spec = raw["spec"]
        if spec.get("nodeName"):
            first = first_node[raw["metadata"]["namespace"]]
            spec["nodeName"] = f"node-{first + int(spec['nodeName'][5:]) % size:04d}"
    return groups, pod_objects, nodes(node_count, trees), [profile(pool(p)) for p in range(trees)]


def roots(
    profiles: list[dict[str, Any]], node_objects: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The root ElasticQuotas the operator makes of the profiles: what
    `eq_engine.pools.profile_roots` computes from the profiles and the nodes."""
    if not profiles:
        return []
    nodes_ = [parse_node(cast(RawNode, raw)) for raw in node_objects]
    wanted = desired_roots(map(parse_profile, profiles), nodes_)
    return [root_body(root) for root in wanted.roots]


def with_objects(groups: dict[str, Any]) -> dict[str, Any]:
    """The groups that are objects: not a pool's tree root (`<root>/<tree id>`, the engine's
    own; a name with a slash is no object's)."""
    return {name: fields for name, fields in groups.items() if "/" not in name}


def root_annotations(bodies: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each root's `total-resource` and `unschedulable-resource`, by name, as JSON values."""
    return {
        body["metadata"]["name"]: {
            k: json.loads(body["metadata"]["annotations"][k]) for k in ROOT_ANNOTATIONS
        }
        for body in bodies
    }


def actual_roots(api: Any, names: set[str]) -> dict[str, dict[str, Any]]:
    """The annotations of the quotas `names` as the emulator holds them."""
    found = {}
    for raw in stored(api, QUOTAS):
        name = raw["metadata"]["name"]
        if name in names:
            annotations = raw["metadata"].get("annotations") or {}
            found[name] = {
                k: json.loads(annotations[k]) if k in annotations else None
                for k in ROOT_ANNOTATIONS
            }
    return found


def audit(api: Any, want: dict[str, dict[str, Any]]) -> dict[str, int]:
    """After the fact: a fresh engine on every object the emulator holds (the roots the
    operator made included) against what the benchmark expected and what the objects hold.
    Counts of groups and pod labels that differ, and the writes the operator made."""
    fresh, labels = computed(stored(api, QUOTAS), stored(api, NODES), stored(api, PODS))
    fresh = with_objects(fresh)
    have_groups, have_labels = actual(api)
    return {
        "groups": len(fresh),
        "fresh_vs_expected": sum(want.get(k) != v for k, v in fresh.items())
        + sum(k not in fresh for k in want),
        "groups_wrong": sum(have_groups.get(k) != v for k, v in fresh.items()),
        "labels_wrong": sum(have_labels.get(k) != v for k, v in labels.items()),
        "pod_writes": api.count("patch", "pods"),
        "quota_writes": api.count("patch", "elasticquotas")
        + api.count("patch", "elasticquotas", "status"),
        "quota_creates": api.count("create", "elasticquotas"),
        "events": api.count("create", "events"),
        "problem_events": sum(
            e.get("reason") == "ConfigurationProblem" for e in stored(api, "v1/events")
        ),
    }


def differences(
    api: Any, want: dict[str, dict[str, Any]], want_roots: dict[str, dict[str, Any]]
) -> list[str]:
    """What the objects hold where the benchmark expected otherwise: a count, then a few."""
    have, roots = actual_groups(api), actual_roots(api, set(want_roots))
    wrong = [(k, v, have.get(k)) for k, v in want.items() if have.get(k) != v]
    wrong += [(k, v, roots.get(k)) for k, v in want_roots.items() if roots.get(k) != v]
    return [f"{len(wrong)} groups differ", *(f"{k}: want {v}, have {h}" for k, v, h in wrong[:5])]


def report(audit: dict[str, int], roots: float, show: Callable[[str, str], None]) -> None:
    """The pools' own lines of `benchmarks.scale`'s report, each through `show(label, value)`."""
    show("groups checked (roots and built-ins included)", f"{audit['groups']:,}")
    show("ElasticQuotas created (roots, built-ins)", f"{audit['quota_creates']}")
    show("every root's total right after", f"{roots:.1f} s")
    show(
        "a fresh engine's numbers: groups, labels unlike",
        f"{audit['groups_wrong']}, {audit['labels_wrong']}",
    )
    show("  its groups unlike the benchmark's", f"{audit['fresh_vs_expected']}")
    show(
        "writes till then: labels, groups (+ status)",
        f"{audit['pod_writes']:,}, {audit['quota_writes']:,}",
    )
    show(
        "Events created (ConfigurationProblem)",
        f"{audit['events']:,} ({audit['problem_events']:,})",
    )
