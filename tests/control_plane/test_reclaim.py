"""Reclaim on the real control plane, and the chart's RBAC under the real authorizer.

A group that lent its min takes it back, and the borrower's least important over-quota pods are
evicted through the real Eviction API, whose PodDisruptionBudgets are the disruption
controller's (kube-controller-manager) and whose 429 is the API server's own; evicted pods end
as a kubelet ends them (kwok), and a Deployment's replacements wait behind the gate instead of
being evicted again.

Each story has a department of its own (min = max 10 CPUs, so its runtime is its own whatever
the others ask) with a lender (min 6) and a borrower (min 4, max 10) running five 2-CPU pods on
the lender's idle min. The lender's 6-CPU pod comes, and after the reclaim delay (2 s here,
`operator.reclaim.delay`) the borrower gives 6 CPUs back. The API server's audit log says which
evictions the operator asked for, when, and how each was answered. The stories run side by side
in one test, on one control plane (tests/control_plane/test_gating.py says why one test).

Four stories borrow with a Job, and read the Job controller's own view of it: a Job of ten
1-CPU pods loses eight (two rounds), two more than its default backoffLimit of 6 would forgive,
an Indexed Job restarting OnFailure loses three of its five indexes, and a Job made from a
CronJob loses three of its five pods; each Job makes every
replacement within 30 s of the eviction, behind the gate, counts no failure, and completes once
its group has room again. A Job whose podFailurePolicy fails it on a disruption is warned of by
kubectl when it is applied, and fails as it asks when its first pod is taken. A StatefulSet's
pods taken come back at once under their names, behind the gate; a gang goes whole or not at
all, kept whole while a real PodDisruptionBudget allows it no disruption.

Reclaim makes the operator ask for all it ever asks (with two PodGroup APIs served, and a group
deleted, which the webhook checks against the pods), so the same test then checks the claims of
tests/chart/test_rbac.py's emulator-measured test on the real authorizer: each ServiceAccount may
do exactly what its process does, and nothing else. The audit log records each request with the
account that made it, allowed or not (a 404 too: authorization comes first): none was refused
(no 403), and together they are every grant the chart renders but one (below). What the real
authorizer lets each account do, `kubectl auth can-i --list`, is exactly the chart's grants, the
Lease only in the built-in groups' namespace: what the chart must not grant is refused (the
webhook may not evict a pod, the operator may not take a Lease elsewhere).

The one grant left unused: `watch` on Kubernetes 1.36's PodGroups (scheduling.k8s.io/v1alpha2),
a built-in alpha API that this control plane does not serve (it needs the API server's
`--runtime-config` and the GenericWorkload feature gate); a CRD cannot stand in for it, since
the API server routes a built-in group to its own handlers (404, though discovery lists the
CRD). The operator's list of it, asked now and then, is answered 404 and counted.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

from eq_engine.model import keys

from scripts.control_plane.build import Built
from scripts.control_plane.plane import ControlPlane
from tests.chart.test_rbac import COMPONENTS, Grant, grants
from tests.control_plane.cluster import Cluster, refused_to_the_product
from tests.control_plane.product import (
    NAMESPACE,
    RELEASE,
    Process,
    Request,
    installed,
    product_requests,
)
from tests.control_plane.test_gating import (
    ACT,
    Team,
    condition,
    disruption_budget,
    listed,
    pod,
    priority_class,
    replicated,
    sampled,
    team,
)
from tests.control_plane.test_node_pools import stamp
from tests.control_plane.test_quickstart import RealKubectl
from tests.kubectl import rows
from tests.kubectl_manifests import job
from tests.manifests import quota
from tests.paths import REPO
from tests.waiting import consistently, eventually

DELAY = 2.0
"""Seconds a group stays above its runtime before a round evicts (`operator.reclaim.delay`)."""
BUDGET_REFUSAL = "Cannot evict pod as it would violate the pod's disruption budget"
CRDS = tuple(
    REPO / "tests" / "crds" / f"podgroups.{group}.yaml"
    for group in ("scheduling.sigs.k8s.io", "scheduling.x-k8s.io")
)
UNSERVED = ("scheduling.k8s.io", "podgroups", "watch")
"""The operator's grant this control plane cannot exercise (see above)."""
NOBODY = f"system:serviceaccount:{NAMESPACE}:nobody"
"""An account bound to no role: what it may do, Kubernetes' own roles let every account do (the
self reviews; from 1.37 on, reading ClusterTrustBundles too)."""
LEASES = {("coordination.k8s.io", "leases", verb) for verb in ("get", "create", "patch")}


