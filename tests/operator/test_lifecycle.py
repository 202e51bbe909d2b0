"""Built-in groups, restarts that change nothing, a stand-by without them, objects the engine
cannot read, and the probes and metrics (the group series' tree label, with two node pools).

Two replicas and their Lease (a stand-by that writes nothing, a killed leader's and a stopped
one's successors): on the real control plane (tests/control_plane/test_leadership.py)."""

from __future__ import annotations

import json
from typing import Any

from eq_engine.model import keys

from tests.kube import EVENTS, LEASES, PODS, QUOTAS, store, stored
from tests.manifests import node, pod, quota
from tests.operator.conftest import eventually, samples, start_operator, writes
from tests.operator.test_accounting import actual, converged, tree
from tests.waiting import consistently

BUILTINS = {"koordinator-root-quota", "koordinator-system-quota", "koordinator-default-quota"}


async def _metric(operator, series: str, value: str) -> bool:
    """Whether a sample of `elastic_quota_<series>...` (cpu) has this value now."""
    _, text = await operator.get("/metrics")
    return any(
        line.startswith("elastic_quota_" + series)
        and 'resource="cpu"' in line
        and line.endswith(" " + value)
        for line in text.splitlines()
    )


async def test_builtins_are_created_once_and_a_restart_writes_nothing(api, tmp_path):
    store(api, *tree())
    first = await start_operator(tmp_path, api)
    try:
        await eventually(lambda: converged(api), what="convergence")
    finally:
        await first.stop()
    names = {o["metadata"]["name"] for o in stored(api, QUOTAS)}
    assert names >= BUILTINS
    assert all(
        o["metadata"]["namespace"] == "koordinator-system"
        for o in stored(api, QUOTAS)
        if o["metadata"]["name"] in BUILTINS
    )
    written = writes(api)
    assert written > 0
    # created before the groups' numbers are written: the first computation holds them (one
    # tree built at start-up, not two)
    journal = list(api.journal)
    last_create = max(i for i, r in enumerate(journal) if r[:2] == ("create", "elasticquotas"))
    first_write = min(i for i, r in enumerate(journal) if r[:2] == ("patch", "elasticquotas"))
    assert last_create < first_write

    second = await start_operator(tmp_path, api)
    try:
        status, _ = await second.get("/readyz")
        assert status == 200
        await eventually(lambda: converged(api), what="convergence after the restart")
        await eventually(
            lambda: any(o["spec"].get("holderIdentity") == "op" for o in stored(api, LEASES)),
            what="leadership",
        )
        # everything was right already: ten batches as the leader write nothing
        await consistently(lambda: writes(api) == written, seconds=0.5, what="no writes")
        # three at the first start; the restart found them in its cache
        assert api.count("create", "elasticquotas") == 3
    finally:
        await second.stop()


def foreign_lease() -> dict[str, Any]:
    """The Lease as another replica holds it, renewed far into the future."""
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": "elastic-quota-operator", "namespace": "koordinator-system"},
        "spec": {
            "holderIdentity": "somebody-else",
            "leaseDurationSeconds": 3600,
            "renewTime": "2999-01-01T00:00:00.000000Z",
        },
    }


async def test_a_stand_by_creates_no_built_in_group_and_is_not_ready_without_them(api, tmp_path):
    store(api, *tree(), foreign_lease())
    stand_by = await start_operator(tmp_path, api, name="stand-by", probe="/healthz")
    try:
        await eventually(
            lambda: _metric(stand_by, 'group_request{group="team-a",', "16000.0"),
            what="the stand-by to compute the tree",
        )
        missing = "the built-in groups koordinator-root-quota, koordinator-system-quota, "
        missing += "koordinator-default-quota do not exist yet\n"
        assert await stand_by.get("/readyz") == (503, missing)
        await consistently(
            lambda: api.count("create", "elasticquotas") == 0, seconds=1.0, what="no create"
        )
    finally:
        await stand_by.stop()


