"""kubectl reads the emulator (discovery, lists), and the stand-in scheduler, ReplicaSet,
Deployment and Job controllers keep the cluster moving by reacting to watch events."""

from __future__ import annotations

from tests.apiserver.conftest import PODS
from tests.apiserver.jobs import Jobs, complete, job_labels
from tests.apiserver.standins import Deployments, ReplicaSet, Scheduler
from tests.kubectl import Kubectl, rows
from tests.kubectl_manifests import job, write
from tests.manifests import node, pod, quota
from tests.operator.conftest import eventually


async def test_kubectl_lists_pods_nodes_and_quotas(api, tmp_path):
    api.seed(node("n1", cpu="4"), pod("web-1"), pod("db-1", namespace="data"), quota("team"))
    kubectl = Kubectl(api, tmp_path)
    pods = rows((await kubectl.run("kubectl get pods -A")).out)
    assert {(p["NAMESPACE"], p["NAME"]) for p in pods} == {("apps", "web-1"), ("data", "db-1")}
    assert [n["NAME"] for n in rows((await kubectl.run("kubectl get nodes")).out)] == ["n1"]
    assert [q["NAME"] for q in rows((await kubectl.run("kubectl get eq -n quotas")).out)] == [
        "team"
    ]


async def test_the_scheduler_binds_what_fits_and_not_gated_pods(api, client):
    api.seed(node("n1", cpu="2", pods="10"), node("n2", cpu="1", pods="10"))
    scheduler = Scheduler(client)
    await scheduler.start()
    try:
        for name, cpu in (("a", "2"), ("b", "1"), ("c", "1")):
            await client.call("POST", PODS, pod(name, node=None, cpu=cpu))
        await client.call("POST", PODS, pod("gated", node=None, cpu="1", gated=True))

        def placed():
            return {p["metadata"]["name"]: p["spec"].get("nodeName") for p in api.objects("pods")}

        await eventually(lambda: placed()["b"] is not None, what="b to be bound", explain=placed)
        assert placed() == {"a": "n1", "b": "n2", "c": None, "gated": None}
        assert api.get("pods", "a", "apps")["status"]["phase"] == "Running"
        await client.call("DELETE", PODS + "/a")
        await eventually(lambda: placed()["c"] == "n1", what="c to take a's room", explain=placed)
        assert api.count("create", "pods", "binding") == 3
    finally:
        await scheduler.stop()


async def test_the_replicaset_keeps_its_pods_alive(api, client):
    template = {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c"}]}}
    controller = ReplicaSet(client, "web", "apps", 3, template)
    await controller.start()
    try:
        await eventually(lambda: len(api.objects("pods")) == 3, what="three replicas")
        first = api.objects("pods")[0]
        assert first["metadata"]["generateName"] == "web-"
        (owner,) = first["metadata"]["ownerReferences"]
        assert owner["kind"] == "ReplicaSet" and owner["controller"] is True
        evicted = first["metadata"]["name"]
        eviction = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": evicted}}
        await client.call("POST", f"{PODS}/{evicted}/eviction", eviction)
        await eventually(lambda: controller.created == 4, what="a replacement")
        names = {p["metadata"]["name"] for p in api.objects("pods")}
        assert len(names) == 3 and evicted not in names
    finally:
        await controller.stop()


async def test_an_applied_deployment_is_played_by_a_replicaset(api, client, tmp_path):
    api.seed(node("n1", cpu="4", memory="4Gi", pods="10"))
    scheduler, deployments = Scheduler(client), Deployments(client)
    await scheduler.start()
    await deployments.start()
    kubectl = Kubectl(api, tmp_path)
    try:
        await kubectl.run("kubectl apply -f examples/quickstart/reclaim.yaml")

        async def ready():
            listed = rows((await kubectl.run("kubectl get pods -n team-b")).out)
            return [(p["READY"], p["STATUS"]) for p in listed] == [("1/1", "Running")] * 2

        await eventually(ready, what="two running replicas")
        (played,) = deployments.replica_sets.values()
        assert played.name.startswith("serve-") and len(played.owned()) == 2
        labels = played.owned()[0]["metadata"]["labels"]
        assert labels["app"] == "serve" and labels["pod-template-hash"] == played.name[6:]
        # No scale subresource here: `kubectl scale` is not served; a patch is.
        await kubectl.run('kubectl patch deployment serve -n team-b -p \'{"spec":{"replicas":3}}\'')
        await eventually(lambda: len(played.owned()) == 3, what="a third replica")
        await kubectl.run("kubectl delete -f examples/quickstart/reclaim.yaml")
        await eventually(lambda: not api.objects("pods"), what="the pods collected")
    finally:
        await deployments.stop()
        await scheduler.stop()


JOB = job(
    "etl",
    "apps",
    parallelism=2,
    completions=3,
    cpu=None,
    labels={"app": "etl"},
    annotations={"example.com/note": "kept"},
)


async def test_an_applied_job_is_played_until_its_completions(api, client, tmp_path):
    jobs = Jobs(client)
    await jobs.start()
    kubectl = Kubectl(api, tmp_path)
    try:
        manifest = write(tmp_path, "job.yaml", JOB)
        await kubectl.run(f"kubectl apply -f {manifest}")
        await eventually(lambda: len(api.objects("pods")) == 2, what="two pods (parallelism)")
        job = api.get("jobs", "etl", "apps")
        assert job is not None
        first = api.objects("pods")[0]
        metadata = first["metadata"]
        assert metadata["generateName"] == "etl-" and metadata["name"].startswith("etl-")
        assert metadata["finalizers"] == ["batch.kubernetes.io/job-tracking"]
        assert metadata["annotations"] == {"example.com/note": "kept"}
        assert metadata["labels"] == {"app": "etl", **job_labels("etl", job["metadata"]["uid"])}
        (owner,) = metadata["ownerReferences"]
        assert (owner["kind"], owner["uid"], owner["controller"]) == (
            "Job",
            job["metadata"]["uid"],
            True,
        )
        # An evicted pod counts as failed, its finalizer comes off, and another takes its place.
        evicted = metadata["name"]
        eviction = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": evicted}}
        await client.call("POST", f"{PODS}/{evicted}/eviction", eviction)
        await eventually(
            lambda: evicted not in {p["metadata"]["name"] for p in api.objects("pods")},
            what="the evicted pod gone once its finalizer is off",
        )
        await eventually(lambda: len(api.objects("pods")) == 2, what="a replacement")
        # Two complete: one more is made for the third completion, and no more after it.
        for pod in api.objects("pods"):
            await complete(client, pod)
        await eventually(lambda: len(api.objects("pods")) == 3, what="the third completion's pod")
        running = [p for p in api.objects("pods") if p["status"]["phase"] != "Succeeded"]
        await complete(client, running[0])
        await eventually(
            lambda: all(not p["metadata"].get("finalizers") for p in api.objects("pods")),
            what="every finalizer off",
        )
        listed = rows((await kubectl.run("kubectl get pods -n apps")).out)
        assert [p["STATUS"] for p in listed] == ["Completed"] * 3
        await kubectl.run(f"kubectl delete -f {manifest}")
        await eventually(lambda: not api.objects("pods"), what="the pods collected")
    finally:
        await jobs.stop()
