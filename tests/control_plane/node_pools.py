"""The README's "Node pools" walkthrough (examples/gpu-pools) as a story: every kubectl command of
its second block, read out of README.md (tests/readme.py) so that the two cannot drift, played
verbatim and judged on what kubectl shows (test_node_pools.py plays it on the real control
plane). Around the README's commands: the tree-id denial through kubectl, a node joining the
V100 pool, and team A's Job completing once it has all its cards again.

Team B's pods are within its guarantee, so the operator admits them at once; they wait
Pending, for free V100 cards, until reclaim has evicted team A's borrowed pods. What waits
behind the gate is team A's Job's replacements for the pods evicted (as the README says),
made at once: the Job counts none of them as a failure.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import yaml

from tests.kubectl import Kubectl, Result, rows
from tests.waiting import eventually

NAMESPACE = "koordinator-system"
SECTION = "## Node pools"
P = "quota.scheduling.koordinator.sh/"
GPU, PRODUCT = "nvidia.com/gpu", "nvidia.com/gpu.product"
A100, V100 = "NVIDIA-A100-SXM4-80GB", "Tesla-V100-SXM2-16GB"
POOLS = ("a100", "v100")
PRODUCTS = (("a100", A100), ("v100", V100))
V100_NODES = {"v100-1", "v100-2"}
POOL_AFFINITY = {
    "nodeSelectorTerms": [
        {"matchExpressions": [{"key": PRODUCT, "operator": "In", "values": [V100]}]}
    ]
}
DENIED = (
    "ElasticQuota team-b/team-b-spare: metadata.labels[quota.scheduling.koordinator.sh/tree-id]: "
    "tree id is 'a100', parent v100's is 'v100': a group is in its parent's tree"
)


REPLACED = 30.0
"""Seconds within which team A's Job replaces the pods reclaim took (issue 47)."""
CPU, MEMORY_GI, CARDS = "64", 512, "5"
"""A GPU node: 5 cards, with room for the Jobs' 8 CPUs and 64Gi per pod on each card."""


def gpus(cell: str) -> str | None:
    """The GPUs of a JSON resource-list cell (`{"cpu":"80",...,"nvidia.com/gpu":"10"}`)."""
    return json.loads(cell).get(GPU) if cell else None


def by_name(result: Result) -> dict[str, dict[str, str]]:
    return {row["NAME"]: row for row in rows(result.out)}


