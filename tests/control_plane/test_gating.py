"""Quota-gated scheduling on the real control plane, for pods of every maker: a Deployment, a
StatefulSet, a Job and bare pods. Each pod is gated by the product's webhook on its way in
(kube-apiserver's admission chain calling it), waits while its group is full (the WAITING
column, its WaitingForQuota Event, the scheduler's SchedulingGated), has its gate lifted by the
operator once there is room, most important first and never beyond the runtime, and is then
placed by the real kube-scheduler on a kwok node and Running; the controllers' own status says
the same (a ReplicaSet's and a StatefulSet's ready replicas, a Deployment's Available, a Job's
ready, active and Complete).

The chart is installed by `helm install` and its processes run with their ServiceAccounts'
tokens (tests/control_plane/product.py), on a control plane of this module's own, with an
admission hold of 15 s instead of 60 (`gating.admissionHold`), so that a pod that is admitted and
never bound lets the others through within the test. The stories run side by side, each in a
namespace and a group of its own (min = max: a group's runtime is its own, whatever the others
ask); one test plays them all, so that pytest-xdist never starts a second control plane for a
second test of the module. The audit log shows that the chart's RBAC refused the product
nothing.

A story's `Team` (test_reclaim.py and test_leadership.py play theirs with it too) is a
namespace of its own and the group named like it, the workloads a user writes there, and what
the user and the controllers read back. It waits on reads of the API as the admin, cheap
enough to poll, then asserts the user's claims on kubectl's own output once: stories run side
by side on 2 cores, and a kubectl run a look would starve the control plane.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import sys
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from eq_engine.model import keys

from scripts.control_plane.build import Built
from tests.control_plane.cluster import Cluster, kwok_node, refused_to_the_product
from tests.control_plane.product import Process, Product, installed
from tests.control_plane.test_quickstart import RealKubectl
from tests.kubectl import rows
from tests.kubectl_manifests import container, job
from tests.manifests import quota
from tests.waiting import consistently, eventually

ACT = 60.0
"""Seconds the control plane and the product get for a step: a few suffice alone, but beside a
whole suite on 2 cores every component runs several times slower (four control planes at once:
each test about four times longer)."""
FINISHED = ("Succeeded", "Failed")
NOWHERE = {"elastic-quota.example.com/no-such-node": "true"}
"""A node selector no node matches: the scheduler never binds such a pod."""


def pod(
    name: str,
    cpu: str,
    *,
    priority_class: str | None = None,
    labels: dict[str, str] | None = None,
    node_selector: dict[str, str] | None = None,
) -> dict[str, Any]:
    """A bare pod as a user writes it (`restartPolicy: Never`: it may finish)."""
    optional = {"priorityClassName": priority_class, "nodeSelector": node_selector}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": labels or {}},
        "spec": {
            "restartPolicy": "Never",
            "containers": [container(cpu)],
            **{key: value for key, value in optional.items() if value},
        },
    }


def replicated(kind: str, name: str, replicas: int, cpu: str) -> dict[str, Any]:
    """A Deployment or a StatefulSet of `replicas` pods of `cpu`, labelled app=`name`."""
    return {
        "apiVersion": "apps/v1",
        "kind": kind,
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [container(cpu)]},
            },
        },
    }


@contextlib.asynccontextmanager
async def sampled(look: Callable[[], list[str]]) -> AsyncIterator[list[int]]:
    """How many `look` finds, at every look (50 ms apart) while the block runs: what a claim
    "never more than" is checked on."""
    seen: list[int] = []

    async def sample() -> None:
        while True:
            seen.append(len(await asyncio.to_thread(look)))
            await asyncio.sleep(0.05)

    sampler = asyncio.create_task(sample())
    try:
        yield seen
    finally:
        sampler.cancel()


def priority_class(name: str, value: int) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": value,
    }


def disruption_budget(name: str, app: str, *, max_unavailable: int) -> dict[str, Any]:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name},
        "spec": {"maxUnavailable": max_unavailable, "selector": {"matchLabels": {"app": app}}},
    }


def listed(*objects: dict[str, Any]) -> str:
    """The objects as one document for `kubectl apply -f -`."""
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": list(objects)})


def cpu_of(cell: str) -> str | None:
    """The cpu of a resource-list cell of `kubectl get eq` (`{"cpu":"2"}`)."""
    return json.loads(cell).get("cpu") if cell else None


@dataclass
class Team:
    """A namespace of the test's own and its group, named like it."""

    cluster: Cluster
    kubectl: RealKubectl
    namespace: str

    @property
    def name(self) -> str:
        return self.namespace

    async def apply(self, *objects: dict[str, Any]) -> str:
        return await self.cluster.kubectl(
            f"kubectl apply -n {self.namespace} -f -", stdin=listed(*objects)
        )

    def pods(self) -> list[dict[str, Any]]:
        return self.cluster.pods(self.namespace)

    def pod(self, name: str) -> dict[str, Any]:
        found: dict[str, Any] = self.cluster.get(f"/api/v1/namespaces/{self.namespace}/pods/{name}")
        return found

    def admitted(self) -> list[str]:
        """Pods without the admission gate that still run or are about to."""
        return sorted(
            p["metadata"]["name"]
            for p in self.pods()
            if not p["spec"].get("schedulingGates")
            and p["status"].get("phase") not in FINISHED
            and "deletionTimestamp" not in p["metadata"]
        )

    def waiting(self) -> list[str]:
        """Pods behind the admission gate."""
        return sorted(
            p["metadata"]["name"] for p in self.pods() if p["spec"].get("schedulingGates")
        )

    def running(self) -> list[str]:
        """Pods Running and Ready on a kwok node, not being deleted."""
        return sorted(
            p["metadata"]["name"]
            for p in self.pods()
            if p["status"].get("phase") == "Running"
            and "deletionTimestamp" not in p["metadata"]
            and p["spec"].get("nodeName", "").startswith("kwok-node-")
            and any(
                c["type"] == "Ready" and c["status"] == "True"
                for c in p["status"].get("conditions", [])
            )
        )

    def seen(self) -> list[tuple[str, str, bool, bool]]:
        """Each pod: its name, phase, whether it is gated and whether it is being deleted."""
        return [
            (
                p["metadata"]["name"],
                p["status"].get("phase", ""),
                bool(p["spec"].get("schedulingGates")),
                "deletionTimestamp" in p["metadata"],
            )
            for p in self.pods()
        ]

    def quota(self) -> dict[str, Any]:
        found: dict[str, Any] = self.cluster.get(
            f"/apis/scheduling.sigs.k8s.io/v1alpha1/namespaces/{self.namespace}"
            f"/elasticquotas/{self.name}"
        )
        return found

    def annotation(self, key: str) -> str | None:
        annotations: dict[str, str] = self.quota()["metadata"].get("annotations") or {}
        return annotations.get(key)

    def events(self, reason: str) -> list[dict[str, Any]]:
        listed_: list[dict[str, Any]] = self.cluster.get(
            f"/api/v1/namespaces/{self.namespace}/events?fieldSelector=reason%3D{reason}"
        )["items"]
        return listed_

    def status(self, api: str, resource: str, name: str) -> dict[str, Any]:
        """A controller's own view of its object: ("apps/v1", "statefulsets", "db")."""
        found: dict[str, Any] = self.cluster.get(
            f"/apis/{api}/namespaces/{self.namespace}/{resource}/{name}"
        )["status"]
        return found

    async def finish(self, name: str) -> None:
        """The pod's containers exit 0, as its kubelet reports it (kwok ends no pod itself)."""
        await self.cluster.complete(self.pod(name))

    async def resize(self, cpu: str) -> None:
        """The group's min and max set to `cpu`, as its owner would."""
        patch = json.dumps({"spec": {"min": {"cpu": cpu}, "max": {"cpu": cpu}}})
        await self.cluster.kubectl(
            f"kubectl patch eq {self.name} -n {self.namespace} --type merge -p '{patch}'"
        )

    async def waits(self, count: int, *, timeout: float = ACT) -> None:
        """`count` pods wait behind the gate, and the group's WAITING column says so."""
        await eventually(
            lambda: len(self.waiting()) == count,
            timeout=timeout,
            what=f"{count} waiting",
            explain=self.seen,
        )
        wanted = str(count) if count else None
        await eventually(
            lambda: self.annotation(keys.WAITING) == wanted,
            timeout=timeout,
            what=f"{self.name}'s waiting-pods annotation at {wanted}",
        )
        table = await self.kubectl.run(f"kubectl get eq {self.name} -n {self.namespace}")
        (row,) = rows(table.out)
        assert row["WAITING"] == (wanted or ""), table

    async def told(self, pod: str, message: str, *, timeout: float = ACT) -> None:
        """`kubectl describe pod` shows the pod's WaitingForQuota Event with `message`, and
        `kubectl get pods` the scheduler's SchedulingGated."""
        await eventually(
            lambda: any(
                e["involvedObject"]["name"] == pod
                and e["involvedObject"]["uid"] == self.pod(pod)["metadata"]["uid"]
                and e["message"] == message
                for e in self.events("WaitingForQuota")
            ),
            timeout=timeout,
            what=f"{pod}'s WaitingForQuota Event: {message}",
            explain=lambda: [e["message"] for e in self.events("WaitingForQuota")],
        )
        described = await self.kubectl.run(f"kubectl describe pod {pod} -n {self.namespace}")
        assert re.search(
            rf"(?m)^\s+Normal\s+WaitingForQuota\s.*\s{re.escape(message)}$", described.out
        ), described
        table = await self.kubectl.run(f"kubectl get pod {pod} -n {self.namespace}")
        assert rows(table.out)[0]["STATUS"] == "SchedulingGated", table

    async def run(self, names: list[str], *, timeout: float = ACT) -> None:
        """Exactly the pods `names` Running on kwok nodes, as the scheduler placed them."""
        await eventually(
            lambda: self.running() == sorted(names),
            timeout=timeout,
            what=f"{sorted(names)} running in {self.namespace}",
            explain=lambda: (self.running(), self.waiting()),
        )

    async def gauge(self, operator: Process, value: int) -> None:
        """The operator's elastic_quota_group_waiting_pods for the group says `value` (0: the
        series is gone)."""
        series = (
            f'elastic_quota_group_waiting_pods{{group="{self.name}",namespace="{self.namespace}",'
            f'parent="koordinator-root-quota",tree=""}}'
        )
        page = await operator.metrics()
        found = [line for line in page.splitlines() if line.startswith(series)]
        assert found == ([f"{series} {float(value)}"] if value else []), found


