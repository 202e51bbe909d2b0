"""The roots of the profiles' trees (profile_roots.py): totals, texts, where profiles overlap,
and the merge patch that brings an existing root up to date."""

from __future__ import annotations

import json
from typing import Any

import pytest
from eq_engine.model.quantities import to_canonical
from eq_engine.pools.profile_roots import root_body, root_patch

from tests.engine.profile_objects import NODES, ZONE, P, fnv64a, merged, node, profile, roots

A, B = "cn-hangzhou-a", "cn-hangzhou-b"
OLDER, NEWER = "2025-12-01T10:00:00Z", "2025-12-02T10:00:00Z"


@pytest.mark.parametrize(
    ("cpu", "ratio", "scaled"),
    [  # Koordinator's TestMultiplyQuantity, through a one-node pool
        pytest.param("1", "0.9", "0.9", id="basic cpu 1"),
        pytest.param("100m", "0.5", "50m", id="basic cpu 2"),
        pytest.param("1Gi", "0.9", "0.9Gi", id="basic memory 1"),  # as cpu, as in Koordinator
        pytest.param("1Gi", "0.5", "512Mi", id="basic memory 2"),
    ],
)
def test_koordinator_s_multiply_quantity_cases(cpu: str, ratio: str, scaled: str) -> None:
    (root,) = roots(
        profile("p", "z", resourceRatio=ratio), nodes=[node("n", "z", {"cpu": cpu})]
    ).roots
    assert root.total == {"cpu": to_canonical("cpu", scaled)}


def test_a_ratio_truncates_each_amount_through_a_float_as_go_does() -> None:
    one = node("n", "z", {"cpu": "90m", "memory": "1025", "nvidia.com/gpu": "5"})
    (root,) = roots(profile("p", "z", resourceRatio="0.7"), nodes=[one]).roots
    # in floats 90 * 0.7 = 62.99999999999999 (not 63), 1025 * 0.7 = 717.4999999999999 and
    # 5 * 0.7 = 3.5: each truncated
    assert root.total == {"cpu": 62, "memory": 717, "nvidia.com/gpu": 3}


def test_the_body_of_a_new_root_holds_koordinator_s_texts_exactly() -> None:
    (root,) = roots(profile("profile1", A, resourceRatio="0.9")).roots
    assert root_body(root) == {
        "apiVersion": "scheduling.sigs.k8s.io/v1alpha1",
        "kind": "ElasticQuota",
        "metadata": {
            "name": "profile1-root",
            "namespace": "kube-system",
            "labels": {
                P + "profile": "profile1",
                P + "tree-id": fnv64a("kube-system/profile1"),
                P + "is-root": "true",
            },
            "annotations": {
                P + "total-resource": '{"cpu":"18","memory":"1800","storage":"1800"}',
                P + "unschedulable-resource": '{"cpu":"9","memory":"900","storage":"900"}',
            },
        },
        "spec": {
            "min": {"cpu": "18", "memory": "1800"},
            "max": {"cpu": "4611686018427387", "memory": "4611686018427387"},
        },
    }
    assert (root.ref, root.profile, root.nodes) == (
        "kube-system/profile1-root",
        "kube-system/profile1",
        ("node1", "node2"),
    )


@pytest.mark.parametrize(
    ("allocatable", "total"),
    [  # cpu in decimal with m, memory in binary units, the rest decimal (Go's DecimalSI)
        ({"cpu": "3920m", "memory": "16265152Ki"}, '{"cpu":"3920m","memory":"16265152Ki"}'),
        ({"cpu": "64", "memory": "256Gi"}, '{"cpu":"64","memory":"256Gi"}'),
        ({"memory": "1000", "pods": "110"}, '{"memory":"1k","pods":"110"}'),
        ({"ephemeral-storage": "100Gi"}, '{"ephemeral-storage":"107374182400"}'),
        (
            {"nvidia.com/gpu": "8", "hugepages-2Mi": "0"},
            '{"hugepages-2Mi":"0","nvidia.com/gpu":"8"}',
        ),
    ],
)
def test_totals_are_written_as_koordinator_writes_scaled_quantities(
    allocatable: dict[str, str], total: str
) -> None:
    raw = profile("p", "z", resourceRatio="1", annotations={P + "resource-keys": '["memory"]'})
    (root,) = roots(raw, nodes=[node("n", "z", allocatable)]).roots
    assert root.annotations[P + "total-resource"] == total
    # min: the total's text of each key, "0" where the pool has none
    assert root.min == {"memory": json.loads(total).get("memory", "0")}


