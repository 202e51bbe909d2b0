"""The README's quick start on the real control plane, through real kubectl, as a user plays it.

The commands are the README's, read out of it and judged by `QuickStart` (quickstart.py). Here
`helm install` runs
verbatim with the real helm against the real API server; the operator and the webhook run as
processes with their ServiceAccounts' tokens (tests/control_plane/product.py); the pods come
from the real Deployment controller, wait behind the real scheduler's honouring of the gate,
are placed by it on kwok nodes and evicted through the real Eviction API. The evictions are
counted in the API server's audit log, which also shows that the chart's RBAC let the product
do all it asked (no 403).

After the README, on the same tree, the stories a user meets next: invalid trees refused with
a message naming the object, the field and the numbers; a group with children that cannot be
deleted; a pod waiting behind its gate until its group has room; a pod made in a parent group's
namespace while the webhook was down, whose finalizer can still be taken off.

It runs on a control plane of its own: the chart's webhooks would gate the pods of every other
test on the shared one.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from scripts.control_plane.audit import PRODUCT_ACCOUNTS, audit_events, audited
from scripts.control_plane.build import Built
from scripts.control_plane.plane import ControlPlane
from tests.control_plane.cluster import Cluster
from tests.control_plane.product import Process, helm_install, running, webhook_configurations
from tests.control_plane.quickstart import QuickStart, commands
from tests.kubectl import Kubectl, rows

WEBHOOK_DOWN = (
    r'(?s)failed calling webhook "elasticquotas\.elastic-quota\.webhook".*connection refused'
)
UNGUARDED = json.dumps(
    {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "unguarded", "labels": {"app": "unguarded"}},
        "spec": {
            "containers": [
                {
                    "name": "work",
                    "image": "registry.k8s.io/pause:3.10",
                    "resources": {"requests": {"cpu": "500m", "memory": "256Mi"}},
                }
            ]
        },
    }
)


class RealKubectl(Kubectl):
    """tests/kubectl.py's Kubectl (run, until, streaming), on the real control plane."""

    def __init__(self, cluster: Cluster) -> None:
        cluster.home.mkdir(parents=True, exist_ok=True)
        self.env = {
            **os.environ,
            "HOME": str(cluster.home),
            "KUBECONFIG": str(cluster.kubeconfig),
            "KUBECACHEDIR": str(cluster.home / "kubectl-cache"),
        }


class Audit:
    """The emulator's request count, answered by the real API server's audit log."""

    def __init__(self, plane: ControlPlane) -> None:
        self.plane = plane

    def count(self, verb: str, resource: str, subresource: str = "") -> int:
        return audited(self.plane.audit_log, verb, resource, subresource)


async def test_the_readme_quick_start_on_the_real_control_plane(
    built: Built, tmp_path: Path
) -> None:
    helm, *rest = [c for c in commands() if not c.startswith("docker ")]
    assert helm.startswith("helm install elastic-quota manifests/elastic-quota "), helm
    plane = ControlPlane(tmp_path / "plane", built)
    await asyncio.to_thread(plane.start)
    try:
        cluster = Cluster(plane.directory, plane.server, tmp_path / "user")
        await helm_install(cluster, helm)
        installed = webhook_configurations(cluster)
        async with running(cluster, tmp_path / "product") as (webhook, operator):
            # The only difference from the chart: each webhook's Service is a URL on its name.
            served = webhook_configurations(cluster)
            assert served.keys() == installed.keys() and len(served) == 2
            for name, webhooks in installed.items():
                for before, after in zip(webhooks, served[name], strict=True):
                    service = before["clientConfig"].pop("service")
                    url = after["clientConfig"].pop("url")
                    host = f"{service['name']}.{service['namespace']}.svc"
                    assert url.startswith(f"https://{host}:") and url.endswith(service["path"])
                    assert before == after, name
            kubectl = RealKubectl(cluster)
            story = QuickStart(Audit(plane), kubectl, operator)  # type: ignore[arg-type]
            for command in rest:
                await story.play(command)
            await story.team_b_is_done(timeout=60)
            assert audited(plane.audit_log, "create", "pods", "eviction", code=201) == 1
            await invalid_trees_are_refused_with_a_readable_message(kubectl, tmp_path)
            await a_group_with_children_cannot_be_deleted(kubectl)
            await a_tree_written_for_koordinator_loads_unchanged(kubectl, tmp_path)
            await a_pod_waits_behind_its_gate_until_capacity_frees(kubectl, tmp_path)
            await a_finalizer_comes_off_a_pod_in_a_parent_groups_namespace(
                kubectl, webhook, tmp_path
            )

            # With the webhook down, admission follows the chart's failure policies: a change
            # to the tree is refused (Fail), a new pod is let through ungated (Ignore).
            await webhook.stop()
            with pytest.raises(AssertionError, match=WEBHOOK_DOWN):
                await cluster.kubectl("kubectl label eq team-b -n team-b example=1")
            await cluster.kubectl("kubectl apply -n team-b -f -", stdin=UNGUARDED)
            (pod,) = await cluster.wait_running("team-b", 1, selector="app=unguarded")
            assert "schedulingGates" not in pod["spec"]
        product = [
            e for e in audit_events(plane.audit_log) if PRODUCT_ACCOUNTS in e["user"]["groups"]
        ]
        assert product, "the product's requests are in the audit log"
        forbidden = [
            (e["user"]["username"], e["verb"], e["requestURI"])
            for e in product
            if e["responseStatus"]["code"] == 403
        ]
        assert forbidden == [], "the chart's RBAC refused the product"
    finally:
        await asyncio.to_thread(plane.stop)