async def team(
    cluster: Cluster,
    kubectl: RealKubectl,
    prefix: str,
    *,
    cpu: str,
    max_cpu: str | None = None,
    parent: str | None = None,
    is_parent: bool = False,
) -> Team:
    """A new namespace and its group: min `cpu`, max `max_cpu` (or `cpu`), under `parent`
    (or the root)."""
    namespace = await cluster.namespace(prefix)
    group = quota(
        namespace,
        namespace=namespace,
        parent=parent,
        is_parent=is_parent,
        min={"cpu": cpu},
        max={"cpu": max_cpu or cpu},
    )
    await cluster.kubectl("kubectl apply -f -", stdin=listed(group))
    return Team(cluster, kubectl, namespace)


HOLD = 15
"""Seconds an admitted pod that the scheduler does not bind holds its group's budget: long
enough for the test to see the pod behind it wait, even on a loaded machine."""
GATE_OFF = {"quota.scheduling.koordinator.sh/gate": "false"}


def condition(status: dict[str, object], kind: str) -> str | None:
    """The status of the condition `kind` in a controller's status, None if it has none."""
    conditions = status.get("conditions") or []
    assert isinstance(conditions, list)
    return next((c["status"] for c in conditions if c["type"] == kind), None)


async def a_deployments_pod_waits_until_its_group_has_room(team: Team, _: Product) -> None:
    await team.apply(replicated("Deployment", "web", replicas=3, cpu="1"))  # room for two
    await team.waits(1)
    await team.run(team.admitted())
    (waiting,) = team.waiting()
    await team.told(
        waiting, f"waiting for quota: {team.name} runtime cpu 2, used or admitted 2, this pod 1"
    )
    (replica_set,) = team.cluster.get(
        f"/apis/apps/v1/namespaces/{team.namespace}/replicasets?labelSelector=app%3Dweb"
    )["items"]
    name = replica_set["metadata"]["name"]
    await eventually(
        lambda: team.status("apps/v1", "replicasets", name).get("readyReplicas") == 2,
        what="the ReplicaSet's two ready replicas",
        timeout=ACT,
    )
    assert team.status("apps/v1", "replicasets", name)["replicas"] == 3
    assert condition(team.status("apps/v1", "deployments", "web"), "Available") == "False"

    await team.resize("3")
    await team.waits(0)
    await team.run(team.admitted())
    assert len(team.running()) == 3
    await eventually(
        lambda: team.status("apps/v1", "replicasets", name).get("readyReplicas") == 3,
        what="the ReplicaSet's three ready replicas",
        timeout=ACT,
    )
    await eventually(
        lambda: condition(team.status("apps/v1", "deployments", "web"), "Available") == "True",
        what="the Deployment Available",
        timeout=ACT,
    )


