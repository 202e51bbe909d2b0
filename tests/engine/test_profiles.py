"""ElasticQuotaProfiles (profiles.py): how one reads, its tree id, and what Koordinator ignores
but the profile reports.

The first test transcribes Koordinator's profile controller test
(pkg/quota-controller/profile/profile_controller_test.go at a7a1b76) with its numbers: nodes of
10 cpu, 1000 bytes of memory and 1000 of storage; node2 is not Ready.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from eq_engine import ObjectError
from eq_engine.model.problems import Problem
from eq_engine.model.quantities import resource_list
from eq_engine.pools.profile_roots import MAX_TEXT, root_body, root_patch
from eq_engine.pools.profiles import (
    DEFAULT_KEYS,
    parse_profile,
    profile_of_tree,
    tree_hash,
)

from tests.engine.profile_objects import (
    KEYS_FIELD,
    ZONE,
    P,
    canonical,
    fnv64a,
    merged,
    profile,
    roots,
)

A, B = "cn-hangzhou-a", "cn-hangzhou-b"
TREE1 = {P + "tree-id": "tree1"}
CPU_ONLY = {P + "resource-keys": '["cpu"]'}
EXISTING = {  # Koordinator's "exist quota": a root made before, by hand
    "apiVersion": "scheduling.sigs.k8s.io/v1alpha1",
    "kind": "ElasticQuota",
    "metadata": {
        "name": "profile1-root",
        "namespace": "kube-system",
        "uid": "2b9c8f0e-4c55-4a8e-8f55-9f0d8b7a6c11",
        "resourceVersion": "50200",
        "creationTimestamp": "2025-12-01T09:00:00Z",
        "labels": {"a": "a"},
    },
    "spec": {"min": {"cpu": "5", "memory": "50"}},
}
WHOLE = (canonical(20, 2000, 2000), canonical(10, 1000, 1000))  # zone a: node1 and node2
SCALED = (canonical(18, 1800, 1800), canonical(9, 900, 900))  # the same, ratio 0.9
LABELLED: dict[str, Any] = {"quotaLabels": {ZONE: A}}
RATIO: dict[str, Any] = {"resourceRatio": "0.9"}


def case(name: str, raw: dict[str, Any], *expected: Any, existing: Any = None) -> Any:
    """One of Koordinator's cases: its name, the profile, then min, totals and extra labels."""
    return pytest.param(raw, existing, *expected, id=name)


@pytest.mark.parametrize(
    ("raw", "existing", "min", "totals", "labels"),
    [
        case("cn-hangzhou-a profile", profile("profile1", A), canonical(20, 2000), WHOLE, {}),
        case(
            "cn-hangzhou-b profile",
            profile("profile2", B),
            canonical(10, 1000),
            (canonical(10, 1000, 1000), {}),
            {},
        ),
        case(
            "more quota labels",
            profile("profile1", A, **LABELLED),
            canonical(20, 2000),
            WHOLE,
            {ZONE: A},
        ),
        case(
            "exist quota",
            profile("profile1", A, **LABELLED),
            canonical(20, 2000),
            WHOLE,
            {ZONE: A, "a": "a"},
            existing=EXISTING,
        ),
        case("has ratio", profile("profile1", A, **RATIO), canonical(18, 1800), SCALED, {}),
        case(
            "with tree id",
            profile("profile1", A, labels=TREE1, **RATIO),
            canonical(18, 1800),
            SCALED,
            {},
        ),
        case(
            "with resource key",
            profile("profile1", A, labels=TREE1, annotations=CPU_ONLY, **RATIO),
            {"cpu": 18000},
            SCALED,
            {},
        ),
    ],
)
def test_koordinator_s_profile_controller_cases(
    raw: dict[str, Any],
    existing: dict[str, Any] | None,
    min: dict[str, int],
    totals: tuple[dict[str, int], dict[str, int]],
    labels: dict[str, str],
) -> None:
    (root,) = roots(raw).roots
    patch = root_patch(root, existing) if existing else None
    quota = merged(existing, patch or {}) if existing else root_body(root)
    annotations = quota["metadata"]["annotations"]
    tree_id = raw["metadata"].get("labels", {}).get(P + "tree-id") or fnv64a(
        f"kube-system/{raw['metadata']['name']}"
    )
    assert resource_list(quota["spec"]["min"]) == min
    assert resource_list(json.loads(annotations[P + "total-resource"])) == totals[0]
    assert resource_list(json.loads(annotations[P + "unschedulable-resource"])) == totals[1]
    assert quota["metadata"]["labels"] == {
        P + "profile": raw["metadata"]["name"],
        P + "tree-id": tree_id,
        P + "is-root": "true",
        **labels,
    }
    assert quota["spec"]["max"] == dict.fromkeys(min, MAX_TEXT)
    assert (root.total, root.unschedulable) == totals