def account(component: str) -> str:
    return f"system:serviceaccount:{NAMESPACE}:{RELEASE}-{component}"


def can_i_list(table: str) -> set[Grant]:
    """`kubectl auth can-i --list`'s rows as (API group, resource, verb); rows of non-resource
    URLs (discovery, health) left out."""
    found: set[Grant] = set()
    for row in rows(table):
        if not row["Resources"]:
            continue
        resource, _, group = row["Resources"].partition(".")
        if "/" in group:  # `elasticquotas.scheduling.sigs.k8s.io/status`
            group, subresource = group.split("/", 1)
            resource = f"{resource}/{subresource}"
        found |= {(group, resource, verb) for verb in re.findall(r"[\w*]+", row["Verbs"])}
    return found


class Department:
    """A department of the story's own with its lender and its borrower, and the audit log."""

    def __init__(self, plane: ControlPlane, lender: Team, borrower: Team) -> None:
        self.plane, self.lender, self.borrower = plane, lender, borrower

    def evictions(self) -> list[Request]:
        """Every eviction the product asked for of the borrower's pods, in order."""
        found = [
            r
            for r in product_requests(self.plane.audit_log)
            if r.resource == "pods/eviction" and r.namespace == self.borrower.namespace
        ]
        return sorted(found, key=lambda r: r.received)

    def evicted(self) -> list[str]:
        """The pods whose eviction the API server granted (201), in order."""
        return [r.name for r in self.evictions() if r.code == 201]

    def cpu(self, key: str) -> str | None:
        """The borrower's cpu in one of its annotations (`keys.USED`, `keys.RUNTIME`)."""
        value = self.borrower.annotation(key)
        return None if value is None else json.loads(value).get("cpu")

    async def fits(self) -> None:
        """The operator has seen the evictions: the borrower's used is back at its runtime."""
        await eventually(
            lambda: self.cpu(keys.USED) == "4" and self.cpu(keys.RUNTIME) == "4",
            timeout=ACT,
            what="the borrower's used back at its runtime, cpu 4",
        )

    async def lender_comes_back(self) -> float:
        """The lender's pod of its whole min, admitted and Running; the moment before it was
        created (no round may evict sooner than a delay after it)."""
        before = time.time()
        await self.lender.apply(pod("l0", self.lender.quota()["spec"]["min"]["cpu"]))
        await self.lender.run(["l0"])
        return before


async def department(
    cluster: Cluster, kubectl: RealKubectl, plane: ControlPlane, prefix: str, *, lent: int = 6
) -> Department:
    """A department of 10 CPUs: a lender of min `lent`, a borrower of the rest (max 10)."""
    dept = await team(cluster, kubectl, f"{prefix}-dept", cpu="10", is_parent=True)
    lender = await team(
        cluster, kubectl, f"{prefix}-lender", cpu=str(lent), max_cpu="10", parent=dept.name
    )
    borrower = await team(
        cluster, kubectl, f"{prefix}-borrower", cpu=str(10 - lent), max_cpu="10", parent=dept.name
    )
    return Department(plane, lender, borrower)