async def a_stateful_sets_last_pod_waits_until_its_group_has_room(team: Team, _: Product) -> None:
    await team.apply(
        replicated("StatefulSet", "db", replicas=3, cpu="1")
    )  # room for two, made in order
    await team.waits(1)
    assert team.waiting() == ["db-2"]
    await team.run(["db-0", "db-1"])
    await team.told(
        "db-2", f"waiting for quota: {team.name} runtime cpu 2, used or admitted 2, this pod 1"
    )
    await eventually(
        lambda: team.status("apps/v1", "statefulsets", "db").get("readyReplicas") == 2,
        what="the StatefulSet's two ready replicas",
        timeout=ACT,
    )
    assert team.status("apps/v1", "statefulsets", "db")["replicas"] == 3

    await team.resize("3")
    await team.waits(0)
    await team.run(["db-0", "db-1", "db-2"])
    await eventually(
        lambda: team.status("apps/v1", "statefulsets", "db").get("availableReplicas") == 3,
        what="the StatefulSet's three available replicas",
        timeout=ACT,
    )


async def a_job_of_40_pods_runs_through_room_for_10_never_more(team: Team, _: Product) -> None:
    """The Job controller makes 40 pods at once; at no look are more than 10 of 500m admitted
    in a group of 5 CPUs. Each wave runs as the last one finishes, and the Job completes."""
    async with sampled(team.admitted) as seen:
        await team.apply(job("batch", team.namespace, parallelism=40, completions=40))
        for wave in range(4):
            await team.waits(30 - 10 * wave)
            await team.run(team.admitted())
            running = team.running()
            assert len(running) == 10, running
            await eventually(
                lambda w=wave: (
                    team.status("batch/v1", "jobs", "batch").get("ready") == 10
                    and team.status("batch/v1", "jobs", "batch").get("succeeded", 0) == 10 * w
                ),
                what=f"the Job's wave {wave}: 10 ready, {10 * wave} succeeded",
                timeout=ACT,
            )
            assert team.status("batch/v1", "jobs", "batch")["active"] == 40 - 10 * wave
            await asyncio.gather(*(team.finish(name) for name in running))
        await eventually(
            lambda: condition(team.status("batch/v1", "jobs", "batch"), "Complete") == "True",
            what="the Job Complete",
            timeout=ACT,
        )
        assert team.status("batch/v1", "jobs", "batch")["succeeded"] == 40
    assert max(seen) <= 10, max(seen)


