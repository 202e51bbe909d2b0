"""CRDs besides the ElasticQuota's: the three PodGroup APIs served side by side (two share their
plural and their group's version with others), a CRD applied with kubectl served at once, and a
request for what is not served refused with 404 but recorded for RBAC, as kube-apiserver
authorizes before it looks for the resource."""

from __future__ import annotations

from pathlib import Path

from tests.access import ACCESS
from tests.apiserver import ApiServer, pod_group_crds
from tests.apiserver.client import Client
from tests.kubectl import Kubectl, rows

GROUPS = ("scheduling.sigs.k8s.io", "scheduling.x-k8s.io", "scheduling.k8s.io")
TRAIN = """apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {name: train, namespace: team-b}
spec: {minMember: 4, minResources: {cpu: "2"}, scheduleTimeoutSeconds: 300}
"""


async def test_the_three_pod_group_apis_are_served_side_by_side(tmp_path: Path):
    async with ApiServer(serving=pod_group_crds()) as api:
        kubectl = Kubectl(api, tmp_path)
        (tmp_path / "pg.yaml").write_text(TRAIN)
        await kubectl.run(f"kubectl create -f {tmp_path / 'pg.yaml'}")
        listed = rows((await kubectl.run("kubectl get pg -n team-b")).out)
        assert listed == [
            {
                "NAME": "train",
                "PHASE": "",
                "MINMEMBER": "4",
                "RUNNING": "",
                "SUCCEEDED": "",
                "FAILED": "",
                "AGE": listed[0]["AGE"],
            }
        ]
        # The same name in Koordinator's group is another object.
        old = TRAIN.replace("scheduling.x-k8s.io", "scheduling.sigs.k8s.io")
        (tmp_path / "old.yaml").write_text(old.replace("minMember: 4", "minMember: 2"))
        await kubectl.run(f"kubectl create -f {tmp_path / 'old.yaml'}")
        new = api.get("podgroups.scheduling.x-k8s.io", "train", "team-b")
        koordinators = api.get("podgroups.scheduling.sigs.k8s.io", "train", "team-b")
        assert new is not None and koordinators is not None
        assert (new["spec"]["minMember"], koordinators["spec"]["minMember"]) == (4, 2)
        assert api.get("podgroups.scheduling.k8s.io", "train", "team-b") is None
        # scheduler-plugins' has a status subresource; a PATCH of the object leaves it alone.
        status = '{"status":{"phase":"Scheduling","occupiedBy":"team-b/train"}}'
        await kubectl.run(f"kubectl patch pg train -n team-b --type merge -p '{status}'")
        new = api.get("podgroups.scheduling.x-k8s.io", "train", "team-b")
        assert new is not None and "status" not in new
        await kubectl.run(
            f"kubectl patch pg train -n team-b --subresource status --type merge -p '{status}'"
        )
        new = api.get("podgroups.scheduling.x-k8s.io", "train", "team-b")
        assert new is not None and new["status"]["phase"] == "Scheduling"
        served = (await kubectl.run("kubectl api-resources --api-group scheduling.k8s.io")).out
        assert "podgroups" in served


async def test_a_crd_applied_with_kubectl_is_served_at_once(tmp_path: Path):
    async with ApiServer() as api:
        kubectl = Kubectl(api, tmp_path)
        missing = await kubectl.run("kubectl get podgroups.scheduling.x-k8s.io -A", ok=False)
        assert missing.code == 1
        await kubectl.run("kubectl apply -f tests/crds/podgroups.scheduling.x-k8s.io.yaml")
        (tmp_path / "pg.yaml").write_text(TRAIN)
        await kubectl.run(f"kubectl apply -f {tmp_path / 'pg.yaml'}")
        listed = rows((await kubectl.run("kubectl get podgroups -A")).out)
        assert [(r["NAMESPACE"], r["NAME"], r["MINMEMBER"]) for r in listed] == [
            ("team-b", "train", "4")
        ]
        crds = {r["NAME"] for r in rows((await kubectl.run("kubectl get crd")).out)}
        assert crds == {
            "elasticquotas.scheduling.sigs.k8s.io",
            "elasticquotaprofiles.quota.koordinator.sh",  # the chart's, served from the start
            "podgroups.scheduling.x-k8s.io",
        }


async def test_a_request_for_what_is_not_served_is_refused_but_recorded_for_rbac():
    async with ApiServer() as api:
        client = Client(api.url, agent="elastic-quota/0.1 (operator)")
        try:
            path = "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/team-b/podgroups"
            status, body, _ = await client.request("GET", path)
            assert status == 404 and body["reason"] == "NotFound"
            status, _, _ = await client.request("GET", "/apis/scheduling.k8s.io/v1alpha2/podgroups")
            assert status == 404
        finally:
            await client.close()
    wanted = {
        ("operator", "scheduling.x-k8s.io", "podgroups", "list"),
        ("operator", "scheduling.k8s.io", "podgroups", "list"),
    }
    assert api.access == wanted
    assert wanted <= ACCESS