async def borrow(department: Department, *, non_preemptible: str | None = None) -> None:
    """b0 ... b4, b0 the most important (PriorityClasses 10 ... 6), all Running on the
    lender's idle min."""
    borrower = department.borrower
    classes = [priority_class(f"{borrower.name}-{10 - i}", 10 - i) for i in range(5)]
    await borrower.cluster.kubectl("kubectl apply -f -", stdin=listed(*classes))
    await borrower.apply(
        *(
            pod(
                f"b{i}",
                "2",
                priority_class=c["metadata"]["name"],
                labels={keys.PREEMPTIBLE: "false"} if f"b{i}" == non_preemptible else {},
            )
            for i, c in enumerate(classes)
        )
    )
    await borrower.run([f"b{i}" for i in range(5)])


async def the_borrower_returns_its_least_important_pods_after_the_delay(
    department: Department, operator: Process
) -> None:
    borrower = department.borrower
    await borrow(department)
    came_back = await department.lender_comes_back()
    await eventually(lambda: len(department.evicted()) >= 3, timeout=ACT, what="three evictions")
    assert department.evicted() == ["b4", "b3", "b2"]  # least important first, as many as needed
    first = department.evictions()[0]
    assert first.at - came_back >= DELAY, first  # not before the delay
    await department.fits()
    await consistently(  # used <= runtime now: nothing more, for a whole delay
        lambda: len(department.evictions()) == 3, seconds=DELAY, what="three evictions"
    )
    await borrower.run(["b0", "b1"])
    await eventually(
        lambda: [p["metadata"]["name"] for p in borrower.pods()] == ["b0", "b1"],
        what="the evicted pods gone, as their kubelet ends them",
        timeout=ACT,
    )
    # An Event on each pod and one on the group for each pod, as `kubectl get events` shows.
    await eventually(
        lambda: len(borrower.events("Reclaimed")) == 6, what="six Reclaimed Events", timeout=ACT
    )
    table = await borrower.kubectl.run(
        f"kubectl get events -n {borrower.namespace} --field-selector reason=Reclaimed"
    )
    objects = sorted(row["OBJECT"] for row in rows(table.out))
    assert objects == [f"elasticquota/{borrower.name}"] * 3 + ["pod/b2", "pod/b3", "pod/b4"]
    (about_b4,) = [
        e["message"]
        for e in borrower.events("Reclaimed")
        if e["involvedObject"]["kind"] == "ElasticQuota"
        and f"pod {borrower.namespace}/b4 " in e["message"]
    ]
    assert f"group {borrower.name} uses cpu 10, above its runtime cpu 4" in about_b4
    assert "the pod requests cpu 2" in about_b4
    evicted = (
        f'elastic_quota_evictions_total{{group="{borrower.name}",result="evicted",tree=""}} 3.0'
    )
    assert evicted in await operator.metrics()


async def non_preemptible_pods_are_never_evicted(department: Department, _: Process) -> None:
    await borrow(department, non_preemptible="b4")
    await department.lender_comes_back()
    await eventually(lambda: len(department.evicted()) >= 3, timeout=ACT, what="three evictions")
    await department.fits()
    await consistently(  # for a whole delay: b4 stays
        lambda: department.evicted() == ["b3", "b2", "b1"], seconds=DELAY, what="three evictions"
    )
    await department.borrower.run(["b0", "b4"])