async def bare_pods_go_most_important_first(team: Team, started: Product) -> None:
    """Five pods wait behind a running one, more important than any of them (so that none takes
    its place); once it is gone the two most important go, then the next as one of them
    finishes, and all of them when the group grows."""
    priorities = [1, 5, 3, 4, 2]
    classes = [priority_class(f"{team.name}-{value}", value) for value in [*priorities, 10]]
    await team.cluster.kubectl("kubectl apply -f -", stdin=listed(*classes))
    await team.apply(pod("blocker", "2", priority_class=f"{team.name}-10"))
    await team.run(["blocker"])
    await team.apply(
        *(
            pod(f"p{i}", "1", priority_class=c["metadata"]["name"])
            for i, c in enumerate(classes[:-1])
        )
    )
    await team.waits(5)
    # Most important first: p1 (5) waits for the quota, the others behind it.
    numbers = "runtime cpu 2, used or admitted 2, this pod 1"
    await team.told("p1", f"waiting for quota: {team.name} {numbers}")
    await team.told(
        "p2", f"waiting for quota: {team.namespace}/p1 waits first in {team.name} ({numbers})"
    )
    await team.cluster.kubectl(f"kubectl delete pod blocker -n {team.namespace}")
    await eventually(
        lambda: team.admitted() == ["p1", "p3"], what="p1 and p3 (5, 4) admitted", timeout=ACT
    )
    await team.run(["p1", "p3"])
    await team.waits(3)
    await team.gauge(started.operators[0], 3)

    await team.finish("p1")  # the next most important, p2 (3), goes
    await eventually(lambda: team.admitted() == ["p2", "p3"], what="p2 admitted", timeout=ACT)
    await team.run(["p2", "p3"])
    await team.resize("4")
    await team.waits(0)
    await team.run(["p0", "p2", "p3", "p4"])
    await team.gauge(started.operators[0], 0)


