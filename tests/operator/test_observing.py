"""The operator's caches follow PodGroups in each of their three APIs where the cluster serves
them, and a PodGroup whose minimum does not read never breaks the view: it becomes its gang's
problem."""

from __future__ import annotations

from typing import Any

import pytest
from eq_engine import EngineConfig, QuotaEngine
from eq_engine.decisions import admissions
from eq_engine.model import POD_GROUP_KINDS
from eq_kit.kube import Http
from eq_operator import observing
from eq_operator.events import Recorder
from eq_operator.pools import Pools
from eq_operator.sending import Sender
from eq_operator.view import ClusterView
from kubernetes_asyncio import client

from tests.apiserver import ApiServer, pod_group_crds
from tests.manifests import node, quota
from tests.realistic import job_pod
from tests.waiting import eventually

GATE = "quota.scheduling.koordinator.sh/admission"
SIGS, X_K8S, K8S = POD_GROUP_KINDS


def pod_group(name: str, spec: Any, api_version: str = "scheduling.x-k8s.io/v1alpha1") -> dict:
    metadata = {"name": name, "namespace": "team-b", "uid": f"uid-{name}"}
    return {"apiVersion": api_version, "kind": "PodGroup", "metadata": metadata, "spec": spec}


def member(job: str, index: int) -> dict[str, Any]:
    """A gated pod of `job`, a member of scheduler-plugins' PodGroup `job`."""
    labels = {"scheduling.x-k8s.io/pod-group": job}
    return job_pod(
        "team-b", job, index, labels=labels, requests={"cpu": "500m"}, node=None, gates=[GATE]
    )


def view() -> ClusterView:
    seen = ClusterView(QuotaEngine(EngineConfig()))
    for obj in (quota("team-b", namespace="team-b", min={"cpu": 4}, max={"cpu": 4}), node("n1")):
        (seen.observe_quota if obj["kind"] == "ElasticQuota" else seen.observe_node)(obj)
    return seen


async def test_each_pod_group_api_is_followed_where_the_cluster_serves_it():
    async with ApiServer(serving=pod_group_crds("scheduling.x-k8s.io")) as api:
        api.seed(pod_group("train", {"minMember": 2}), member("train", 0), member("train", 1))
        configuration = client.Configuration(host=api.url)
        async with client.ApiClient(configuration) as session:
            seen = view()
            streams = observing.caches(
                Http(session),
                seen,
                Pools(Sender(Http(session)), Recorder(Sender(Http(session)))),
            )
            assert sorted(r.kind.name for r in streams.reflectors if r.kind.optional) == [
                "ElasticQuotaProfile",
                "PodGroup.scheduling.k8s.io",
                "PodGroup.scheduling.sigs.k8s.io",
                "PodGroup.scheduling.x-k8s.io",
            ]
            streams.start()
            try:
                await streams.wait_ready()  # the two APIs not served count as empty
                served = {r.kind.group: r.served for r in streams.reflectors if r.kind.optional}
                assert served == {
                    "quota.koordinator.sh": True,  # the chart's CRD, as the ElasticQuota's
                    "scheduling.sigs.k8s.io": False,
                    "scheduling.x-k8s.io": True,
                    "scheduling.k8s.io": False,
                }
                key = "podgroups.scheduling.x-k8s.io:team-b/train"
                snapshot = seen.engine.recompute()
                assert snapshot.pod_groups[key].minimum == 2
                assert len(admissions(snapshot).admitted) == 2
                api.storage.remove(
                    api.catalog.named("podgroups.scheduling.x-k8s.io"), "team-b/train"
                )
                await eventually(
                    lambda: key not in seen.engine.recompute().pod_groups, what="forgotten"
                )
                assert seen.take().changed
                decided = admissions(seen.engine.recompute())
                assert decided.admitted == ()
                assert {why.message for why in decided.waiting.values()} == {
                    "waiting: gang team-b/train has no valid minimum: its PodGroup team-b/train "
                    "(podgroups.scheduling.x-k8s.io) does not exist"
                }
            finally:
                await streams.stop()


@pytest.mark.parametrize(
    ("spec", "problem"),
    [
        ({"minMember": "four"}, "spec.minMember: 'four' is not a whole number of pods"),
        ({"minMember": 0}, "spec.minMember: 0; expected at least 1 pod"),
        ({"minMember": [4]}, "spec.minMember: '[4]' is not a whole number of pods"),
        ({"minMember": 2.5}, "spec.minMember: '2.5' is not a whole number of pods"),
        ({}, "spec.minMember: missing; expected the gang's minimum number of pods"),
        ("four", "spec.minMember: missing; expected the gang's minimum number of pods"),
        (None, "spec.minMember: missing; expected the gang's minimum number of pods"),
    ],
)
def test_a_pod_group_whose_minimum_does_not_read_becomes_its_gangs_problem(spec, problem):
    """Koordinator's CRD sets no minimum and no schema can stop every odd value: the view takes
    the object all the same, and the gang's pods wait with the field named."""
    seen = view()
    seen.observe_pod_group(SIGS, pod_group("train", spec, SIGS.api_version))
    for index in range(2):
        pod = member("train", index)
        pod["metadata"]["labels"] = {"pod-group.scheduling.sigs.k8s.io": "train"}
        seen.observe_pod(pod)
    snapshot = seen.engine.recompute()
    (found,) = [p for p in seen.engine.problems if p.field == "gang minimum"]
    assert found.message == f"PodGroup team-b/train (podgroups.scheduling.sigs.k8s.io) {problem}"
    assert admissions(snapshot).admitted == ()
    seen.forget_pod_group(SIGS, "team-b/train")
    assert seen.engine.recompute().pod_groups == {}