class Walkthrough:
    """The README's kubectl commands, each played verbatim and judged."""

    def __init__(
        self,
        kubectl: Kubectl,
        tmp: Path,
        *,
        node: Callable[[str, str], dict[str, Any]],
        complete: Callable[[dict[str, Any]], Awaitable[None]],
        replaced: float = REPLACED,
    ) -> None:
        self.kubectl, self.tmp = kubectl, tmp
        self.node = node
        """(name, GPU product) -> a GPU node's manifest, as `kubectl create -f` takes it."""
        self.complete = complete
        """Completes a pod as its kubelet would."""
        self.replaced = replaced
        """Seconds the Job controller may take to make the evicted pods' replacements."""
        self.checks = {
            "kubectl apply -f examples/gpu-pools/pools.yaml": self.pools,
            "kubectl get eq -n koordinator-system": self.roots,
            "kubectl apply -f examples/gpu-pools/teams.yaml": self.teams,
            "kubectl apply -f examples/gpu-pools/team-a.yaml": self.team_a,
            "kubectl get eq -n team-a": self.team_a_borrows,
            "kubectl apply -f examples/gpu-pools/team-b.yaml": self.team_b,
            "kubectl get events -n team-a --field-selector reason=Reclaimed": self.reclaimed,
            "kubectl get pods -n team-b -o wide": self.team_b_runs,
        }

    async def play(self, command: str) -> None:
        check = self.checks.get(command.split("#")[0].strip())
        assert check is not None, f"no claim checked for the README command {command!r}"
        await check(command)

    async def pools(self, command: str) -> None:
        out = (await self.kubectl.run(command)).out
        for name in ("a100", "v100"):
            assert f"elasticquotaprofile.quota.koordinator.sh/{name} created" in out, out

    async def roots(self, command: str) -> None:
        """The roots a100 and v100, each at its pool's total (10 cards, 128 CPUs)."""
        result = await self.kubectl.until(
            command,
            lambda r: all(gpus(by_name(r).get(n, {}).get("MIN", "")) == "10" for n in POOLS),
            what="the roots a100 and v100, their MIN the pool's 10 cards",
        )
        for name in POOLS:
            assert by_name(result)[name]["TREE"] == name, result
            quota = await self.quota(name)
            total = json.loads(quota["metadata"]["annotations"][P + "total-resource"])
            assert (total[GPU], total["cpu"]) == ("10", "128"), total
            labels = quota["metadata"]["labels"]
            assert labels[P + "is-root"] == labels[P + "is-parent"] == "true", labels
            assert (labels[P + "profile"], labels[P + "tree-id"]) == (name, name), labels

    async def quota(self, name: str) -> dict[str, Any]:
        found: dict[str, Any] = json.loads(
            (await self.kubectl.run(f"kubectl get eq {name} -n {NAMESPACE} -o json")).out
        )
        return found

    async def teams(self, command: str) -> None:
        out = (await self.kubectl.run(command)).out
        for group in ("team-a-a100", "team-a-v100", "team-b-a100", "team-b-v100"):
            assert f"elasticquota.scheduling.sigs.k8s.io/{group} created" in out, out
        await self.a_group_outside_its_parents_tree_is_refused()

    async def a_group_outside_its_parents_tree_is_refused(self) -> None:
        """docs/node-pools.md: a child's tree id is its parent's. One made without it is given
        it; one that names another tree is refused, the webhook naming both ids."""
        spare: dict[str, Any] = {
            "apiVersion": "scheduling.sigs.k8s.io/v1alpha1",
            "kind": "ElasticQuota",
            "metadata": {
                "name": "team-b-spare",
                "namespace": "team-b",
                "labels": {P + "parent": "v100"},
            },
            "spec": {"max": {"cpu": "128", "memory": "1Ti", GPU: "5"}},
        }
        path = self.tmp / "spare.yaml"
        path.write_text(yaml.safe_dump(spare))
        await self.kubectl.run(f"kubectl apply -f {path}")
        got = "kubectl get eq team-b-spare -n team-b -o jsonpath={.metadata.labels}"
        assert json.loads((await self.kubectl.run(got)).out)[P + "tree-id"] == "v100"
        await self.kubectl.run(f"kubectl delete -f {path}")
        spare["metadata"]["labels"][P + "tree-id"] = "a100"
        path.write_text(yaml.safe_dump(spare))
        result = await self.kubectl.run(f"kubectl apply -f {path}", ok=False)
        assert result.code == 1 and DENIED in " ".join(result.err.split()), result
        result = await self.kubectl.run("kubectl get eq team-b-spare -n team-b", ok=False)
        assert result.code == 1 and "(NotFound)" in result.err, result

    async def team_a(self, command: str) -> None:
        """Ten pods of one card, all on V100 nodes, each with the V100 pool's node affinity."""
        assert "job.batch/train created" in (await self.kubectl.run(command)).out
        result = await self.kubectl.until(
            "kubectl get pods -n team-a -o wide",
            lambda r: [x["STATUS"] for x in rows(r.out)] == ["Running"] * 10,
            what="team A's 10 pods running",
        )
        nodes = [x["NODE"] for x in rows(result.out)]
        assert sorted(nodes) == ["v100-1"] * 5 + ["v100-2"] * 5, result
        pods = json.loads((await self.kubectl.run("kubectl get pods -n team-a -o json")).out)
        for pod in pods["items"]:
            assert pod["spec"]["affinity"]["nodeAffinity"] == {
                "requiredDuringSchedulingIgnoredDuringExecution": POOL_AFFINITY
            }, pod["metadata"]["name"]

    async def team_a_borrows(self, command: str) -> None:
        """team-a-v100 uses 10 cards: its 5 and team B's idle 5."""
        result = await self.kubectl.until(
            command,
            lambda r: (
                (
                    gpus(by_name(r)["team-a-v100"]["RUNTIME"]),
                    gpus(by_name(r)["team-a-v100"]["USED"]),
                )
                == ("10", "10")
            ),
            what="team-a-v100's RUNTIME and USED at 10 cards",
        )
        assert by_name(result)["team-a-v100"]["TREE"] == "v100", result
        assert gpus(by_name(result)["team-a-v100"]["MIN"]) == "5", result

    async def team_b(self, command: str) -> None:
        assert "job.batch/eval created" in (await self.kubectl.run(command)).out

    async def reclaimed(self, command: str) -> None:
        """Reclaim takes 5 of team A's pods back, and the operator says why on each, on their
        group and on their Job, which counts none of them as a failure."""
        # Each eviction is told three times, in three writes: wait for all of them.
        result = await self.kubectl.until(
            command,
            lambda r: len(rows(r.out)) == 15,
            what="a Reclaimed Event on each of 5 of team A's pods, 5 on their group, 5 on the Job",
            timeout=30,
        )
        objects = sorted(x["OBJECT"] for x in rows(result.out))
        assert objects[:10] == ["elasticquota/team-a-v100"] * 5 + ["job/train"] * 5, objects
        assert len({o for o in objects[10:] if o.startswith("pod/train-")}) == 5, objects
        for event in rows(result.out):  # the numbers of the plan each eviction was decided on
            assert re.search(
                r"Evicted pod team-a/train-\w+ to return borrowed capacity: group team-a-v100 "
                rf"uses .*, above its runtime .*{GPU} 5, for \d+s",
                event["MESSAGE"],
            ), event
        described = await self.kubectl.run("kubectl describe job train -n team-a")
        spared = "Job train does not count it as a failure and replaces it at once"
        assert " ".join(described.out.split()).count(spared) == 5, described
        await self.team_b_waited_for_cards()

    async def team_b_waited_for_cards(self) -> None:
        """Team B's pods waited for cards, not behind the gate: within team B's guarantee, they
        were admitted at once, and the scheduler tried them while no V100 card was free (only
        pods past the gate are tried)."""
        await self.kubectl.until(
            "kubectl get events -n team-b --field-selector reason=FailedScheduling",
            lambda r: any(f"Insufficient {GPU}" in row["MESSAGE"] for row in rows(r.out)),
            what=f"the scheduler's FailedScheduling Events on team B's pods (Insufficient {GPU})",
        )

    async def team_b_runs(self, command: str) -> None:
        """Running, on V100 nodes; team A's used back to 5, its Job's 5 replacements waiting."""
        result = await self.kubectl.until(
            command,
            lambda r: [x["STATUS"] for x in rows(r.out)] == ["Running"] * 5,
            what="team B's 5 pods running",
        )
        assert {x["NODE"] for x in rows(result.out)} <= V100_NODES, result
        waited = "kubectl get events -n {} --field-selector reason=WaitingForQuota"
        assert rows((await self.kubectl.run(waited.format("team-b"))).out) == [], "B waited"
        await self.kubectl.until(  # team A's replacements do, behind the gate
            waited.format("team-a"),
            lambda r: len(rows(r.out)) >= 5,
            what="A's replacements",
            timeout=self.replaced,
        )
        result = await self.kubectl.until(
            "kubectl get eq -n team-a",
            lambda r: (
                [gpus(by_name(r)["team-a-v100"][c]) for c in ("RUNTIME", "USED")] == ["5", "5"]
                and by_name(r)["team-a-v100"]["WAITING"] == "5"
            ),
            what="team-a-v100's RUNTIME and USED at 5 cards, 5 pods waiting",
        )
        pods = await self.kubectl.run("kubectl get pods -n team-a -o wide")
        statuses = sorted((x["STATUS"], x["NODE"] in V100_NODES) for x in rows(pods.out))
        assert statuses == [("Running", True)] * 5 + [("SchedulingGated", False)] * 5, pods

    async def a_node_joins_the_v100_pool(self) -> None:
        """The root's total follows the pool; team A's waiting pods get the new node's cards."""
        path = self.tmp / "v100-3.yaml"
        path.write_text(yaml.safe_dump(self.node("v100-3", V100)))
        assert "node/v100-3 created" in (await self.kubectl.run(f"kubectl create -f {path}")).out

        async def grown() -> bool:
            quota = await self.quota("v100")
            total = json.loads(quota["metadata"]["annotations"][P + "total-resource"])
            return (total[GPU], quota["spec"]["min"][GPU]) == ("15", "15")

        await eventually(grown, what="v100's total and min at 15 cards")
        result = await self.kubectl.until(
            "kubectl get pods -n team-a -o wide",
            lambda r: [x["STATUS"] for x in rows(r.out)] == ["Running"] * 10,
            what="team A's 5 replacements running",
        )
        nodes = [x["NODE"] for x in rows(result.out)]
        assert nodes.count("v100-3") == 5 and set(nodes) <= {*V100_NODES, "v100-3"}, result

    async def team_a_completes(self) -> None:
        """With all its cards again, team A's 10 pods finish: its Job is Complete, and counted
        none of the 5 pods that reclaim took as a failure."""
        listed = await self.kubectl.run("kubectl get pods -n team-a -o json")
        for pod in json.loads(listed.out)["items"]:
            await self.complete(pod)

        def complete(result: Result) -> bool:
            conditions = json.loads(result.out)["status"].get("conditions") or []
            return any(c["type"] == "Complete" and c["status"] == "True" for c in conditions)

        result = await self.kubectl.until(
            "kubectl get job train -n team-a -o json", complete, what="team A's Job Complete"
        )
        status = json.loads(result.out)["status"]
        assert status["succeeded"] == 10 and status.get("failed", 0) == 0, status