async def a_more_important_pod_takes_the_place_of_less_important_ones(
    team: Team, started: Product
) -> None:
    """A group of 4 CPUs is full: a non-preemptible pod and a Deployment of three, all of
    priority 1. A pod of priority 100 that would not fit even if every preemptible pod went,
    then a pod of priority 1, wait and take nobody's place. A 2-CPU pod of priority 100 has the
    Deployment's two most recently started pods evicted, runs, and the Deployment's
    replacements wait behind the gate; the non-preemptible pod stays."""
    low, high = f"{team.name}-low", f"{team.name}-high"
    classes = (priority_class(low, 1), priority_class(high, 100))
    await team.cluster.kubectl("kubectl apply -f -", stdin=listed(*classes))
    await team.apply(pod("keeper", "1", priority_class=low, labels={keys.PREEMPTIBLE: "false"}))
    await team.run(["keeper"])
    batch = replicated("Deployment", "batch", replicas=3, cpu="1")
    batch["spec"]["template"]["spec"]["priorityClassName"] = low
    await team.apply(batch)
    await eventually(lambda: len(team.running()) == 4, timeout=ACT, what="the group full")
    started_at = {
        p["metadata"]["name"]: p["status"]["startTime"]
        for p in team.pods()
        if p["metadata"]["name"] != "keeper"
    }
    for waiting in (pod("huge", "5", priority_class=high), pod("peer", "1", priority_class=low)):
        await team.apply(waiting)
        await team.waits(1)
        await consistently(  # three looks of the operator's at least
            lambda: not team.events("Preempted"), seconds=3, what="nobody preempted"
        )
        await team.cluster.kubectl(
            f"kubectl delete pod {waiting['metadata']['name']} -n {team.namespace}"
        )

    await team.apply(pod("urgent", "2", priority_class=high))
    await eventually(
        lambda: "urgent" in team.running(), timeout=ACT, what="urgent running in their place"
    )
    taken = sorted(
        e["involvedObject"]["name"]
        for e in team.events("Preempted")
        if e["involvedObject"]["kind"] == "Pod"
    )
    newest = sorted(started_at, key=lambda name: (started_at[name], name))[-2:]
    assert taken == sorted(newest), (taken, started_at)
    await team.waits(2)  # the Deployment's replacements, behind the gate
    assert "keeper" in team.running()
    described = await team.kubectl.run(f"kubectl describe pod urgent -n {team.namespace}")
    assert "Preempting" in described.out and "of lower priority" in described.out, described
    series = f'elastic_quota_preemptions_total{{group="{team.name}",result="evicted",tree=""}} 2.0'
    assert series in await started.operators[0].metrics()


async def koordinators_priority_queue_policy_lets_a_later_pod_that_fits_pass(
    team: Team, _: Product
) -> None:
    """The group labelled `koord-queue/queue-policy: Priority`: a 2-CPU pod that does not fit
    waits, and a 1-CPU pod made after it passes and runs. A pod naming a PriorityClass that does
    not exist never reaches the gate: the API server refuses it."""
    await team.kubectl.run(
        f"kubectl label eq {team.name} -n {team.namespace} koord-queue/queue-policy=Priority"
    )
    await team.apply(pod("first", "1"))
    await team.run(["first"])
    await team.apply(pod("big", "2"))
    await team.waits(1)
    await team.apply(pod("small", "1"))
    await team.run(["first", "small"])
    assert team.waiting() == ["big"]
    manifest = team.cluster.home / f"{team.namespace}-classless.json"
    manifest.write_text(json.dumps(pod("classless", "1", priority_class="no-such-class")))
    refused = await team.kubectl.run(f"kubectl apply -n {team.namespace} -f {manifest}", ok=False)
    assert "no PriorityClass with name no-such-class was found" in refused.err, refused


