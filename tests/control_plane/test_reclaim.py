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
from pathlib import Path

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
    disruption_budget,
    listed,
    pod,
    priority_class,
    replicated,
    sampled,
    team,
)
from tests.control_plane.test_quickstart import RealKubectl
from tests.kubectl import rows
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
EVERYONE = {
    ("authentication.k8s.io", "selfsubjectreviews", "create"),
    ("authorization.k8s.io", "selfsubjectaccessreviews", "create"),
    ("authorization.k8s.io", "selfsubjectrulesreviews", "create"),
}
"""What Kubernetes' own roles let every authenticated user do (system:basic-user)."""
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
        """The lender's 6-CPU pod, admitted within its min and Running; the moment before it
        was created (no round may evict sooner than a delay after it)."""
        before = time.time()
        await self.lender.apply(pod("l0", "6"))
        await self.lender.run(["l0"])
        return before


async def department(
    cluster: Cluster, kubectl: RealKubectl, plane: ControlPlane, prefix: str
) -> Department:
    dept = await team(cluster, kubectl, f"{prefix}-dept", cpu="10", is_parent=True)
    lender = await team(
        cluster, kubectl, f"{prefix}-lender", cpu="6", max_cpu="10", parent=dept.name
    )
    borrower = await team(
        cluster, kubectl, f"{prefix}-borrower", cpu="4", max_cpu="10", parent=dept.name
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

    for component in COMPONENTS:
        allowed = {}
        for namespace in (NAMESPACE, "default"):
            table = await kubectl.run(
                f"kubectl auth can-i --list --as={account(component)} -n {namespace}"
            )
            allowed[namespace] = can_i_list(table.out) - EVERYONE
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
    "order": the_borrower_returns_its_least_important_pods_after_the_delay,
    "keep": non_preemptible_pods_are_never_evicted,
    "budget": a_budget_holds_the_pods_until_it_allows_their_eviction,
}


async def test_borrowed_pods_are_evicted_through_the_eviction_api_under_the_charts_rbac(
    built: Built, tmp_path: Path
) -> None:
    settings = (f"operator.reclaim.delay={DELAY:g}",)
    async with installed(built, tmp_path, *settings, crds=CRDS) as (plane, cluster, started):
        kubectl = RealKubectl(cluster)
        async with asyncio.TaskGroup() as stories:
            for prefix, story in STORIES.items():
                told = await department(cluster, kubectl, plane, prefix)
                stories.create_task(story(told, started.operators[0]), name=story.__name__)
        await each_account_may_do_exactly_what_its_process_did(plane, cluster, kubectl)
    # Read once the processes have stopped: the audit log holds its last line whole.
    assert refused_to_the_product(plane.audit_log) == [], "the chart's RBAC refused the product"
