"""docs/pod-groups.md's walkthrough and the other gang stories, told through real kubectl: Jobs
applied as a user applies them, each pod gated by the chart's webhook on its way in, the gates
lifted by the operator, the pods placed by the scheduler and completed as their kubelet would
(test_pod_groups.py plays them on the real control plane). A `Story` is given the cluster's
side: how to read a Job's pods, how to complete one, and how long a waiting gang is watched to
stay whole.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from tests.kubectl import Kubectl, Result, rows
from tests.kubectl_manifests import gang, group, job, write
from tests.waiting import consistently

JSON = dict[str, Any]
GATED, RUNNING, COMPLETED = "SchedulingGated", "Running", "Completed"
ROUNDS = 20
"""The operator's admission rounds a waiting gang is watched for, to stay whole."""

Pods = Callable[[str, str], list[JSON]]
"""(namespace, Job) -> the Job's pods, as the API server holds them."""
Complete = Callable[[JSON], Awaitable[None]]
"""Completes a pod as its kubelet would (`cluster.complete`)."""


class Story:
    def __init__(
        self, kubectl: Kubectl, tmp: Path, *, pods: Pods, complete: Complete, calm: float
    ) -> None:
        self.kubectl, self.tmp = kubectl, tmp
        self.objects, self.complete = pods, complete
        self.calm = calm
        """Seconds a waiting gang is watched to stay whole: ROUNDS of the operator's rounds."""

    async def apply(self, name: str, *documents: dict[str, Any]) -> None:
        await self.kubectl.run(f"kubectl apply -f {write(self.tmp, name, *documents)}")

    async def pods(
        self,
        namespace: str,
        check: dict[str, list[str]] | Callable[[dict[str, list[str]]], bool],
        *,
        what: str,
    ) -> dict[str, list[str]]:
        """`kubectl get pods` until the STATUS column, per Job (sorted), equals `check` (or
        `check` holds on it)."""

        def by_job(result: Result) -> dict[str, list[str]]:
            found: dict[str, list[str]] = {}
            for row in rows(result.out):
                found.setdefault(row["NAME"].rsplit("-", 1)[0], []).append(row["STATUS"])
            return {job: sorted(statuses) for job, statuses in found.items()}

        def holds(result: Result) -> bool:
            return check(by_job(result)) if callable(check) else by_job(result) == check

        result = await self.kubectl.until(f"kubectl get pods -n {namespace}", holds, what=what)
        return by_job(result)

    async def waiting(self, namespace: str, count: str) -> None:
        await self.kubectl.until(
            f"kubectl get eq -n {namespace}",
            lambda r: [row["WAITING"] for row in rows(r.out)] == [count],
            what=f"{namespace}'s WAITING column at {count or 'nothing'}",
        )

    async def event(self, namespace: str, job: str, pattern: str) -> str:
        """The WaitingForQuota message `kubectl describe pod` shows on a pod of `job`."""
        (pod,) = [p for p in self.objects(namespace, job)][:1]
        described = await self.kubectl.until(
            f"kubectl describe pod {pod['metadata']['name']} -n {namespace}",
            lambda r: "WaitingForQuota" in r.out,
            what=f"the WaitingForQuota Event on a pod of {job}",
        )
        found = re.search(pattern, " ".join(described.out.split()))
        assert found is not None, described
        return found[0]

    async def gated(self, namespace: str, job: str, count: int) -> None:
        """The Job's `count` pods stay gated, all of them, for a while."""

        def all_gated() -> bool:
            pods = self.objects(namespace, job)
            return len(pods) == count and all(p["spec"].get("schedulingGates") for p in pods)

        await consistently(all_gated, seconds=self.calm, what=f"{job}'s {count} pods gated")


