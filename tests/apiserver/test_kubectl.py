"""kubectl reads the emulator (discovery, lists)."""

from __future__ import annotations

from tests.kubectl import Kubectl, rows
from tests.manifests import node, pod, quota


async def test_kubectl_lists_pods_nodes_and_quotas(api, tmp_path):
    api.seed(node("n1", cpu="4"), pod("web-1"), pod("db-1", namespace="data"), quota("team"))
    kubectl = Kubectl(api, tmp_path)
    pods = rows((await kubectl.run("kubectl get pods -A")).out)
    assert {(p["NAMESPACE"], p["NAME"]) for p in pods} == {("apps", "web-1"), ("data", "db-1")}
    assert [n["NAME"] for n in rows((await kubectl.run("kubectl get nodes")).out)] == ["n1"]
    assert [q["NAME"] for q in rows((await kubectl.run("kubectl get eq -n quotas")).out)] == [
        "team"
    ]