def test_cordoned_and_not_ready_nodes_are_in_the_total_and_the_unschedulable_part() -> None:
    nodes = [node("a1", A), node("a2", A, cordoned=True), node("a3", A, ready=False)]
    (root,) = roots(profile("pool", A), nodes=nodes).roots
    assert root.total == {"cpu": 30000, "memory": 3000, "storage": 3000}
    assert root.unschedulable == {"cpu": 20000, "memory": 2000, "storage": 2000}


def test_a_node_selected_by_two_profiles_counts_in_the_older_one_s_pool_only() -> None:
    zone_a = profile("zone-a", A, created=NEWER)
    ready = profile("everything", {}, created=OLDER)  # {}: every node
    found = roots(zone_a, ready)
    assert [(r.profile, r.nodes) for r in found.roots] == [
        ("kube-system/everything", ("node1", "node2", "node3")),
        ("kube-system/zone-a", ()),
    ]
    assert [str(p) for p in found.problems] == [
        "ElasticQuotaProfile kube-system/zone-a: spec.nodeSelector: nodes node1, node2 are also "
        "in the pool of older ElasticQuotaProfile kube-system/everything: they count in that "
        "tree only (Koordinator would count them in both): this tree has no node left, its total "
        "is 0"
    ]
    assert found.roots[1].annotations[P + "total-resource"] == "{}"


def test_profiles_created_together_are_ordered_by_namespace_and_name() -> None:
    every_zone = {"matchExpressions": [{"key": ZONE, "operator": "Exists"}]}
    first = profile("z-pool", every_zone, namespace="infra")  # infra/ before kube-system/
    second = profile("b-pool", B)
    third = profile("c-pool", A)
    found = roots(third, second, first)
    assert [(r.profile, r.nodes) for r in found.roots] == [
        ("infra/z-pool", ("node1", "node2", "node3")),
        ("kube-system/b-pool", ()),
        ("kube-system/c-pool", ()),
    ]
    assert [(p.ref, p.message) for p in found.problems] == [
        (
            "kube-system/b-pool",
            "node node3 is also in the pool of older ElasticQuotaProfile infra/z-pool: it counts "
            "in that tree only (Koordinator would count it in both): this tree has no node "
            "left, its total is 0",
        ),
        (
            "kube-system/c-pool",
            "nodes node1, node2 are also in the pool of older ElasticQuotaProfile infra/z-pool: "
            "they count in that tree only (Koordinator would count them in both): this tree "
            "has no node left, its total is 0",
        ),
    ]


def test_each_older_profile_holding_nodes_is_named_and_nodes_left_still_count() -> None:
    nodes = [node(f"n{i}", A) for i in range(6)] + [node("b1", B), node("c1", "cn-hangzhou-c")]
    older = profile("a-pool", A, created="2025-11-01T00:00:00Z", namespace="infra")
    b_pool = profile("b-pool", B, created=OLDER)
    both = profile("both", {"matchExpressions": [{"key": ZONE, "operator": "Exists"}]})
    both["metadata"]["creationTimestamp"] = NEWER
    found = roots(both, b_pool, older, nodes=nodes)
    assert [str(p) for p in found.problems] == [
        "ElasticQuotaProfile kube-system/both: spec.nodeSelector: node b1 is also in the pool of "
        "older ElasticQuotaProfile kube-system/b-pool: it counts in that tree only (Koordinator "
        "would count it in both)",
        "ElasticQuotaProfile kube-system/both: spec.nodeSelector: nodes n0, n1, n2 and 3 more are "
        "also in the pool of older ElasticQuotaProfile infra/a-pool: they count in that tree "
        "only (Koordinator would count them in both)",
    ]
    assert [r.nodes for r in found.roots] == [tuple(f"n{i}" for i in range(6)), ("b1",), ("c1",)]
    assert found.roots[2].total == {"cpu": 10000, "memory": 1000, "storage": 1000}


def test_a_profile_that_selects_no_node_has_a_root_with_a_total_of_0_and_a_problem() -> None:
    found = roots(profile("gpu", {"matchLabels": {"pool": "gpu"}}))
    (root,) = found.roots
    assert (dict(root.total), root.min) == ({}, {"cpu": "0", "memory": "0"})
    assert [str(p) for p in found.problems] == [
        "ElasticQuotaProfile kube-system/gpu: spec.nodeSelector: matches no node: its tree's "
        "total is 0"
    ]


