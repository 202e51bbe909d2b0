"""A new pod's node affinity for its tree's node pool (affinity.py).

The first test transcribes Koordinator's pod webhook test
(pkg/webhook/pod/mutating/multi_quota_tree_affinity_test.go at a7a1b76): its profiles, the
trees its quotas are in, its pods and the pods it expects.
"""

from __future__ import annotations

import copy
import uuid
from typing import Any

import jsonpatch
import pytest
from eq_engine import ObjectError
from eq_engine.model.selectors import LabelSelector, parse_selector
from eq_engine.pools.affinity import REQUIRED, pool_affinity
from eq_engine.pools.profiles import parse_profile, profile_of_tree

P = "quota.scheduling.koordinator.sh/"
TERMS = f"spec.affinity.nodeAffinity.{REQUIRED}.nodeSelectorTerms"
POOL = "ElasticQuotaProfile kube-system/profileA"


def eq_profile(name: str, tree: str, quota: str, pool: str) -> dict[str, Any]:
    return {
        "apiVersion": "quota.koordinator.sh/v1alpha1",
        "kind": "ElasticQuotaProfile",
        "metadata": {
            "name": name,
            "namespace": "kube-system",
            "uid": str(uuid.uuid5(uuid.NAMESPACE_URL, f"kube-system/{name}")),
            "resourceVersion": "7001",
            "creationTimestamp": "2025-12-01T10:00:00Z",
            "labels": {P + "tree-id": tree},
        },
        "spec": {"quotaName": quota, "nodeSelector": {"matchLabels": {"node-pool": pool}}},
    }


PROFILES = [
    parse_profile(eq_profile("profileA", "tree1", "root-quota-a", "nodePoolA")),
    parse_profile(eq_profile("profileB", "tree2", "root-quota-b", "nodePoolB")),
]
# The trees of Koordinator's quotas: other-quota is in none; namespace2's pods fall to
# root-quota-b, whose namespaces annotation names namespace2. Finding a pod's quota is the
# webhook's part; this is what it finds.
TREE_OF = {"other-quota": "", "root-quota-a-child1": "tree1", "namespace1": "tree1"}
TREE_OF |= {"root-quota-b-child1": "tree2", "namespace2": "tree2"}