async def test_unreadable_objects_are_reported_and_the_rest_is_computed(api, tmp_path):
    bad_quota = quota("broken", min={"cpu": "lots"}, max={"cpu": 4})
    bad_pod = pod("broken-pod", namespace="team-a", cpu="two")
    # Off the schema the cache decodes pods into: its LIST page is decoded whole.
    odd_pod = pod("odd-pod", namespace="team-a", cpu="1")
    odd_pod["spec"]["priority"] = "high"
    odd_node = node("odd-node", cpu="4")  # off the nodes' schema too
    odd_node["status"]["conditions"] = "Ready"
    store(
        api,
        *tree(),
        bad_quota,
        bad_pod,
        odd_pod,
        odd_node,
        quota("orphan", parent="ghost", max={"cpu": 4}),
        quota("loop-a", parent="loop-b", is_parent=True, max={"cpu": 4}),
        quota("loop-b", parent="loop-a", is_parent=True, max={"cpu": 4}),
        pod("stray", namespace="team-a", quota="dept", cpu="1"),
    )
    operator = await start_operator(tmp_path, api)
    try:
        await eventually(lambda: converged(api), what="convergence around bad objects")

        def reported() -> dict[str, str]:
            return {
                e["involvedObject"]["name"]: e["message"]
                for e in stored(api, EVENTS)
                if e.get("reason") == "InvalidObject"
            }

        await eventually(
            lambda: {"broken", "broken-pod", "odd-pod", "odd-node"} <= set(reported()),
            what="Events about the unreadable objects",
        )
        assert "spec.min: 'lots': not a Kubernetes quantity" in reported()["broken"]
        assert "'two': not a Kubernetes quantity" in reported()["broken-pod"]
        assert "spec.priority: Input should be a valid integer" in reported()["odd-pod"]
        assert "status.conditions: Input should be a valid list" in reported()["odd-node"]
        # One pod alone in a watch event: decoded into the schema's structs, not whole.
        store(api, pod("late-pod", namespace="team-a", cpu="three"))
        await eventually(lambda: "late-pod" in reported(), what="an Event about the late pod")
        (late,) = (p for p in stored(api, PODS) if p["metadata"]["name"] == "late-pod")
        (event,) = (e for e in stored(api, EVENTS) if e["involvedObject"]["name"] == "late-pod")
        assert event["involvedObject"]["namespace"] == "team-a"
        assert event["involvedObject"]["uid"] == late["metadata"]["uid"]
        orphan = next(o for o in stored(api, QUOTAS) if o["metadata"]["name"] == "orphan")
        assert json.loads(orphan["metadata"]["annotations"][keys.REQUEST]) == {"cpu": "0"}

        def problems() -> dict[str, str]:
            return {
                e["involvedObject"]["name"]: e["message"]
                for e in stored(api, EVENTS)
                if e.get("reason") == "ConfigurationProblem"
            }

        await eventually(
            lambda: {"orphan", "loop-a", "stray"} <= set(problems()),
            what="Events about the configuration problems",
        )
        assert "parent 'ghost' does not exist" in problems()["orphan"]
        assert "parent cycle loop-a -> loop-b -> loop-a" in problems()["loop-a"]
        assert "names a parent group ('dept')" in problems()["stray"]
    finally:
        await operator.stop()


async def test_probes_and_metrics(api, client, tmp_path):
    store(api, *tree(), node("n9", cpu="1"))
    operator = await start_operator(tmp_path, api)
    try:
        await eventually(lambda: converged(api), what="convergence")
        assert (await operator.get("/healthz"))[0] == 200
        status, page = await operator.get("/metrics")
        assert status == 200
        assert (
            'elastic_quota_group_used{group="team-a",namespace="team-a",parent="dept",'
            'resource="cpu",tree=""} 16000.0'
        ) in page
        # team-a: min 12, four running pods of 4 -> 4 borrowed, and the least important pod
        # over its min; sub-1: min 4, asks 3 -> 1 lent.
        assert (
            'elastic_quota_group_borrowed{group="team-a",namespace="team-a",parent="dept",'
            'resource="cpu",tree=""} 4000.0'
        ) in page
        assert (
            'elastic_quota_group_lent{group="sub-1",namespace="sub-1",parent="team-b",'
            'resource="cpu",tree=""} 1000.0'
        ) in page
        assert (  # no lending limit: all of its min
            'elastic_quota_group_lendable{group="sub-1",namespace="sub-1",parent="team-b",'
            'resource="cpu",tree=""} 4000.0'
        ) in page
        assert (
            'elastic_quota_group_over_quota_pods{group="team-a",namespace="team-a",'
            'parent="dept",tree=""} 1.0'
        ) in page
        assert 'elastic_quota_cache_synced{kind="Pod"} 1.0' in page
        assert 'elastic_quota_watch_restarts_total{kind="Pod"} 0.0' in page
        assert 'elastic_quota_leader{pod="op"} 1.0' in page
        assert 'elastic_quota_api_requests_total{code="200",verb="GET"}' in page
        assert 'elastic_quota_api_request_duration_seconds_count{verb="PATCH"}' in page
        assert "elastic_quota_recompute_duration_seconds_count" in page
        assert 'elastic_quota_api_writes_total{kind="ElasticQuota",result="ok"}' in page
        # each label written once, and read back from the server's answer as held
        labels = sum(1 for label in actual(api)[1].values() if label is not None)
        patched = sum(1 for r in api.journal if r[:2] == ("patch", "pods"))
        assert patched == labels
        written = f'elastic_quota_api_writes_total{{kind="Pod",result="ok"}} {labels}.0'
        # counted once the answer is read, a moment after the server stored the label

        async def counted() -> bool:
            return written in (await operator.get("/metrics"))[1]

        await eventually(counted, what="every label write counted")
        assert 'result="error"' not in page  # no write read back as not held, nor refused
        await client.delete(quota("sub-2", namespace="sub-2"))

        async def forgotten() -> bool:
            return 'group="sub-2"' not in (await operator.get("/metrics"))[1]

        await eventually(forgotten, what="a deleted group's series to go")
    finally:
        await operator.stop()


