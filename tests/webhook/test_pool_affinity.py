"""The mutating endpoint `/mutate/pods` and node pools: a new pod of a pool's quota tree gets a
required node affinity to the pool's nodes (its tree's ElasticQuotaProfile's selector), merged
with its own; a warning when its own constraints exclude the pool. Over HTTPS, against the
emulated API server holding the seed's GPU cluster."""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from tests.apiserver import ApiServer
from tests.manifests import OWN
from tests.realistic import (
    P,
    admission_review,
    elastic_quota,
    elastic_quota_profile,
    named_by_server,
    node,
    pod,
)
from tests.webhook.conftest import Webhook, start_webhook, stop_webhook

pytestmark = pytest.mark.asyncio(loop_scope="module")

PRODUCT = "nvidia.com/gpu.product"
V100 = "Tesla-V100-SXM2-16GB"
A100 = "NVIDIA-A100-SXM4-80GB"
GATE = {"name": P + "admission"}


def profile(name: str, product: str) -> dict[str, Any]:
    raw = elastic_quota_profile(
        name,
        "koordinator-system",
        quota_name=name,
        node_selector={"matchLabels": {PRODUCT: product}},
        resource_keys=["cpu", "memory", "nvidia.com/gpu"],
    )
    raw["metadata"]["labels"] = {P + "tree-id": name}
    return raw


def group(name: str, namespace: str, tree: str) -> dict[str, Any]:
    gpus = {"nvidia.com/gpu": "5"}
    labels = {P + "tree-id": tree}
    return elastic_quota(name, namespace, parent=tree, min=gpus, max=gpus, labels=labels)


def cluster() -> list[dict[str, Any]]:
    gpu = {"nvidia.com/gpu": "10"}
    roots = [
        elastic_quota(
            tree, "koordinator-system", is_parent=True, min=gpu, max=gpu,
            labels={P + "tree-id": tree, P + "is-root": "true"},
            annotations={P + "total-resource": json.dumps(gpu)},
        )
        for tree in ("a100", "v100")
    ]  # fmt: skip
    return [
        profile("a100", A100),
        profile("v100", V100),
        *roots,
        group("team-b-v100", "team-b", "v100"),
        group("team-b-a100", "team-b", "a100"),
        elastic_quota(
            "team-b-gpus",
            "team-b",
            annotations={OWN + "pools": json.dumps(["team-b-v100", "team-b-a100"])},
        ),
        elastic_quota("team-c", "team-c", min={"cpu": "4"}, max={"cpu": "8"}),
        node("v100-1", labels={PRODUCT: V100}, extra={"nvidia.com/gpu": "5"}),
    ]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def api() -> AsyncIterator[ApiServer]:
    """The GPU cluster, in place of conftest's: its `webhook` fixture follows this one."""
    async with ApiServer() as emulator:
        emulator.seed(*cluster())
        yield emulator


def new_pod(namespace: str, group: str | None = None, **spec: Any) -> dict[str, Any]:
    """A Job's pod as the API server sends it to mutating admission: no name yet."""
    labels = {"batch.kubernetes.io/job-name": "train"} | ({P + "name": group} if group else {})
    return pod(
        namespace,
        None,
        generate_name="train-",
        labels=labels,
        requests={"cpu": "4", "nvidia.com/gpu": "1"},
        node=None,
        restart_policy="Never",
        **spec,
    )


async def mutate(webhook: Webhook, raw: dict[str, Any]) -> tuple[list[Any], list[str]]:
    """The JSON Patch and the warnings the webhook answers with."""
    response = await webhook.post("/mutate/pods", admission_review("CREATE", new=raw, name=""))
    assert response.status == 200, await response.text()
    answer = (await response.json())["response"]
    assert answer["allowed"] is True
    patch = json.loads(base64.b64decode(answer["patch"])) if "patch" in answer else []
    return patch, answer.get("warnings", [])


V100_TERM = {"key": PRODUCT, "operator": "In", "values": [V100]}
V100_ONLY = {"matchExpressions": [V100_TERM]}
REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"


async def test_a_pod_of_a_pool_tree_gets_the_pools_affinity_and_the_gate(webhook):
    patch, warnings = await mutate(webhook, new_pod("team-b", "team-b-v100"))
    assert patch == [
        {
            "op": "add",
            "path": "/spec/affinity",
            "value": {"nodeAffinity": {REQUIRED: {"nodeSelectorTerms": [V100_ONLY]}}},
        },
        {"op": "add", "path": "/spec/schedulingGates", "value": [GATE]},
    ]  # fmt: skip
    assert warnings == []


async def test_a_pod_that_may_use_several_pools_is_gated_without_a_pools_affinity(webhook):
    # the operator narrows its affinity to the pool it chooses, as it lifts the gate
    patch, warnings = await mutate(webhook, new_pod("team-b", "team-b-gpus"))
    assert patch == [{"op": "add", "path": "/spec/schedulingGates", "value": [GATE]}]
    assert warnings == []
    # a label naming no group of the list chooses nothing: the gate still chooses
    stray = new_pod("team-b", "team-b-gpus")
    stray["metadata"]["labels"][OWN + "pool-quota"] = "team-c"
    assert (await mutate(webhook, stray))[0] == patch
    chosen = new_pod("team-b", "team-b-gpus")
    chosen["metadata"]["labels"][OWN + "pool-quota"] = "team-b-a100"
    patch, _ = await mutate(webhook, chosen)
    a100 = {"matchExpressions": [{"key": PRODUCT, "operator": "In", "values": [A100]}]}
    assert patch[0]["value"] == {"nodeAffinity": {REQUIRED: {"nodeSelectorTerms": [a100]}}}