async def a_budget_holds_the_pods_until_it_allows_their_eviction(
    department: Department, _: Process
) -> None:
    """A Deployment of five 2-CPU pods with a budget of one unavailable pod: reclaim takes one,
    whose replacement waits behind the gate (so the budget allows nothing more), the API server
    itself refuses the next with its 429, and once the budget is raised to three the operator
    takes the other two, never more than the budget allows at any look."""
    borrower = department.borrower
    await borrower.apply(
        replicated("Deployment", "work", replicas=5, cpu="2"),
        disruption_budget("work", "work", max_unavailable=1),
    )
    await eventually(
        lambda: len(borrower.running()) == 5, what="the Deployment's five pods", timeout=ACT
    )

    def allowed() -> int | None:
        status = borrower.status("policy/v1", "poddisruptionbudgets", "work")
        found: int | None = status.get("disruptionsAllowed")
        return found

    await eventually(lambda: allowed() == 1, what="the budget allowing one disruption", timeout=ACT)
    async with sampled(borrower.running) as available:
        await department.lender_comes_back()
        await eventually(lambda: len(department.evicted()) == 1, timeout=ACT, what="one eviction")
        await borrower.waits(1)  # its replacement, gated: the budget allows nothing more
        await eventually(
            lambda: allowed() == 0, what="the budget allowing no disruption", timeout=ACT
        )
        kept = f"is kept from reclaim by PodDisruptionBudget {borrower.namespace}/work"
        await eventually(
            lambda: any(kept in e["message"] for e in borrower.events("ReclaimSkipped")),
            timeout=ACT,
            what="a ReclaimSkipped Event naming the budget",
        )
        table = await borrower.kubectl.run(f"kubectl get pdb work -n {borrower.namespace}")
        assert rows(table.out)[0]["ALLOWED DISRUPTIONS"] == "0", table
        # What the operator leaves alone, the API server itself refuses now.
        victim = borrower.running()[0]
        status, answer = await asyncio.to_thread(
            borrower.cluster.client.request,
            "POST",
            f"/api/v1/namespaces/{borrower.namespace}/pods/{victim}/eviction",
            {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": victim}},
        )
        assert status == 429 and BUDGET_REFUSAL in answer["message"], (status, answer)
        # Two whole windows: the group stays above its runtime, and nothing more goes.
        await consistently(
            lambda: len(department.evicted()) == 1 and department.cpu(keys.USED) == "8",
            seconds=2 * DELAY,
            what="one eviction while the budget allows none",
        )
        assert min(available) >= 4, available

        await borrower.cluster.kubectl(
            f"kubectl patch pdb work -n {borrower.namespace} --type merge "
            """-p '{"spec":{"maxUnavailable":3}}'"""
        )
        await eventually(lambda: len(department.evicted()) == 3, timeout=ACT, what="two more")
        await department.fits()
        await borrower.waits(3)  # the Deployment's replacements wait, and are not evicted
        await consistently(
            lambda: len(department.evicted()) == 3 and len(borrower.waiting()) == 3,
            seconds=2 * DELAY,
            what="three evictions, three replacements waiting",
        )
    assert min(available) >= 2, available
    # Whatever the operator asked, the API server answered 201 or its budget's 429.
    assert {r.code for r in department.evictions()} <= {201, 429}
    (replica_set,) = borrower.cluster.get(
        f"/apis/apps/v1/namespaces/{borrower.namespace}/replicasets?labelSelector=app%3Dwork"
    )["items"]
    assert replica_set["status"]["replicas"] == 5
    assert replica_set["status"].get("readyReplicas") == 2


REPLACED = 30.0
"""Seconds within which a Job has made the replacement of an evicted pod (issue 47)."""
SPARED = "does not count it as a failure and replaces it at once"


def batch_job(
    name: str,
    pods: int,
    cpu: str,
    *,
    restart: str = "Never",
    indexed: bool = False,
    policy: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A Job of `pods` pods of `cpu`, all at once, with Kubernetes' default backoffLimit (6)."""
    made = job(name, "", parallelism=pods, completions=pods, cpu=cpu)
    del made["metadata"]["namespace"]
    spec = made["spec"]
    spec["template"]["spec"]["restartPolicy"] = restart
    if indexed:
        spec["completionMode"] = "Indexed"
    if policy:
        spec["podFailurePolicy"] = policy
    return made


class JobStory:
    """A borrower's Job, what its controller says of it, and its pods."""

    def __init__(self, department: Department, name: str) -> None:
        self.department, self.name = department, name
        self.team = department.borrower

    def status(self) -> dict[str, Any]:
        return self.team.status("batch/v1", "jobs", self.name)

    def pods(self) -> list[dict[str, Any]]:
        return [
            p
            for p in self.team.pods()
            if p["metadata"].get("labels", {}).get("batch.kubernetes.io/job-name") == self.name
        ]

    def events(self, reason: str) -> list[str]:
        return [
            e["message"]
            for e in self.team.events(reason)
            if e["involvedObject"]["kind"] == "Job" and e["involvedObject"]["name"] == self.name
        ]

    async def replaced_at_once(self, evictions: int) -> None:
        """Every evicted pod has a replacement behind the gate, made within `REPLACED` of the
        last eviction; the Job counts no failure; an Event on the Job for each pod taken."""
        await eventually(
            lambda: len(self.department.evicted()) == evictions,
            timeout=ACT,
            what=f"{evictions} evictions",
        )
        last = max(r.at for r in self.department.evictions() if r.code == 201)
        await self.team.waits(evictions, timeout=ACT)
        made = [
            stamp(p["metadata"]["creationTimestamp"]).timestamp()
            for p in self.pods()
            if p["spec"].get("schedulingGates")
        ]
        assert max(made) - last <= REPLACED, (max(made) - last, "seconds after the eviction")
        status = self.status()
        assert status.get("failed", 0) == 0 and condition(status, "Failed") is None, status
        await eventually(
            lambda: len(self.events("Reclaimed")) == evictions,
            timeout=ACT,
            what=f"{evictions} Reclaimed Events on the Job",
        )
        assert all(SPARED in message for message in self.events("Reclaimed"))

    async def completes_once_it_has_room(self, pods: int) -> None:
        """The lender's pod finishes: the replacements are admitted and run, and once every pod
        has finished the Job is Complete, with no failure counted."""
        await self.department.lender.finish("l0")
        await eventually(
            lambda: len(self.team.running()) == pods,
            timeout=ACT,
            what=f"the Job's {pods} pods running again",
        )
        for name in self.team.running():
            await self.team.finish(name)
        await eventually(
            lambda: condition(self.status(), "Complete") == "True",
            timeout=ACT,
            what=f"Job {self.name} Complete",
        )
        status = self.status()
        assert status["succeeded"] == pods and status.get("failed", 0) == 0, status


async def a_jobs_pods_taken_beyond_its_backoff_limit_do_not_fail_it(
    department: Department, _: Process
) -> None:
    """Eight of a Job's ten pods taken, two rounds: Kubernetes would fail it (backoffLimit 6)."""
    story = JobStory(department, "train")
    await department.borrower.apply(batch_job("train", 10, "1"))
    await eventually(
        lambda: len(department.borrower.running()) == 10, timeout=ACT, what="10 running"
    )
    await department.lender_comes_back()
    await story.replaced_at_once(8)
    await story.completes_once_it_has_room(10)


async def an_indexed_job_restarting_on_failure_is_spared_too(
    department: Department, _: Process
) -> None:
    """restartPolicy OnFailure, which no podFailurePolicy may go with, and Indexed: each index
    taken comes back as a new pod of that index."""
    story = JobStory(department, "sweep")
    await department.borrower.apply(batch_job("sweep", 5, "2", restart="OnFailure", indexed=True))
    await eventually(lambda: len(department.borrower.running()) == 5, timeout=ACT, what="5 running")
    await department.lender_comes_back()
    await story.replaced_at_once(3)
    indexes = sorted(
        p["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"]
        for p in story.pods()
        if "deletionTimestamp" not in p["metadata"]
    )
    assert indexes == ["0", "1", "2", "3", "4"], indexes
    await story.completes_once_it_has_room(5)


async def a_cron_jobs_job_is_spared_too(department: Department, _: Process) -> None:
    """A Job made from a CronJob (suspended, so that its schedule makes none meanwhile) as the
    CronJob controller makes them, owned by it: three of its five pods taken, each replaced at
    once, no failure counted, and it completes."""
    borrower = department.borrower
    template = batch_job("nightly", 5, "2")
    cron = {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": "nightly"},
        "spec": {
            "schedule": "0 3 * * *",
            "suspend": True,
            "jobTemplate": {"spec": template["spec"]},
        },
    }
    await borrower.apply(cron)
    await borrower.kubectl.run(
        f"kubectl create job run-1 --from=cronjob/nightly -n {borrower.namespace}"
    )
    story = JobStory(department, "run-1")
    (owner,) = borrower.cluster.get(f"/apis/batch/v1/namespaces/{borrower.namespace}/jobs/run-1")[
        "metadata"
    ]["ownerReferences"]
    assert (owner["kind"], owner["name"]) == ("CronJob", "nightly"), owner
    await eventually(lambda: len(borrower.running()) == 5, timeout=ACT, what="5 running")
    await department.lender_comes_back()
    await story.replaced_at_once(3)
    await story.completes_once_it_has_room(5)


async def a_job_that_counts_disruptions_is_warned_of_and_fails_as_it_asks(
    department: Department, _: Process
) -> None:
    borrower = department.borrower
    story = JobStory(department, "strict")
    rule = {"action": "FailJob", "onPodConditions": [{"type": "DisruptionTarget"}]}
    manifest = department.plane.directory / f"{borrower.namespace}-strict.json"
    manifest.write_text(json.dumps(batch_job("strict", 5, "2", policy={"rules": [rule]})))
    applied = await borrower.kubectl.run(f"kubectl apply -n {borrower.namespace} -f {manifest}")
    assert (
        f"Warning: Job {borrower.namespace}/strict: spec.podFailurePolicy.rules[0]: action "
        "FailJob on the DisruptionTarget condition: the pods that elastic-quota takes back"
    ) in applied.err, applied
    await eventually(lambda: len(borrower.running()) == 5, timeout=ACT, what="5 running")
    await department.lender_comes_back()
    await eventually(
        lambda: condition(story.status(), "Failed") == "True",
        timeout=ACT,
        what="the Job Failed by its own policy",
    )
    (failed,) = [c for c in story.status()["conditions"] if c["type"] == "Failed"]
    assert failed["reason"] == "PodFailurePolicy", failed
    await eventually(
        lambda: bool(story.events("ReclaimCountedAsFailure")),
        timeout=ACT,
        what="a ReclaimCountedAsFailure Event on the Job",
    )
    assert (
        "counts it as a failure, as it asks: spec.podFailurePolicy.rules[0]"
        in (story.events("ReclaimCountedAsFailure")[0])
    )


async def a_gang_is_reclaimed_whole_or_not_at_all(
    department: Department, operator: Process
) -> None:
    """The borrower (min 2) runs `api` (2 CPUs, in quota), then `batch` (2 CPUs) and the four
    1-CPU pods of Job `train`, a Koordinator gang of minimum 4, all on the lender's idle min. The
    lender takes its 8 CPUs back, leaving the borrower a runtime of 2 below its 8 used. The gang
    started last, so it is the least important candidate: while a PodDisruptionBudget allows
    its pods no disruption none of them is touched and `batch` goes instead; once the budget is
    gone the gang goes, all four pods in one round, and the Job's replacements wait behind the
    gate, whole, the Job counting none of them as a failure."""
    borrower = department.borrower
    story = JobStory(department, "train")
    await borrower.apply(pod("api", "2"))
    await borrower.run(["api"])
    await borrower.apply(pod("batch", "2"))
    await borrower.run(["api", "batch"])
    gang = {
        "gang.scheduling.koordinator.sh/name": "train",
        "gang.scheduling.koordinator.sh/min-available": "4",
    }
    train = batch_job("train", 4, "1")
    train["spec"]["template"]["metadata"]["annotations"] = gang
    await borrower.apply(train)
    await eventually(lambda: len(borrower.running()) == 6, timeout=ACT, what="the gang running")
    members = {p["metadata"]["name"] for p in story.pods()}
    budget = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "train"},
        "spec": {"minAvailable": 4, "selector": {"matchLabels": {"job-name": "train"}}},
    }
    await borrower.apply(budget)
    await eventually(
        lambda: (
            borrower.status("policy/v1", "poddisruptionbudgets", "train").get("currentHealthy") == 4
        ),
        timeout=ACT,
        what="the budget counting the gang's four pods healthy",
    )

    await department.lender_comes_back()
    await eventually(lambda: department.evicted() == ["batch"], timeout=ACT, what="batch evicted")
    kept = f"by PodDisruptionBudget {borrower.namespace}/train, which allows no disruption"
    await eventually(
        lambda: (
            {
                e["involvedObject"]["name"]
                for e in borrower.events("ReclaimSkipped")
                if kept in e["message"]
            }
            >= members
        ),
        timeout=ACT,
        what="a ReclaimSkipped Event on each of the gang's pods",
    )
    await consistently(  # two whole windows: the gang is never touched
        lambda: department.evicted() == ["batch"] and members <= set(borrower.running()),
        seconds=2 * DELAY,
        what="the gang kept whole",
    )

    await borrower.cluster.kubectl(f"kubectl delete pdb train -n {borrower.namespace}")
    await eventually(lambda: len(department.evicted()) == 5, timeout=ACT, what="the gang evicted")
    assert set(department.evicted()[1:]) == members
    await eventually(  # the Job's four replacements, whole behind the gate
        lambda: len(borrower.waiting()) == 4 and borrower.annotation(keys.WAITING) == "4 (1 gang)",
        timeout=ACT,
        what="the gang's four replacements waiting",
    )
    assert borrower.running() == ["api"]
    status = story.status()
    assert status.get("failed", 0) == 0 and condition(status, "Failed") is None, status
    await eventually(
        lambda: any(
            "the pod's gang" in e["message"] and "goes whole (4 pods)" in e["message"]
            for e in borrower.events("Reclaimed")
        ),
        timeout=ACT,
        what="the gang's Reclaimed Events",
    )
    gang_evicted = f'elastic_quota_gang_evictions_total{{group="{borrower.name}",tree=""}} 1.0'
    assert gang_evicted in await operator.metrics()


