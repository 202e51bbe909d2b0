"""Node pools through the operator process: each ElasticQuotaProfile becomes its tree's root
ElasticQuota, kept as the profile and the nodes say (the seed's GPU cluster: A100 and V100
pools, and a CPU node in no pool)."""

from __future__ import annotations

import json
from typing import Any

from eq_engine.model import keys
from eq_engine.pools import tree_hash

from tests.kube import EVENTS, QUOTAS, store, stored
from tests.operator.conftest import eventually, start_operator
from tests.realistic import elastic_quota, elastic_quota_profile, node

GPU = "nvidia.com/gpu"
KEYS = ["cpu", "memory", GPU]


def gpu_node(name: str, model: str) -> dict[str, Any]:
    return node(name, cpu="32", labels={"gpu-model": model}, extra={GPU: "5"})


def profile(model: str) -> dict[str, Any]:
    return elastic_quota_profile(
        model,
        "gpu-pools",
        quota_name=model,
        node_selector={"matchLabels": {"gpu-model": model}},
        resource_keys=KEYS,
    )


def unreadable() -> dict[str, Any]:
    """A profile whose selector the API server's schema lets through but no selector reads."""
    raw = profile("near")
    raw["spec"]["nodeSelector"] = {
        "matchExpressions": [{"key": "gpu-model", "operator": "Near", "values": ["a100"]}]
    }
    return raw


def root(api: Any, name: str) -> dict[str, Any] | None:
    return next((q for q in stored(api, QUOTAS) if q["metadata"]["name"] == name), None)


def total(api: Any, name: str) -> dict[str, str] | None:
    found = root(api, name)
    annotations = {} if found is None else found["metadata"].get("annotations") or {}
    text = annotations.get(keys.TOTAL_RESOURCE)
    return None if text is None else json.loads(text)


def problems(api: Any) -> dict[str, str]:
    return {
        e["involvedObject"]["name"]: e["message"]
        for e in stored(api, EVENTS)
        if e.get("reason") == "ConfigurationProblem"
        and e["involvedObject"]["kind"] == "ElasticQuotaProfile"
    }


async def test_profiles_make_their_roots_and_follow_the_nodes(api, client, tmp_path):
    store(
        api,
        gpu_node("a100-1", "a100"),
        gpu_node("a100-2", "a100"),
        gpu_node("v100-1", "v100"),
        gpu_node("v100-2", "v100"),
        node("cpu-1", cpu="16"),
        profile("a100"),
        profile("v100"),
        unreadable(),
        elastic_quota_profile(
            "h100",
            "gpu-pools",
            quota_name="h100",
            node_selector={"matchLabels": {"gpu-model": "h100"}},
        ),
    )
    operator = await start_operator(tmp_path, api)
    try:
        await eventually(
            lambda: total(api, "a100") is not None and total(api, "v100") is not None,
            what="the roots of the A100 and V100 pools",
        )
        a100 = root(api, "a100")
        assert a100 is not None
        labels = a100["metadata"]["labels"]
        assert labels[keys.IS_ROOT] == "true" and labels[keys.PROFILE] == "a100"
        assert labels[keys.TREE_ID] == tree_hash("gpu-pools", "a100")
        assert total(api, "a100")[GPU] == total(api, "v100")[GPU] == "10"
        assert a100["spec"]["min"][GPU] == "10" and set(a100["spec"]["min"]) == set(KEYS)

        # the default tree keeps the CPU node and what the pools leave: no GPU
        await eventually(
            lambda: _runtime(api, "koordinator-root-quota").get(GPU) == "0",
            what="the default tree's total without the pools' GPUs",
        )

        await eventually(
            lambda: {"h100", "near"} <= set(problems(api)), what="Warnings on two profiles"
        )
        assert "matches no node: its tree's total is 0" in problems(api)["h100"]
        assert problems(api)["near"].startswith("spec.nodeSelector.matchExpressions[0].operator:")

        # a node joins the A100 pool; a user's label on the root stays
        await client.patch(
            elastic_quota("a100", "gpu-pools"), {"metadata": {"labels": {"team": "platform"}}}
        )
        joining = gpu_node("a100-3", "a100")
        for server_set in ("resourceVersion", "uid", "creationTimestamp"):
            del joining["metadata"][server_set]  # the kubelet registers a node without them
        await client.create(joining)
        await eventually(
            lambda: (total(api, "a100") or {}).get(GPU) == "15", what="the A100 pool's new total"
        )
        a100 = root(api, "a100")
        assert a100 is not None and a100["metadata"]["labels"]["team"] == "platform"

        # a root deleted by hand comes back
        await client.delete(elastic_quota("v100", "gpu-pools"))
        await eventually(lambda: total(api, "v100") is not None, what="the V100 root again")

        # a profile that names another root: the new one is made, the old one is no root
        await client.patch(profile("v100"), {"spec": {"quotaName": "v100-pool"}})
        await eventually(
            lambda: total(api, "v100-pool") is not None and total(api, "v100") is None,
            what="the new V100 root, and the old one retired",
        )
        old = root(api, "v100")
        assert old is not None and keys.IS_ROOT not in old["metadata"]["labels"]
        assert old["metadata"]["labels"][keys.TREE_ID] == tree_hash("gpu-pools", "v100")

        def replaced() -> list[dict[str, Any]]:
            return [e for e in stored(api, EVENTS) if e.get("reason") == "RootReplaced"]

        await eventually(lambda: bool(replaced()), what="a RootReplaced Event")
        assert [e["involvedObject"]["name"] for e in replaced()] == ["v100"]
        assert "ElasticQuota gpu-pools/v100 was this profile's root" in replaced()[0]["message"]
    finally:
        await operator.stop()