async def test_ungated_a_pod_of_several_pools_keeps_to_the_first(api, certificates, tmp_path):
    off = await start_webhook(tmp_path, str(api.url), certificates, "--gate-pods", "false")
    try:
        patch, _ = await mutate(off, new_pod("team-b", "team-b-gpus"))
    finally:
        await stop_webhook(off)
    assert patch == [
        {
            "op": "add",
            "path": "/spec/affinity",
            "value": {"nodeAffinity": {REQUIRED: {"nodeSelectorTerms": [V100_ONLY]}}},
        }
    ]


async def test_a_pod_of_several_pools_that_opts_out_of_the_gate_keeps_to_the_first(webhook):
    ungated = new_pod("team-b", "team-b-gpus")
    ungated["metadata"]["labels"][P + "gate"] = "false"
    patch, _ = await mutate(webhook, ungated)
    assert patch == [
        {
            "op": "add",
            "path": "/spec/affinity",
            "value": {"nodeAffinity": {REQUIRED: {"nodeSelectorTerms": [V100_ONLY]}}},
        }
    ]


async def test_the_pools_requirement_joins_every_term_of_the_pods_own(webhook):
    zones = {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["eu-1a"]}
    racks = {"key": "example.com/rack", "operator": "Exists"}
    affinity = {"nodeAffinity": {REQUIRED: {"nodeSelectorTerms": [
        {"matchExpressions": [zones]}, {"matchExpressions": [racks]},
    ]}}}  # fmt: skip
    patch, warnings = await mutate(webhook, new_pod("team-b", "team-b-v100", affinity=affinity))
    terms = f"/spec/affinity/nodeAffinity/{REQUIRED}/nodeSelectorTerms"
    assert patch[:2] == [
        {"op": "add", "path": f"{terms}/0/matchExpressions/-", "value": V100_TERM},
        {"op": "add", "path": f"{terms}/1/matchExpressions/-", "value": V100_TERM},
    ]
    assert warnings == []


async def test_a_pod_whose_own_constraints_exclude_the_pool_is_warned(webhook):
    patch, warnings = await mutate(
        webhook, new_pod("team-b", "team-b-v100", nodeSelector={PRODUCT: A100})
    )
    assert patch[0]["path"] == "/spec/affinity"  # the pool still holds: its quota is there
    assert warnings == [
        f"Pod of group team-b-v100, quota tree 'v100': the pod will not schedule: "
        f"spec.nodeSelector {PRODUCT}={A100} excludes the nodes of ElasticQuotaProfile "
        f"koordinator-system/v100 ({PRODUCT} In [{V100}])"
    ]


async def test_a_pod_of_the_default_tree_gets_no_affinity(webhook):
    patch, _ = await mutate(webhook, new_pod("team-c"))
    assert patch == [{"op": "add", "path": "/spec/schedulingGates", "value": [GATE]}]


async def test_a_pod_placed_by_name_is_left_where_it_is_put(webhook):
    """A pod created bound to a node: the kubelet would refuse it if its affinity excluded that
    node, so the pool's affinity is not added (nor the gate, which the API server refuses)."""
    raw = new_pod("team-b", "team-b-v100")
    raw["spec"]["nodeName"] = "a100-1"
    patch, _ = await mutate(webhook, raw)
    assert patch == []


async def test_an_opted_out_pod_keeps_its_pool(webhook):
    raw = new_pod("team-b", "team-b-v100")
    raw["metadata"]["labels"][P + "gate"] = "false"
    patch, _ = await mutate(webhook, raw)
    assert [op["path"] for op in patch] == ["/spec/affinity"]


@pytest.mark.parametrize(
    ("flags", "paths"),
    [
        (("--pool-affinity", "false"), ["/spec/schedulingGates"]),
        (("--gate-pods", "false"), ["/spec/affinity"]),
    ],
    ids=["pool affinity off", "gating off"],
)
async def test_each_mutation_has_its_own_switch(api, certificates, tmp_path, flags, paths):
    running = await start_webhook(tmp_path, str(api.url), certificates, *flags)
    try:
        patch, _ = await mutate(running, new_pod("team-b", "team-b-v100"))
        assert [op["path"] for op in patch] == paths
    finally:
        await stop_webhook(running)


async def test_a_pod_named_by_the_server_is_the_same_to_the_pool(webhook):
    """kube-apiserver names a generateName pod only after mutating admission; a named one (a
    bare pod) gets the same affinity."""
    named = named_by_server(new_pod("team-b", "team-b-v100"))
    patch, _ = await mutate(webhook, named)
    assert patch[0]["value"]["nodeAffinity"][REQUIRED]["nodeSelectorTerms"] == [V100_ONLY]
