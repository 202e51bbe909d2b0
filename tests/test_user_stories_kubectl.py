"""User stories beyond the quick start, through real kubectl against the emulated API server
with the chart installed (tests/installation.py): the webhook is reached only through the
chart's webhook configurations, as kube-apiserver reaches it, and kubectl prints what a user
reads. The quick start's organisation (examples/quickstart/tree.yaml) is the tree.
"""

from __future__ import annotations

from pathlib import Path

from tests.apiserver import ApiServer
from tests.apiserver.client import Client
from tests.apiserver.standins import Scheduler
from tests.installation import installed
from tests.kubectl import Kubectl, rows
from tests.manifests import node


def manifest(tmp: Path, name: str, text: str) -> str:
    path = tmp / name
    path.write_text(text)
    return str(path)


def quota(name: str, parent: str, cpu: str) -> str:
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


def pods(namespace: str, *names: str, cpu: str = "1", finalizer: bool = False) -> str:
    extra = "\n  finalizers: [example.com/keep]" if finalizer else ""
    return "---\n".join(
        f"""apiVersion: v1
kind: Pod
metadata:
  name: {name}
  namespace: {namespace}{extra}
spec:
  containers:
    - name: work
      image: registry.k8s.io/pause:3.10
      resources: {{requests: {{cpu: {cpu}, memory: 256Mi}}}}
"""
        for name in names
    )


def statuses(out: str) -> dict[str, str]:
    return {r["NAME"]: r["STATUS"] for r in rows(out)}


async def test_user_stories_through_kubectl(tmp_path):
    async with ApiServer() as api:
        api.seed(node("node-1", cpu="4", memory="16Gi", pods="110"))
        client = Client(api.url)
        scheduler = Scheduler(client)
        kubectl = Kubectl(api, tmp_path / "user")
        try:
            async with installed(api, tmp_path) as _:
                await scheduler.start()
                await kubectl.run("kubectl apply -f examples/quickstart/tree.yaml")
                await invalid_trees_are_refused_with_a_readable_message(kubectl, tmp_path)
                await a_group_with_children_cannot_be_deleted(kubectl)
                await a_finalizer_comes_off_a_pod_in_a_parent_groups_namespace(
                    api, kubectl, tmp_path
                )
                await a_pod_waits_behind_its_gate_until_capacity_frees(kubectl, tmp_path)
        finally:
            await scheduler.stop()
            await client.close()


async def invalid_trees_are_refused_with_a_readable_message(kubectl: Kubectl, tmp: Path) -> None:
    """Too much min under `research` (2 CPUs, its teams have 1 each); a missing parent."""
    denied = 'admission webhook "elasticquotas.elastic-quota.webhook" denied the request: '
    for text, reason in (
        (
            quota("team-c", "research", "1"),
            "ElasticQuota team-a/team-c: spec.min.cpu: 1 + siblings' 2 exceeds parent research's "
            "min 2",
        ),
        (
            quota("team-d", "nowhere", "1"),
            "ElasticQuota team-a/team-d: metadata.labels[quota.scheduling.koordinator.sh/parent]: "
            "parent 'nowhere' does not exist",
        ),
    ):
        # refused either way; for this reason once the webhook's watch has the tree just applied
        refused = await kubectl.until(
            f"kubectl apply -f {manifest(tmp, 'bad.yaml', text)}",
            lambda r, reason=reason: denied + reason in r.err,
            what=f"the refusal: {reason}",
        )
        assert refused.code == 1, refused
        assert refused.err.startswith("Error from server (Forbidden): error when creating"), refused
        assert denied + reason in refused.err, refused
    assert "team-c" not in (await kubectl.run("kubectl get eq -A")).out


async def a_group_with_children_cannot_be_deleted(kubectl: Kubectl) -> None:
    refused = await kubectl.run("kubectl delete eq research -n research", ok=False)
    assert refused.code == 1
    assert refused.err.strip() == (
        'Error from server (Forbidden): admission webhook "elasticquotas.elastic-quota.webhook" '
        "denied the request: ElasticQuota research/research: metadata.name: cannot delete a "
        "group with child groups: team-a, team-b"
    ), refused
    assert "research" in {r["NAME"] for r in rows((await kubectl.run("kubectl get eq -A")).out)}