DENIED = 'admission webhook "elasticquotas.elastic-quota.webhook" denied the request: '


def manifest(tmp: Path, name: str, text: str) -> str:
    path = tmp / name
    path.write_text(text)
    return str(path)


def team_a_child(name: str, parent: str, cpu: str) -> str:
    return f"""apiVersion: scheduling.sigs.k8s.io/v1alpha1
kind: ElasticQuota
metadata:
  name: {name}
  namespace: team-a
  labels: {{quota.scheduling.koordinator.sh/parent: {parent}}}
spec:
  min: {{cpu: "{cpu}", memory: 1Gi}}
  max: {{cpu: "3", memory: 6Gi}}
"""


def bare_pod(namespace: str, name: str, cpu: str, *, finalizer: bool = False) -> str:
    extra = "\n  finalizers: [example.com/keep]" if finalizer else ""
    return f"""apiVersion: v1
kind: Pod
metadata:
  name: {name}
  namespace: {namespace}{extra}
spec:
  containers:
    - name: work
      image: registry.k8s.io/pause:3.10
      resources: {{requests: {{cpu: "{cpu}", memory: 256Mi}}}}
"""


async def invalid_trees_are_refused_with_a_readable_message(kubectl: Kubectl, tmp: Path) -> None:
    """Too much min under `research` (2 CPUs, its teams have 1 each); a missing parent."""
    for text, reason in (
        (
            team_a_child("team-c", "research", "1"),
            "ElasticQuota team-a/team-c: spec.min.cpu: 1 + siblings' 2 exceeds parent research's "
            "min 2",
        ),
        (
            team_a_child("team-d", "nowhere", "1"),
            "ElasticQuota team-a/team-d: metadata.labels[quota.scheduling.koordinator.sh/parent]: "
            "parent 'nowhere' does not exist",
        ),
    ):
        refused = await kubectl.run(f"kubectl apply -f {manifest(tmp, 'bad.yaml', text)}", ok=False)
        assert refused.code == 1, refused
        assert refused.err.startswith("Error from server (Forbidden): error when creating"), refused
        assert DENIED + reason in refused.err, refused
    assert "team-c" not in (await kubectl.run("kubectl get eq -A")).out


async def a_group_with_children_cannot_be_deleted(kubectl: Kubectl) -> None:
    refused = await kubectl.run("kubectl delete eq research -n research", ok=False)
    assert refused.code == 1
    assert refused.err.strip() == (
        f"Error from server (Forbidden): {DENIED}ElasticQuota research/research: "
        "metadata.name: cannot delete a group with child groups: team-a, team-b"
    ), refused
    assert "research" in {r["NAME"] for r in rows((await kubectl.run("kubectl get eq -A")).out)}