def pod(namespace: str, quota: str | None = None, spec: dict[str, Any] | None = None) -> Any:
    """A pod as mutating admission receives it from a ReplicaSet: no name yet."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "generateName": "test-pod-1-7c9d8f6b5-",
            "namespace": namespace,
            "labels": {"app": "test", **({P + "name": quota} if quota else {})},
            "ownerReferences": [
                {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "test-pod-1-7c9d8f6b5"}
                | {"uid": "0b7e9f0a-1c2d-4e5f-8a9b-0c1d2e3f4a5b", "controller": True}
            ],
        },
        "spec": {
            "containers": [{"name": "main", "image": "busybox:1.36", "resources": {}}],
            "restartPolicy": "Always",
            "schedulerName": "default-scheduler",
            **(spec or {}),
        },
        "status": {},
    }


def required(*terms: list[dict[str, Any]]) -> dict[str, Any]:
    """`spec.affinity` requiring `terms` (each its matchExpressions)."""
    selector = {"nodeSelectorTerms": [{"matchExpressions": term} for term in terms]}
    return {"affinity": {"nodeAffinity": {REQUIRED: selector}}}


def expr(key: str, operator: str, *values: str) -> dict[str, Any]:
    return {"key": key, "operator": operator, **({"values": list(values)} if values else {})}


POOL_A, POOL_B = expr("node-pool", "In", "nodePoolA"), expr("node-pool", "In", "nodePoolB")
ZONE_A = expr("topology.kubernetes.io/zone", "In", "cn-hangzhou-a")


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        pytest.param(pod("default"), pod("default"), id="no quota label"),
        pytest.param(
            pod("default", "other-quota"), pod("default", "other-quota"), id="no quota profile"
        ),
        pytest.param(
            pod("default", "root-quota-a-child1"),
            pod("default", "root-quota-a-child1", required([POOL_A])),
            id="add node affinity",
        ),
        pytest.param(
            pod("default", "root-quota-a-child1", required([ZONE_A])),
            pod("default", "root-quota-a-child1", required([ZONE_A, POOL_A])),
            id="append node affinity",
        ),
        pytest.param(
            pod("default", "root-quota-b-child1"),
            pod("default", "root-quota-b-child1", required([POOL_B])),
            id="multi quotas",
        ),
        pytest.param(
            pod("namespace1"), pod("namespace1", spec=required([POOL_A])), id="default quota"
        ),
        pytest.param(
            pod("namespace2"), pod("namespace2", spec=required([POOL_B])), id="default quota 2"
        ),
    ],
)
def test_koordinator_s_multi_quota_tree_affinity_cases(given: Any, expected: Any) -> None:
    quota = given["metadata"]["labels"].get(P + "name") or given["metadata"]["namespace"]
    profile = profile_of_tree(PROFILES, TREE_OF.get(quota, ""))
    mutated = given
    if profile is not None:
        found = pool_affinity(
            given, profile.node_selector, pool=f"ElasticQuotaProfile {profile.ref}"
        )
        assert found.warnings == []
        mutated = jsonpatch.apply_patch(given, found.patch)
        # a reinvoked webhook changes nothing more
        assert pool_affinity(mutated, profile.node_selector, pool="") == ([], [])
    assert mutated == expected


def selector(raw: dict[str, Any]) -> LabelSelector:
    parsed = parse_selector(raw, kind="ElasticQuotaProfile", ref="kube-system/p", field="x")
    assert parsed is not None
    return parsed


GPU = selector(
    {
        "matchLabels": {"node-pool": "gpu", "accelerator": "a100"},  # in key order: a before n
        "matchExpressions": [
            expr("nvidia.com/gpu.present", "Exists"),
            expr("tier", "NotIn", "x", "b"),
        ],
    }
)
GPU_REQUIREMENTS = [
    expr("accelerator", "In", "a100"),
    expr("node-pool", "In", "gpu"),
    expr("nvidia.com/gpu.present", "Exists"),  # no values, as the API writes it
    expr("tier", "NotIn", "x", "b"),
]
BASE = f"/spec/affinity/nodeAffinity/{REQUIRED}"
ANTI: dict[str, Any] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": []}}
PREFERRED = {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1, "preference": {}}]}
FIELDS = {"matchFields": [expr("metadata.name", "In", "gpu-1")]}


def add(path: str, value: Any) -> dict[str, Any]:
    return {"op": "add", "path": BASE + path, "value": value}


TERM = {"matchExpressions": GPU_REQUIREMENTS}
MADE = {"nodeSelectorTerms": [TERM]}


@pytest.mark.parametrize(
    ("spec", "patch"),
    [
        (
            {},
            [{"op": "add", "path": "/spec/affinity", "value": {"nodeAffinity": {REQUIRED: MADE}}}],
        ),
        (
            {"affinity": ANTI},
            [{"op": "add", "path": "/spec/affinity/nodeAffinity", "value": {REQUIRED: MADE}}],
        ),
        ({"affinity": {"nodeAffinity": PREFERRED}}, [add("", MADE)]),
        (
            {"affinity": {"nodeAffinity": {REQUIRED: {"nodeSelectorTerms": []}}}},
            [add("/nodeSelectorTerms", [TERM])],
        ),
        (  # a term of matchFields only gets matchExpressions; matchFields stay as they are
            {"affinity": {"nodeAffinity": {REQUIRED: {"nodeSelectorTerms": [FIELDS]}}}},
            [add("/nodeSelectorTerms/0/matchExpressions", GPU_REQUIREMENTS)],
        ),
        (  # each term gets what it misses, at its end
            required([GPU_REQUIREMENTS[1], ZONE_A], [*GPU_REQUIREMENTS[:3]]),
            [
                *(
                    add("/nodeSelectorTerms/0/matchExpressions/-", r)
                    for r in (GPU_REQUIREMENTS[0], *GPU_REQUIREMENTS[2:])
                ),
                add("/nodeSelectorTerms/1/matchExpressions/-", GPU_REQUIREMENTS[3]),
            ],
        ),
        (required(GPU_REQUIREMENTS, [ZONE_A, *GPU_REQUIREMENTS]), []),  # every term has them
    ],
)
def test_the_pool_s_requirements_go_into_every_term_made_where_missing(
    spec: dict[str, Any], patch: list[dict[str, Any]]
) -> None:
    raw = pod("team-a", "gpu-team", copy.deepcopy(spec))
    found = pool_affinity(raw, GPU, pool=POOL)
    assert (found.patch, found.warnings) == (patch, [])
    mutated = jsonpatch.apply_patch(raw, found.patch)
    assert mutated["spec"]["affinity"].get("podAntiAffinity") == spec.get("affinity", {}).get(
        "podAntiAffinity"
    )
    terms = mutated["spec"]["affinity"]["nodeAffinity"][REQUIRED]["nodeSelectorTerms"]
    assert all(r in term["matchExpressions"] for term in terms for r in GPU_REQUIREMENTS)
    assert pool_affinity(mutated, GPU, pool=POOL).patch == []


def test_a_pool_of_every_node_adds_nothing() -> None:
    raw = pod("team-a", "gpu-team")
    assert pool_affinity(raw, selector({}), pool=POOL) == ([], [])


@pytest.mark.parametrize(
    ("spec", "field", "message"),
    [
        ({"affinity": "gpu"}, "spec.affinity", "expected an object"),
        ({"affinity": {"nodeAffinity": []}}, "spec.affinity.nodeAffinity", "expected an object"),
        (
            {"affinity": {"nodeAffinity": {REQUIRED: {"nodeSelectorTerms": {}}}}},
            TERMS,
            "expected a list of node selector terms",
        ),
        (
            {"affinity": {"nodeAffinity": {REQUIRED: {"nodeSelectorTerms": [FIELDS, None]}}}},
            f"{TERMS}[1]",
            "expected a node selector term",
        ),
        (
            {
                "affinity": {
                    "nodeAffinity": {REQUIRED: {"nodeSelectorTerms": [{"matchExpressions": {}}]}}
                }
            },
            f"{TERMS}[0].matchExpressions",
            "expected a list",
        ),
    ],
)
def test_an_affinity_not_shaped_as_the_api_s_is_named(spec: Any, field: str, message: str) -> None:
    with pytest.raises(ObjectError) as caught:
        pool_affinity(pod("team-a", "gpu-team", spec), GPU, pool=POOL)
    assert str(caught.value) == f"Pod team-a/test-pod-1-7c9d8f6b5-: {field}: {message}"


A = expr("node-pool", "In", "nodePoolA")
POOL_SELECTOR = selector({"matchLabels": {"node-pool": "nodePoolA"}})
EXCLUDES = f"excludes the nodes of {POOL} (node-pool In [nodePoolA])"


@pytest.mark.parametrize(
    ("terms", "warnings"),
    [
        (
            [[expr("node-pool", "In", "nodePoolB")]],
            ["matchExpressions[0] (node-pool In [nodePoolB])"],
        ),
        (
            [[ZONE_A, expr("node-pool", "In", "b", "c")]],
            ["matchExpressions[1] (node-pool In [b, c])"],
        ),
        ([[expr("node-pool", "In", "b", "nodePoolA")]], []),  # the sets meet
        (
            [[expr("node-pool", "NotIn", "nodePoolA")]],
            ["matchExpressions[0] (node-pool NotIn [nodePoolA])"],
        ),
        ([[expr("node-pool", "NotIn", "nodePoolB")]], []),
        ([[expr("node-pool", "DoesNotExist")]], ["matchExpressions[0] (node-pool DoesNotExist)"]),
        ([[expr("node-pool", "Gt", "3")]], []),  # Gt, Lt: only that the label exists
        ([[expr("zone", "DoesNotExist")]], []),  # another label
        (  # every term that is left out is named
            [[expr("node-pool", "In", "b")], [ZONE_A, expr("node-pool", "NotIn", "nodePoolA")]],
            [
                "[0] matchExpressions[0] (node-pool In [b])",
                "[1] matchExpressions[1] (node-pool NotIn [nodePoolA])",
            ],
        ),
        ([[expr("node-pool", "In", "b")], [ZONE_A]], []),  # one term admits the pool
        (  # entries that do not read constrain nothing
            [["node-pool", {"key": "node-pool", "operator": "In", "values": "b"}, ZONE_A]],
            [],
        ),
    ],
)
def test_a_warning_when_no_term_of_the_pod_admits_a_node_of_the_pool(
    terms: list[list[Any]], warnings: list[str]
) -> None:
    found = pool_affinity(pod("default", "q", required(*terms)), POOL_SELECTOR, pool=POOL)
    index = "" if len(terms) > 1 else "[0] "
    assert found.warnings == [
        f"the pod will not schedule: {TERMS}{index}{w} {EXCLUDES}" for w in warnings
    ]


@pytest.mark.parametrize(
    ("pool", "term", "warned"),
    [
        (expr("gpu", "Exists"), expr("gpu", "DoesNotExist"), True),
        (expr("spot", "DoesNotExist"), expr("spot", "Exists"), True),
        (expr("spot", "DoesNotExist"), expr("spot", "In", "true"), True),
        (expr("spot", "DoesNotExist"), expr("spot", "NotIn", "true"), False),
        (expr("spot", "DoesNotExist"), expr("spot", "Gt", "3"), True),  # Gt: the label is there
        (expr("tier", "NotIn", "a", "b"), expr("tier", "In", "b", "a"), True),
        (expr("tier", "NotIn", "a"), expr("tier", "In", "b", "a"), False),
    ],
)
def test_the_pool_s_expressions_are_weighed_against_the_pod_s_alike(
    pool: dict[str, Any], term: dict[str, Any], warned: bool
) -> None:
    found = pool_affinity(
        pod("default", "q", required([term])), selector({"matchExpressions": [pool]}), pool=POOL
    )
    assert len(found.warnings) == warned


@pytest.mark.parametrize(
    ("pool", "node_selector", "warning"),
    [
        (
            {"matchLabels": {"node-pool": "nodePoolA"}},
            {"node-pool": "nodePoolB"},
            "node-pool In [nodePoolA]",
        ),
        ({"matchLabels": {"node-pool": "nodePoolA"}}, {"node-pool": "nodePoolA"}, None),
        ({"matchLabels": {"node-pool": "nodePoolA"}}, {"disktype": "ssd"}, None),
        (
            {"matchExpressions": [expr("spot", "DoesNotExist")]},
            {"spot": "true"},
            "spot DoesNotExist",
        ),
        ({"matchExpressions": [expr("gpu", "Exists")]}, {"gpu": "a100"}, None),
        (
            {"matchExpressions": [expr("tier", "NotIn", "batch")]},
            {"tier": "batch"},
            "tier NotIn [batch]",
        ),
    ],
)
def test_a_warning_when_the_pod_s_node_selector_contradicts_the_pool(
    pool: dict[str, Any], node_selector: dict[str, str], warning: str | None
) -> None:
    raw = pod("default", "q", {"nodeSelector": node_selector})
    found = pool_affinity(raw, selector(pool), pool=POOL)
    assert len(found.patch) == 1  # the affinity is added all the same, as Koordinator does
    ((key, value),) = node_selector.items()
    assert found.warnings == (
        []
        if warning is None
        else [
            f"the pod will not schedule: spec.nodeSelector {key}={value} excludes the nodes of "
            f"{POOL} ({warning})"
        ]
    )