SLOT = "example.com/slot"
"""An extended resource only the gang-requeue story's pods ask for: its nodes' room."""
GANG_TIMEOUT, GANG_BACKOFF = 10, 20
"""Seconds (`gating.gangStartTimeout`, `gating.gangRequeueBackoff`) for the gangs' story."""


def slotted(made: dict[str, Any], gang: str | None = None) -> dict[str, Any]:
    """A Job whose pods ask for one slot each, in Koordinator's gang `gang` of all its pods."""
    template = made["spec"]["template"]
    (work,) = template["spec"]["containers"]
    work["resources"]["requests"][SLOT] = "1"
    work["resources"]["limits"] = {SLOT: "1"}
    if gang is not None:
        template["metadata"]["annotations"] = {
            "gang.scheduling.koordinator.sh/name": gang,
            "gang.scheduling.koordinator.sh/min-available": str(made["spec"]["parallelism"]),
        }
    return made


async def a_gang_the_nodes_cannot_hold_is_requeued_and_others_run_meanwhile(
    owner: Team, started: Product
) -> None:
    """A gang of 4 pods, each needing a slot, admitted on quota while the nodes have 3 slots:
    after the start timeout it is evicted whole, and waits behind the gate for its backoff,
    holding nobody back: another group's 3 pods take the slots meanwhile. Once a node with a
    fourth slot joins and the others are done, the gang is admitted again, starts, and its
    requeue is taken off its group; its Job counts no failure."""
    cluster = owner.cluster
    await cluster.create_nodes(
        kwok_node(
            "kwok-node-slots-0", {"cpu": "32", "memory": "64Gi", "pods": "110", SLOT: "2"}, {}
        ),
        kwok_node(
            "kwok-node-slots-1", {"cpu": "32", "memory": "64Gi", "pods": "110", SLOT: "1"}, {}
        ),
    )
    others = await team(cluster, owner.kubectl, "after", cpu="4")
    gang = slotted(job("train", owner.namespace, parallelism=4, completions=4, cpu="1"), "train")
    await owner.apply(gang)
    await eventually(
        lambda: len(owner.running()) == 3, timeout=ACT, what="3 of the gang's 4 pods running"
    )
    await eventually(
        lambda: bool(owner.events("GangRequeued")), timeout=ACT, what="the gang requeued"
    )
    (told,) = {e["message"] for e in owner.events("GangRequeued")}
    late = f"did not start within {GANG_TIMEOUT}s (3 of its minimum 4 pods Ready)"
    assert f"Gang {owner.namespace}/train {late}" in told, told
    await eventually(
        lambda: len(owner.waiting()) == 4 and not owner.running(),
        timeout=ACT,
        what="the gang's 4 new pods behind the gate",
        explain=owner.seen,
    )
    record = json.loads(owner.annotation(keys.REQUEUED_GANGS) or "{}")
    assert record[f"gang:{owner.namespace}/train"]["times"] == 1, record
    plugin = RealKubectl(cluster)  # with `kubectl-eq` on its PATH, as pip installs it
    plugin.env = {
        **plugin.env,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
    }
    explained = await plugin.run(
        f"kubectl eq explain pod {owner.waiting()[0]} -n {owner.namespace}"
    )
    assert f"requeued: gang {owner.namespace}/train, once for not starting in time" in explained.out
    # Meanwhile the room it held is another group's: its 3 slotted pods run.
    await others.apply(
        slotted(job("fill", others.namespace, parallelism=3, completions=3, cpu="1"))
    )
    await eventually(lambda: len(others.running()) == 3, timeout=ACT, what="fill running")
    assert owner.waiting() and not owner.running()

    await cluster.create_nodes(
        kwok_node(
            "kwok-node-slots-2", {"cpu": "32", "memory": "64Gi", "pods": "110", SLOT: "1"}, {}
        )
    )
    for name in others.running():
        await others.finish(name)
    await eventually(
        lambda: len(owner.running()) == 4, timeout=ACT + GANG_BACKOFF, what="the gang running whole"
    )
    await eventually(
        lambda: owner.annotation(keys.REQUEUED_GANGS) is None,
        timeout=ACT,
        what="the requeue taken off the group once the gang started",
    )
    status = owner.status("batch/v1", "jobs", "train")
    assert status.get("failed", 0) == 0 and condition(status, "Failed") is None, status
    requeues = f'elastic_quota_gang_requeues_total{{group="{owner.name}",tree=""}} 1.0'
    assert requeues in await started.operators[0].metrics()