async def a_statefulsets_pods_come_back_behind_the_gate(department: Department, _: Process) -> None:
    """A StatefulSet of five 2-CPU pods (OrderedReady, the default) loses its three newest to
    reclaim. It makes them again at once, under their names, and they wait behind the gate;
    when the lender's pod finishes all five run again."""
    borrower = department.borrower
    await borrower.apply(replicated("StatefulSet", "db", replicas=5, cpu="2"))
    await eventually(lambda: len(borrower.running()) == 5, timeout=ACT, what="db's 5 pods")
    await department.lender_comes_back()
    await eventually(lambda: len(department.evicted()) == 3, timeout=ACT, what="3 evictions")
    assert sorted(department.evicted()) == ["db-2", "db-3", "db-4"]  # the newest go first
    await department.fits()
    await borrower.waits(3)
    assert borrower.waiting() == ["db-2", "db-3", "db-4"], borrower.seen()
    status = borrower.status("apps/v1", "statefulsets", "db")
    assert status.get("readyReplicas") == 2, status
    await department.lender.finish("l0")
    await eventually(
        lambda: borrower.status("apps/v1", "statefulsets", "db").get("readyReplicas") == 5,
        timeout=ACT,
        what="db's five pods Ready again, as its controller counts them",
    )
    assert borrower.running() == [f"db-{i}" for i in range(5)]