KOORDINATOR_TREE = """apiVersion: v1
kind: Namespace
metadata: {name: gpus}
---
apiVersion: scheduling.sigs.k8s.io/v1alpha1
kind: ElasticQuota
metadata:
  name: gpus
  namespace: gpus
  labels:
    quota.scheduling.koordinator.sh/is-parent: "true"
    quota.scheduling.koordinator.sh/tree-id: gpus
spec:
  max: {cpu: "4", memory: 8Gi}
---
apiVersion: scheduling.sigs.k8s.io/v1alpha1
kind: ElasticQuota
metadata:
  name: gpu-team
  namespace: gpus
  labels: {quota.scheduling.koordinator.sh/parent: gpus}
spec:
  max: {cpu: "2", memory: 4Gi}
"""


async def a_tree_written_for_koordinator_loads_unchanged(kubectl: Kubectl, tmp: Path) -> None:
    """A child written without its parent's tree id, in one apply with the parent, as
    Koordinator's mutating webhook would complete it: created, with the parent's tree id."""
    await kubectl.run(f"kubectl apply -f {manifest(tmp, 'koordinator.yaml', KOORDINATOR_TREE)}")
    labels = await kubectl.run("kubectl get eq gpu-team -n gpus -o jsonpath={.metadata.labels}")
    assert json.loads(labels.out) == {
        "quota.scheduling.koordinator.sh/parent": "gpus",
        "quota.scheduling.koordinator.sh/tree-id": "gpus",
    }
    await kubectl.run("kubectl delete eq gpu-team -n gpus")
    await kubectl.run("kubectl delete namespace gpus --wait=false")


async def a_pod_waits_behind_its_gate_until_capacity_frees(kubectl: Kubectl, tmp: Path) -> None:
    """team-a may use 3 CPUs (its max, and its department's) and runs 2.5 (the quick start's
    Deployment): a 1-CPU pod waits until the Deployment gives a pod back."""
    await kubectl.run(
        f"kubectl apply -f {manifest(tmp, 'big.yaml', bare_pod('team-a', 'big', '1'))}"
    )
    told = "waiting for quota: team-a runtime cpu 3, used or admitted 2500m, this pod 1"
    await kubectl.until(
        "kubectl describe pod big -n team-a",
        lambda r: "WaitingForQuota" in r.out and told in r.out,
        what="big's WaitingForQuota Event",
        timeout=60,
    )
    listed = await kubectl.run("kubectl get pod big -n team-a")
    assert rows(listed.out)[0]["STATUS"] == "SchedulingGated", listed
    await kubectl.run("kubectl scale deployment batch -n team-a --replicas=3")
    await kubectl.until(
        "kubectl get pod big -n team-a",
        lambda r: rows(r.out)[0]["STATUS"] == "Running",
        what="big admitted and running once the Deployment gave two pods back",
        timeout=60,
    )


async def a_finalizer_comes_off_a_pod_in_a_parent_groups_namespace(
    kubectl: Kubectl, webhook: Process, tmp: Path
) -> None:
    """`research` takes the namespace `research-jobs` by its `namespaces` annotation: new pods
    there are refused (pods belong in leaves). A pod made there while the webhook was down (pods
    fail open) must still be deletable, its finalizer removable, once the webhook is back, or it
    would hang in Terminating for ever."""
    await kubectl.run("kubectl create namespace research-jobs")
    await kubectl.run(
        "kubectl annotate eq research -n research "
        "quota.scheduling.koordinator.sh/namespaces='[\"research-jobs\"]'"
    )
    job = manifest(tmp, "job.yaml", bare_pod("research-jobs", "job", "500m", finalizer=True))
    parent = (
        "denied the request: Pod research-jobs/job: metadata.namespace: 'research' is a parent "
        "group: pods belong in leaves"
    )
    await kubectl.until(  # a dry run, until the webhook's watch has the annotation
        f"kubectl apply --dry-run=server -f {job}",
        lambda r: parent in r.err,
        what="the webhook to know research's namespaces",
    )
    await webhook.stop()
    await kubectl.run(f"kubectl apply -f {job}")
    await webhook.start_again()
    await kubectl.run("kubectl delete pod job -n research-jobs --wait=false")
    listed = await kubectl.run("kubectl get pod job -n research-jobs -o json")
    assert json.loads(listed.out)["metadata"]["deletionTimestamp"], listed
    patched = await kubectl.run(
        'kubectl patch pod job -n research-jobs -p \'{"metadata":{"finalizers":null}}\''
    )
    assert "pod/job patched" in patched.out
    await kubectl.until(
        "kubectl get pod job -n research-jobs",
        lambda r: 'pods "job" not found' in r.err,
        what="the pod gone once its finalizer is off",
    )