def test_the_test_hash_gives_go_s_fnv64a_vectors() -> None:
    vectors = {"": 0xCBF29CE484222325, "a": 0xAF63DC4C8601EC8C, "abc": 0xE71FA2190541574B}
    assert {text: fnv64a(text) for text in vectors} == {t: str(v) for t, v in vectors.items()}


@pytest.mark.parametrize(
    ("labels", "tree_id"),
    [
        ({}, fnv64a("kube-system/gpu-pool")),
        ({P + "tree-id": ""}, fnv64a("kube-system/gpu-pool")),  # empty: hashed, as in Go
        ({P + "tree-id": "tree1"}, "tree1"),
    ],
)
def test_the_tree_id_is_the_label_else_the_hash_of_namespace_and_name(
    labels: dict[str, str], tree_id: str
) -> None:
    parsed = parse_profile(profile("gpu-pool", A, labels=labels))
    assert parsed.tree_id == tree_id
    assert tree_hash("team-a", "gpu-pool") == fnv64a("team-a/gpu-pool")
    assert tree_hash("kube-system", "gpu-pool") != tree_hash("kube-syste", "mgpu-pool")


def test_the_profile_of_a_tree_is_the_oldest_naming_it_and_the_default_tree_has_none() -> None:
    tree1 = {P + "tree-id": "tree1"}
    profiles = [
        parse_profile(profile("newer", A, labels=tree1, created="2025-12-02T00:00:00Z")),
        parse_profile(profile("older", B, labels=tree1, created="2025-12-01T00:00:00Z")),
        parse_profile(profile("hashed", A)),  # no label: its tree id is the hash
    ]
    assert profile_of_tree(profiles, "tree1") is profiles[1]
    assert profile_of_tree(profiles, fnv64a("kube-system/hashed")) is profiles[2]
    assert profile_of_tree(profiles, "tree3") is None
    assert profile_of_tree(profiles, "") is None  # the default tree: no pool


def test_a_profile_reads_every_field_it_uses() -> None:
    raw = profile(
        "gpu-pool",
        {
            "matchLabels": {"pool": "gpu"},
            "matchExpressions": [{"key": "gpu", "operator": "Exists"}],
        },
        quota="gpu-root",
        namespace="team-a",
        created="2025-12-01T10:00:30Z",
        annotations={P + "resource-keys": '["nvidia.com/gpu", "cpu", "cpu"]'},
        quotaLabels={"team": "ml"},
        resourceRatio="0.95",
    )
    parsed = parse_profile(raw)
    assert (parsed.ref, parsed.root_ref, parsed.uid) == (
        "team-a/gpu-pool",
        "team-a/gpu-root",
        raw["metadata"]["uid"],
    )
    assert (parsed.ratio, parsed.resource_keys, parsed.quota_labels) == (
        0.95,
        ("nvidia.com/gpu", "cpu"),
        (("team", "ml"),),
    )
    assert parsed.node_selector.matches({"pool": "gpu", "gpu": "a100"})
    assert not parsed.node_selector.matches({"pool": "gpu"})
    assert parsed.created == 1764583230.0
    assert parsed.problems == ()
    assert parse_profile(profile("plain", A)).ratio is None  # no ratio: amounts as summed


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        ({"quotaName": ""}, "spec.quotaName", "required: the name of the tree's root ElasticQuota"),
        (
            {"quotaName": None},
            "spec.quotaName",
            "required: the name of the tree's root ElasticQuota",
        ),
        (
            {"nodeSelector": None},
            "spec.nodeSelector",
            "required: the nodes of the pool ({} for every node)",
        ),
        (
            {"nodeSelector": {"matchExpressions": [{"key": "pool", "operator": "In"}]}},
            "spec.nodeSelector.matchExpressions[0].values",
            "required when the operator is In",
        ),
        ({"quotaLabels": {"team": 7}}, "spec.quotaLabels", "expected a map of strings to strings"),
        ({"resourceRatio": 0.9}, "spec.resourceRatio", '0.9: expected a string, e.g. "0.9"'),
    ],
)
def test_a_profile_koordinator_cannot_use_names_its_field(
    change: dict[str, Any], field: str, message: str
) -> None:
    raw = profile("gpu-pool", A)
    raw["spec"].update(change)
    with pytest.raises(ObjectError) as caught:
        parse_profile(raw)
    assert str(caught.value) == f"ElasticQuotaProfile kube-system/gpu-pool: {field}: {message}"