async def each_account_may_do_exactly_what_its_process_did(
    plane: ControlPlane, cluster: Cluster, kubectl: RealKubectl
) -> None:
    wanted = grants()
    assert UNSERVED in wanted["operator"]
    # A group deleted: the webhook looks for pods still bound to it.
    spare = await cluster.namespace("spare")
    await cluster.kubectl(
        "kubectl apply -f -", stdin=listed(quota(spare, namespace=spare, max={"cpu": "1"}))
    )
    await cluster.kubectl(f"kubectl delete eq {spare} -n {spare}")

    def used() -> dict[str, set[Grant]]:
        found: dict[str, set[Grant]] = {c: set() for c in COMPONENTS}
        for request in product_requests(plane.audit_log):
            found[request.account.removeprefix(f"{RELEASE}-")].add(request.grant)
        return found

    def missing() -> dict[str, set[Grant]]:
        grown = used()
        return {c: wanted[c] - grown[c] - {UNSERVED} for c in COMPONENTS}

    await eventually(
        lambda: not any(missing().values()), timeout=60, what="every grant used", explain=missing
    )
    for component, grown in used().items():
        assert grown == wanted[component] - {UNSERVED}, component

    everyone = can_i_list((await kubectl.run(f"kubectl auth can-i --list --as={NOBODY}")).out)
    assert ("authorization.k8s.io", "selfsubjectaccessreviews", "create") in everyone
    for component in COMPONENTS:
        allowed = {}
        for namespace in (NAMESPACE, "default"):
            table = await kubectl.run(
                f"kubectl auth can-i --list --as={account(component)} -n {namespace}"
            )
            allowed[namespace] = can_i_list(table.out) - everyone
        assert allowed[NAMESPACE] == wanted[component], component
        assert allowed["default"] == wanted[component] - LEASES, component
    for component, verb, resource, namespace in (
        ("webhook", "create", "pods/eviction", "default"),
        ("webhook", "patch", "pods", "default"),
        ("operator", "create", "leases", "default"),
        ("operator", "delete", "pods", "default"),
        ("operator", "get", "secrets", NAMESPACE),
    ):
        answer = await kubectl.run(
            f"kubectl auth can-i {verb} {resource} --as={account(component)} -n {namespace}",
            ok=False,
        )
        assert (answer.code, answer.out.strip()) == (1, "no"), answer