def test_two_profiles_naming_one_root_the_older_owns_it_and_takes_no_node_from_it() -> None:
    older = profile("zone-b", B, quota="shared-root", created=OLDER)
    newer = profile("zone-a", A, quota="shared-root", created=NEWER, resourceRatio="2")
    found = roots(newer, older)
    assert [(r.ref, r.profile, r.nodes) for r in found.roots] == [
        ("kube-system/shared-root", "kube-system/zone-b", ("node3",))
    ]
    assert [str(p) for p in found.problems] == [
        "ElasticQuotaProfile kube-system/zone-a: spec.quotaName: ElasticQuota "
        "kube-system/shared-root is the root of older ElasticQuotaProfile kube-system/zone-b's "
        "tree: this profile makes no tree; name another quota",
        "ElasticQuotaProfile kube-system/zone-a: spec.resourceRatio: '2' is not a number greater "
        "than 0 and at most 1: the pool's whole total is used (ratio 1), as Koordinator does; "
        'expected e.g. "0.9"',
    ]
    # the same quota name in another namespace is another root
    elsewhere = profile("zone-a", A, quota="shared-root", namespace="team-a", created=NEWER)
    assert len(roots(elsewhere, older).roots) == 2


def test_quota_labels_come_after_the_profile_label_and_before_tree_id_and_is_root() -> None:
    labels = {P + "profile": "mine", P + "tree-id": "x", P + "is-root": "false", "team": "ml"}
    (root,) = roots(profile("pool", A, quotaLabels=labels)).roots
    assert root.labels == {
        P + "profile": "mine",
        P + "tree-id": fnv64a("kube-system/pool"),
        P + "is-root": "true",
        "team": "ml",
    }


def served(body: dict[str, Any]) -> dict[str, Any]:
    """`body` as the API server serves it back, with what others wrote on it since."""
    metadata = body["metadata"] | {
        "uid": "8a1f0c55-0d7e-4b54-9d55-1c0d0f9b3e21",
        "resourceVersion": "61002",
        "generation": 1,
        "creationTimestamp": "2025-12-01T10:00:05Z",
        "labels": body["metadata"]["labels"] | {"owner": "platform"},
        "annotations": body["metadata"]["annotations"] | {P + "runtime": '{"cpu":"4"}'},
    }
    return body | {"metadata": metadata, "status": {"used": {"cpu": "2"}}}


def test_a_root_that_holds_what_the_profile_wants_needs_no_patch() -> None:
    (root,) = roots(profile("pool", A)).roots
    assert root_patch(root, served(root_body(root))) is None


def test_the_patch_writes_only_what_changed_and_leaves_the_rest_alone() -> None:
    (before,) = roots(profile("pool", A)).roots
    existing = served(root_body(before))
    keys = {P + "resource-keys": '["cpu","nvidia.com/gpu"]'}
    (after,) = roots(profile("pool", A, annotations=keys), nodes=NODES[:1]).roots
    patch = root_patch(after, existing)
    assert patch == {
        "metadata": {
            "annotations": {
                P + "total-resource": '{"cpu":"10","memory":"1k","storage":"1k"}',
                P + "unschedulable-resource": "{}",
            }
        },
        "spec": {
            "min": {"memory": None, "cpu": "10", "nvidia.com/gpu": "0"},
            "max": {"memory": None, "nvidia.com/gpu": "4611686018427387"},  # cpu's is right
        },
    }
    updated = merged(existing, patch)
    assert updated["metadata"]["labels"]["owner"] == "platform"  # others' labels stay
    assert updated["status"] == {"used": {"cpu": "2"}}
    assert root_patch(after, updated) is None


def test_a_root_made_by_hand_gets_the_profile_s_labels_and_a_quantity_spelt_otherwise_once() -> (
    None
):
    (root,) = roots(profile("pool", B)).roots
    existing = served(root_body(root))
    existing["metadata"]["labels"].pop(P + "is-root")
    existing["spec"]["min"]["cpu"] = "10000m"  # the same amount, spelt another way
    assert root.min == {"cpu": "10", "memory": "1k"}  # 1000 bytes: Go's BinarySI writes 1k
    assert root_patch(root, existing) == {
        "metadata": {"labels": {P + "is-root": "true"}},
        "spec": {"min": {"cpu": "10"}},
    }