async def an_ungated_pod_that_never_schedules_does_not_hold_the_budget(
    team: Team, _: Product
) -> None:
    """Never gated (labelled so), it waits for a node for ever: the operator did not admit it,
    so it counts only once bound, and the gated pod behind it is admitted."""
    await team.apply(pod("stuck", "2", labels=GATE_OFF, node_selector=NOWHERE))
    stuck = team.pod("stuck")
    assert "schedulingGates" not in stuck["spec"]
    await eventually(
        lambda: any(
            c["type"] == "PodScheduled" and c.get("reason") == "Unschedulable"
            for c in team.pod("stuck")["status"].get("conditions", [])
        ),
        what="the scheduler's Unschedulable for the stuck pod",
        timeout=ACT,
    )
    await team.apply(pod("next", "1"))
    await team.run(["next"])
    assert team.admitted() == ["next", "stuck"]


async def an_admitted_pod_holds_the_budget_only_for_the_admission_hold(
    team: Team, _: Product
) -> None:
    await team.apply(pod("first", "2", node_selector=NOWHERE))  # admitted, never bound
    await eventually(lambda: team.admitted() == ["first"], what="the first admitted", timeout=ACT)
    await team.apply(pod("second", "2"))
    await team.waits(1)
    await team.told(
        "second",
        f"waiting for quota: {team.name} runtime cpu 2, used or admitted 2, this pod 2; "
        f"admitted, not bound yet: {team.namespace}/first",
    )
    await team.run(["second"], timeout=HOLD + ACT)  # once the first's hold ran out
    assert team.admitted() == ["first", "second"]


STORIES = {
    "deploy": (a_deployments_pod_waits_until_its_group_has_room, "2"),
    "sts": (a_stateful_sets_last_pod_waits_until_its_group_has_room, "2"),
    "job": (a_job_of_40_pods_runs_through_room_for_10_never_more, "5"),
    "bare": (bare_pods_go_most_important_first, "2"),
    "preempt": (a_more_important_pod_takes_the_place_of_less_important_ones, "4"),
    "policy": (koordinators_priority_queue_policy_lets_a_later_pod_that_fits_pass, "2"),
    "requeue": (a_gang_the_nodes_cannot_hold_is_requeued_and_others_run_meanwhile, "8"),
    "ungated": (an_ungated_pod_that_never_schedules_does_not_hold_the_budget, "2"),
    "hold": (an_admitted_pod_holds_the_budget_only_for_the_admission_hold, "2"),
}


async def test_pods_of_every_maker_wait_for_room_then_run_on_the_real_control_plane(
    built: Built, tmp_path: Path
) -> None:
    settings = (
        f"gating.admissionHold={HOLD}",
        f"gating.gangStartTimeout={GANG_TIMEOUT}",
        f"gating.gangRequeueBackoff={GANG_BACKOFF}",
    )
    async with installed(built, tmp_path, *settings) as (plane, cluster, started):
        kubectl = RealKubectl(cluster)
        async with asyncio.TaskGroup() as stories:
            for prefix, (story, cpu) in STORIES.items():
                told = await team(cluster, kubectl, prefix, cpu=cpu)
                stories.create_task(story(told, started), name=story.__name__)
    # Read once the processes have stopped: the audit log holds its last line whole.
    assert refused_to_the_product(plane.audit_log) == [], "the chart's RBAC refused the product"