STORIES = {
    "order": (the_borrower_returns_its_least_important_pods_after_the_delay, 6),
    "keep": (non_preemptible_pods_are_never_evicted, 6),
    "budget": (a_budget_holds_the_pods_until_it_allows_their_eviction, 6),
    "job": (a_jobs_pods_taken_beyond_its_backoff_limit_do_not_fail_it, 8),
    "indexed": (an_indexed_job_restarting_on_failure_is_spared_too, 6),
    "strict": (a_job_that_counts_disruptions_is_warned_of_and_fails_as_it_asks, 6),
    "cron": (a_cron_jobs_job_is_spared_too, 6),
    "gang": (a_gang_is_reclaimed_whole_or_not_at_all, 8),
    "sts": (a_statefulsets_pods_come_back_behind_the_gate, 6),
}
"""Each story's prefix, and what its lender lends."""


Story = Callable[[Department, Process], Awaitable[None]]


async def side_by_side(
    plane: ControlPlane,
    cluster: Cluster,
    kubectl: RealKubectl,
    operator: Process,
    stories: Mapping[str, tuple[Story, int]],
) -> None:
    """Each story (by prefix, with what its lender lends) on a department of its own, all at
    once."""
    async with asyncio.TaskGroup() as running:
        for prefix, (story, lent) in stories.items():
            told = await department(cluster, kubectl, plane, prefix, lent=lent)
            running.create_task(story(told, operator), name=story.__name__)


async def test_borrowed_pods_are_evicted_through_the_eviction_api_under_the_charts_rbac(
    built: Built, tmp_path: Path
) -> None:
    settings = (f"operator.reclaim.delay={DELAY:g}",)
    async with installed(built, tmp_path, *settings, crds=CRDS) as (plane, cluster, started):
        kubectl = RealKubectl(cluster)
        await side_by_side(plane, cluster, kubectl, started.operators[0], STORIES)
        await each_account_may_do_exactly_what_its_process_did(plane, cluster, kubectl)
    # Read once the processes have stopped: the audit log holds its last line whole.
    assert refused_to_the_product(plane.audit_log) == [], "the chart's RBAC refused the product"