async def two_gangs_in_room_for_one_run_one_after_the_other(story: Story) -> None:
    """docs/pod-groups.md's walkthrough: two Jobs of 4 pods of 500m (Koordinator's gang
    annotations, minimum 4) in a group with room for 2 CPUs."""
    kubectl = story.kubectl
    await kubectl.run("kubectl apply -f examples/pod-groups/group.yaml")
    await kubectl.run("kubectl apply -f examples/pod-groups/jobs.yaml")
    found = await story.pods(
        "training",
        lambda seen: sorted(seen.values()) == [[RUNNING] * 4, [GATED] * 4],
        what="one Job's 4 pods running and the other's 4 gated",
    )
    first = next(job for job, statuses in found.items() if statuses == [RUNNING] * 4)
    second = next(job for job in found if job != first)
    await story.waiting("training", "4 (1 gang)")
    seen = await story.event(
        "training",
        second,
        rf"waiting for quota: training runtime cpu 2, used or admitted 2, gang training/{second} "
        r"\(4 pods seen, minimum 4\) 2"
        rf"|waiting: gang training/{second}: [1-3] of its minimum 4 pods exist",
    )
    assert f"gang training/{second}" in seen  # the Event names the gang, its pods and minimum
    await story.gated("training", second, 4)
    # 3 of the first Job's pods complete: 1 CPU free is no room for the second gang's 2.
    for pod in story.objects("training", first)[:3]:
        await story.complete(pod)
    await kubectl.until(
        "kubectl get eq training -n training",
        lambda r: '"cpu":"500m"' in rows(r.out)[0]["USED"],
        what="the group's USED down to 500m",
    )
    await story.gated("training", second, 4)
    await story.complete(story.objects("training", first)[3])
    await story.pods(
        "training",
        {first: [COMPLETED] * 4, second: [RUNNING] * 4},
        what="the first Job completed and the second admitted whole",
    )
    await story.waiting("training", "")


async def a_gang_short_of_its_minimum_waits_for_its_last_member(story: Story) -> None:
    """A Job that makes 3 pods at a time of a gang of minimum 4: none is admitted, though the
    group has room for all of them; its parallelism raised to 4, the fourth makes the gang."""
    await story.apply("team-b.yaml", *group("team-b", min_cpu="2", max_cpu="2"))
    fit = job("fit", "team-b", parallelism=3, completions=4, annotations=gang("fit", 4))
    await story.apply("fit.yaml", fit)
    await story.pods("team-b", {"fit": [GATED] * 3}, what="three pods gated")
    await story.event(
        "team-b", "fit", r"waiting: gang team-b/fit: [1-3] of its minimum 4 pods exist"
    )
    await story.waiting("team-b", "3 (1 gang)")
    await story.gated("team-b", "fit", 3)
    await story.kubectl.run(
        'kubectl patch job fit -n team-b --type merge -p \'{"spec":{"parallelism":4}}\''
    )
    await story.pods("team-b", {"fit": [RUNNING] * 4}, what="all four admitted and running")
    await story.waiting("team-b", "")


async def a_scheduler_plugins_gang_waits_for_its_pod_group(story: Story) -> None:
    """Pods labelled with scheduler-plugins' `scheduling.x-k8s.io/pod-group` wait until the
    operator has seen their PodGroup (created with kubectl after them) and its minMember."""
    await story.apply("team-c.yaml", *group("team-c", min_cpu="2", max_cpu="2"))
    labels = {"scheduling.x-k8s.io/pod-group": "tune"}
    await story.apply(
        "tune.yaml", job("tune", "team-c", parallelism=4, completions=4, labels=labels)
    )
    await story.pods("team-c", {"tune": [GATED] * 4}, what="four pods gated")
    await story.event(
        "team-c",
        "tune",
        r"waiting: gang team-c/tune has no valid minimum: its PodGroup team-c/tune "
        r"\(podgroups.scheduling.x-k8s.io\) does not exist",
    )
    await story.gated("team-c", "tune", 4)
    await story.apply(
        "pg.yaml",
        {
            "apiVersion": "scheduling.x-k8s.io/v1alpha1",
            "kind": "PodGroup",
            "metadata": {"name": "tune", "namespace": "team-c"},
            "spec": {"minMember": 4},
        },
    )
    await story.pods("team-c", {"tune": [RUNNING] * 4}, what="all four admitted and running")
    # The product only reads PodGroups: nothing is written to its status.
    (listed,) = rows((await story.kubectl.run("kubectl get pg -n team-c")).out)
    assert (listed["NAME"], listed["MINMEMBER"], listed["PHASE"]) == ("tune", "4", "")