def test_a_malformed_creation_time_is_named() -> None:
    with pytest.raises(ObjectError, match=r"metadata.creationTimestamp: 'yesterday'"):
        parse_profile(profile("gpu-pool", A, created="yesterday"))


@pytest.mark.parametrize(
    ("text", "ratio"),
    [
        *[("0.9", 0.9), ("1", 1.0), ("1.0", 1.0), (".5", 0.5), ("5e-1", 0.5), ("+0.25", 0.25)],
        *[("0x1p-1", 0.5), ("0X.8P0", 0.5), ("1e-3", 0.001)],  # Go reads hexadecimal floats too
        *[("0.9_5", 0.95), ("0x_1p-1", 0.5), ("0x_1_2.3_4_5p-1_2", 74565 / 2**24)],  # and _
    ],
)
def test_a_ratio_go_reads_in_0_to_1_scales_the_pool(text: str, ratio: float) -> None:
    parsed = parse_profile(profile("gpu-pool", A, resourceRatio=text))
    assert (parsed.ratio, parsed.problems) == (ratio, ())


@pytest.mark.parametrize(
    "text",
    [
        *["abc", "", "0", "-0.5", "1.5", "1.0000001", "NaN", "Inf", "+Inf", "1e400", "90%"],
        *[" 0.9", "0.9\n", "0,9", "0x1", "0x1.8"],  # no space, no hexadecimal without p
        *["0_9", "_0.9", "0.9_", "0._9", "0.9__5", "0x__1p-1", "0x1p_-1", "0.5e_1"],  # Go's _
    ],
)
def test_any_other_ratio_is_1_as_in_koordinator_and_a_problem(text: str) -> None:
    parsed = parse_profile(profile("gpu-pool", A, resourceRatio=text))
    assert parsed.ratio == 1.0
    assert parsed.problems == (
        Problem(
            "ElasticQuotaProfile",
            "kube-system/gpu-pool",
            "spec.resourceRatio",
            f"{text!r} is not a number greater than 0 and at most 1: the pool's whole total is "
            'used (ratio 1), as Koordinator does; expected e.g. "0.9"',
        ),
    )


@pytest.mark.parametrize(
    ("text", "resource_keys"),
    [
        ('["cpu"]', ("cpu",)),
        ('["cpu","memory","nvidia.com/gpu"]', ("cpu", "memory", "nvidia.com/gpu")),
        ("[]", ()),  # no key: an empty min and max, as Koordinator writes them
        ("null", ()),  # Go decodes null into an empty list
    ],
)
def test_the_resource_keys_name_the_root_s_min_and_max(
    text: str, resource_keys: tuple[str, ...]
) -> None:
    parsed = parse_profile(profile("gpu-pool", A, annotations={P + "resource-keys": text}))
    assert (parsed.resource_keys, parsed.problems) == (resource_keys, ())


@pytest.mark.parametrize("text", ['"cpu"', '{"cpu": true}', '[1, "nvidia.com/gpu"]', "[cpu]", ""])
def test_malformed_resource_keys_are_cpu_and_memory_as_in_koordinator_and_a_problem(
    text: str,
) -> None:
    parsed = parse_profile(profile("gpu-pool", A, annotations={P + "resource-keys": text}))
    assert parsed.resource_keys == DEFAULT_KEYS == ("cpu", "memory")
    assert [str(problem) for problem in parsed.problems] == [
        f"ElasticQuotaProfile kube-system/gpu-pool: {KEYS_FIELD}: {text!r} is not a JSON list of "
        "resource names: the root's min and max hold cpu and memory, as Koordinator does; "
        'expected e.g. ["cpu","memory","nvidia.com/gpu"]'
    ]