def _runtime(api: Any, name: str) -> dict[str, str]:
    found = root(api, name)
    annotations = {} if found is None else found["metadata"].get("annotations") or {}
    return json.loads(annotations.get(keys.RUNTIME, "{}"))


async def test_no_problem_is_reported_of_a_tree_whose_root_is_being_made(api, tmp_path):
    """At start the teams of a pool name a root the operator has yet to create: the report of
    problems waits until the roots are there, so no Event says their parent is missing or
    their tree has no root (a problem elsewhere is reported: the report did run)."""
    pool = profile("a100")
    pool["metadata"]["labels"] = {keys.TREE_ID: "a100"}
    pool["spec"]["quotaLabels"] = {keys.IS_PARENT: "true"}
    teams = [
        elastic_quota(
            f"team-{name}", f"team-{name}", parent="a100", min={GPU: "2"},
            max={"cpu": "64", "memory": "256Gi", GPU: "10"}, labels={keys.TREE_ID: "a100"},
        )
        for name in ("a", "b")
    ]  # fmt: skip
    ghost = elastic_quota("stray", "team-c", parent="ghost", max={"cpu": "1"})
    store(api, gpu_node("a100-1", "a100"), gpu_node("a100-2", "a100"), pool, *teams, ghost)
    operator = await start_operator(tmp_path, api)
    try:

        def reported() -> dict[str, str]:
            return {
                e["involvedObject"]["name"]: e["message"]
                for e in stored(api, EVENTS)
                if e.get("reason") == "ConfigurationProblem"
            }

        await eventually(lambda: "stray" in reported(), what="the stray group's problem")
        assert total(api, "a100") is not None
        assert set(reported()) == {"stray"}, reported()
    finally:
        await operator.stop()


async def test_the_roots_come_before_the_leaders_first_computation(api, tmp_path):
    """On a first install the leader creates the pools' roots, and waits for its watch to show
    them, before its first computation: no group's numbers are written before them (every pod
    is placed once, in trees that have their roots)."""
    store(api, gpu_node("a100-1", "a100"), gpu_node("v100-1", "v100"))
    store(api, profile("a100"), profile("v100"))
    # a slow first LIST of pods: the replica leads before its caches are in, as on a cluster
    # of many pods
    api.fault("GET", "pods", latency=1.0, times=1)
    operator = await start_operator(tmp_path, api)
    try:

        def written() -> bool:
            roots = total(api, "a100") is not None and total(api, "v100") is not None
            return roots and ("patch", "elasticquotas", "") in api.journal

        await eventually(written, what="the roots and the groups' first writes")
        journal = list(api.journal)
        creates = [i for i, r in enumerate(journal) if r[:2] == ("create", "elasticquotas")]
        first_write = min(i for i, r in enumerate(journal) if r[:2] == ("patch", "elasticquotas"))
        assert len(creates) == 5 and max(creates) < first_write  # 3 built-ins, 2 roots
    finally:
        await operator.stop()