async def test_the_writes_pending_are_exported(api, tmp_path):
    """Under a small budget the labels wait behind the groups, and /metrics says how many;
    they are none once every label is written."""
    store(api, *tree())
    operator = await start_operator(tmp_path, api, "--api-qps", "8", "--api-burst", "1")
    try:

        async def pending() -> dict[str, float]:
            page = (await operator.get("/metrics"))[1]
            return {
                s.labels["kind"]: s.value for s in samples(page, "elastic_quota_writes_pending")
            }

        async def labels_wait() -> bool:
            return (await pending())["Pod"] > 0

        await eventually(labels_wait, what="labels waiting for the budget")
        assert not converged(api)

        async def none() -> bool:
            return await pending() == {"ElasticQuota": 0, "Pod": 0}

        await eventually(none, what="no write pending")
        assert converged(api)
    finally:
        await operator.stop()


def pool(tree_id: str, cpu: int, *members: dict[str, Any]) -> list[dict[str, Any]]:
    """A node pool's tree: its root (named `tree_id`, total `cpu`, as made from an
    ElasticQuotaProfile) and `members`, each labelled into the tree."""
    root = quota(tree_id, is_parent=True, min={"cpu": cpu}, max={"cpu": cpu})
    root["metadata"]["labels"][keys.IS_ROOT] = "true"
    root["metadata"]["annotations"][keys.TOTAL_RESOURCE] = json.dumps({"cpu": str(cpu)})
    for raw in (root, *members):
        raw["metadata"]["labels"][keys.TREE_ID] = tree_id
    return [root, *members]


def group_series(page: str, name: str) -> dict[str, dict[str, str]]:
    """The labels of each group's `elastic_quota_group_<name>` sample (cpu where per
    resource), by group."""
    return {
        s.labels["group"]: {**s.labels, "value": str(s.value)}
        for s in samples(page, name)
        if s.labels.get("resource", "cpu") == "cpu"
    }


async def test_the_group_series_name_their_tree(api, tmp_path):
    """Two node pools beside the default tree: every group series carries its group's tree id,
    a pool's root (no object) included; the default tree's groups carry ""."""
    store(
        api,
        node("node-1", cpu="100"),
        quota("batch", min={"cpu": 10}, max={"cpu": 100}),
        *pool("gpu", 40, quota("train", parent="gpu", min={"cpu": 40}, max={"cpu": 40})),
        *pool("arm", 20, quota("web", parent="arm", min={"cpu": 20}, max={"cpu": 20})),
        pod("job", quota="train", cpu="4"),
        pod("site", quota="web", cpu="20"),
        pod("more", quota="web", node=None, gated=True, cpu="1"),  # arm is full: it waits
    )
    operator = await start_operator(tmp_path, api)
    try:

        async def waiting() -> bool:
            page = (await operator.get("/metrics"))[1]
            return "web" in group_series(page, "elastic_quota_group_waiting_pods")

        await eventually(waiting, what="web's pod waiting, on the metrics")
        page = (await operator.get("/metrics"))[1]
        over_quota = group_series(page, "elastic_quota_group_over_quota_pods")
        assert {group: labels["tree"] for group, labels in over_quota.items()} == {
            **dict.fromkeys(BUILTINS | {"batch"}, ""),
            **dict.fromkeys(["koordinator-root-quota/gpu", "gpu", "train"], "gpu"),
            **dict.fromkeys(["koordinator-root-quota/arm", "arm", "web"], "arm"),
        }
        runtime = group_series(page, "elastic_quota_group_runtime")
        assert runtime["koordinator-root-quota/gpu"] == {
            "group": "koordinator-root-quota/gpu",
            "namespace": "koordinator-system",
            "parent": "",
            "tree": "gpu",
            "resource": "cpu",
            "value": "40000.0",  # the pool's total
        }
        assert runtime["train"]["tree"] == "gpu" and runtime["train"]["parent"] == "gpu"
        used = group_series(page, "elastic_quota_group_used")
        assert used["koordinator-root-quota/arm"]["tree"] == "arm"
        assert used["koordinator-root-quota/arm"]["value"] == "20000.0"
        (waiting_web,) = group_series(page, "elastic_quota_group_waiting_pods").values()
        assert (waiting_web["tree"], waiting_web["value"]) == ("arm", "1.0")
    finally:
        await operator.stop()