def disruption_budget(selector: Any, allowed: Any = 0) -> dict[str, Any]:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "train", "namespace": "team-b", "uid": "uid-pdb"},
        "spec": {"minAvailable": 3, "selector": selector},
        "status": {"disruptionsAllowed": allowed},
    }


async def test_disruption_budgets_are_followed_and_one_that_does_not_read_is_reported():
    async with ApiServer() as api:
        api.seed(disruption_budget({"matchLabels": {"job-name": "train"}}, allowed=1))
        configuration = client.Configuration(host=api.url)
        async with client.ApiClient(configuration) as session:
            seen = view()
            streams = observing.caches(
                Http(session),
                seen,
                Pools(Sender(Http(session)), Recorder(Sender(Http(session)))),
            )
            streams.start()
            try:
                await streams.wait_ready()
                assert seen.engine.recompute().budgets["team-b/train"].allowed == 1
                stored = api.get("poddisruptionbudgets", "train", "team-b")
                assert stored is not None
                broken = {**stored, "spec": {"minAvailable": 3, "selector": "job-name=train"}}
                api.storage.put(api.catalog.named("poddisruptionbudgets"), broken, type="MODIFIED")
                await eventually(lambda: not seen.engine.recompute().budgets, what="it dropped")
                (news,) = seen.take().unreadable
                assert news[0].kind == "PodDisruptionBudget" and news[0].api_version == "policy/v1"
                assert news[1] == (
                    "PodDisruptionBudget team-b/train: spec.selector: expected a label selector"
                )
                api.storage.remove(api.catalog.named("poddisruptionbudgets"), "team-b/train")
                await eventually(lambda: not seen.unreadable, what="forgotten")
            finally:
                await streams.stop()


async def test_a_pods_key_is_one_string_held_by_the_cache_the_view_and_the_engine():
    async with ApiServer() as api:
        api.seed(job_pod("team-b", "train", 0, requests={"cpu": "1"}))
        async with client.ApiClient(client.Configuration(host=api.url)) as session:
            seen = view()
            events = Recorder(Sender(Http(session)))
            streams = observing.caches(Http(session), seen, Pools(Sender(Http(session)), events))
            streams.start()
            try:
                await streams.wait_ready()
                (key,) = seen.pod_keys()
                pod = seen.engine.pod(key)
                assert pod is not None and pod.key is key  # not an equal copy: 100,000 of them
                assert key == f"team-b/{pod.name}" and pod.name.startswith("train-")
            finally:
                await streams.stop()


async def test_each_pod_is_held_once_and_a_relist_forgets_those_the_engine_does_not_hold():
    """The engine keeps the label a pod holds with the pod; the view keeps only those of the
    pods the engine does not hold (finished, unreadable), and a relist after a gap forgets them
    as it forgets the others."""
    running = job_pod("team-b", "serve", 0, requests={"cpu": "1"})
    running["metadata"]["labels"]["quota.scheduling.koordinator.sh/capacity"] = "in-quota"
    done = job_pod("team-b", "batch", 0, requests={"cpu": "1"})
    done["metadata"]["labels"]["quota.scheduling.koordinator.sh/capacity"] = "over-quota"
    done["status"]["phase"] = "Succeeded"
    odd = job_pod("team-b", "odd", 0, requests={"cpu": "a lot"})
    async with ApiServer() as api:
        api.seed(running, done, odd)
        keys = {f"team-b/{p['metadata']['name']}": p for p in (running, done, odd)}
        async with client.ApiClient(client.Configuration(host=api.url)) as session:
            seen = view()
            http = Http(session)
            streams = observing.caches(http, seen, Pools(Sender(http), Recorder(Sender(http))))
            streams.start()
            try:
                await streams.wait_ready()
                run_key, done_key, odd_key = keys
                assert sorted(seen.pod_keys()) == sorted(keys)
                assert list(seen.engine.pod_keys()) == [run_key]
                assert seen.idle_labels == {done_key: "over-quota", odd_key: None}
                assert [seen.held_label(k) for k in keys] == ["in-quota", "over-quota", None]
                assert f"Pod {odd_key}" in seen.unreadable

                await api.go_down()
                for key in (done_key, odd_key):
                    api.storage.remove(api.catalog.named("pods"), key)
                api.compact()
                await api.come_up()
                await eventually(lambda: list(seen.pod_keys()) == [run_key], what="a relist")
                assert seen.idle_labels == {} and f"Pod {odd_key}" not in seen.unreadable
                assert seen.held_label(run_key) == "in-quota"
            finally:
                await streams.stop()