async def a_finalizer_comes_off_a_pod_in_a_parent_groups_namespace(
    api: ApiServer, kubectl: Kubectl, tmp: Path
) -> None:
    """`research` takes the namespace `research-jobs` by its `namespaces` annotation: new pods
    there are refused (pods belong in leaves). A pod made there while the webhook had no
    endpoints (pods fail open) must still be deletable, its finalizer removable, or it would
    hang in Terminating for ever."""
    namespace = "apiVersion: v1\nkind: Namespace\nmetadata: {name: research-jobs}\n"
    await kubectl.run(f"kubectl apply -f {manifest(tmp, 'ns.yaml', namespace)}")
    await kubectl.run(
        "kubectl annotate eq research -n research "
        "quota.scheduling.koordinator.sh/namespaces='[\"research-jobs\"]'"
    )
    job = manifest(tmp, "job.yaml", pods("research-jobs", "job", finalizer=True))
    parent = (
        "denied the request: Pod research-jobs/job: metadata.namespace: 'research' is a parent "
        "group: pods belong in leaves"
    )
    await kubectl.until(  # a dry run, until the webhook's watch has the annotation
        f"kubectl apply --dry-run=server -f {job}",
        lambda r: parent in r.err,
        what="the webhook to know research's namespaces",
    )
    refused = await kubectl.run(f"kubectl apply -f {job}", ok=False)
    assert parent in refused.err, refused
    endpoints = dict(api.admission.services)
    api.admission.services.clear()  # the webhook's Service has no endpoints
    await kubectl.run(f"kubectl apply -f {job}")
    api.admission.services.update(endpoints)
    await kubectl.run("kubectl delete pod job -n research-jobs --wait=false")
    listed = await kubectl.run("kubectl get pods -n research-jobs")
    assert statuses(listed.out) == {"job": "Terminating"}
    patched = await kubectl.run(
        'kubectl patch pod job -n research-jobs -p \'{"metadata":{"finalizers":null}}\''
    )
    assert "pod/job patched" in patched.out
    gone = await kubectl.run("kubectl get pod job -n research-jobs", ok=False)
    assert 'pods "job" not found' in gone.err


async def a_pod_waits_behind_its_gate_until_capacity_frees(kubectl: Kubectl, tmp: Path) -> None:
    """team-a may use 3 CPUs (its max, and its department's); the fourth 1-CPU pod waits."""
    four = manifest(tmp, "four.yaml", pods("team-a", "p1", "p2", "p3", "p4"))
    await kubectl.run(f"kubectl apply -f {four}")
    waiting = {"p1": "Running", "p2": "Running", "p3": "Running", "p4": "SchedulingGated"}
    await kubectl.until(
        "kubectl get pods -n team-a",
        lambda r: statuses(r.out) == waiting,
        what="three pods running and the fourth gated",
    )
    told = "waiting for quota: team-a runtime cpu 3, used or admitted 3, this pod 1"
    await kubectl.until(  # the Event's message as the numbers settle, not only its reason
        "kubectl describe pod p4 -n team-a",
        lambda r: "WaitingForQuota" in r.out and told in r.out,
        what="the WaitingForQuota Event",
    )
    await kubectl.until(
        "kubectl get eq -A",
        lambda r: {x["NAME"]: x["WAITING"] for x in rows(r.out)}["team-a"] == "1",
        what="team-a's WAITING column at 1",
    )
    await kubectl.run("kubectl delete pod p1 -n team-a")
    await kubectl.until(
        "kubectl get pods -n team-a",
        lambda r: statuses(r.out) == {"p2": "Running", "p3": "Running", "p4": "Running"},
        what="the fourth pod admitted and running once p1 is gone",
    )
