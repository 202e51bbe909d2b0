"""The README's "Node pools" walkthrough (examples/gpu-pools), played through `simulate` and real
kubectl against the emulated API server, every claim it makes asserted.

The commands are read out of README.md (tests/readme.py), so the two cannot drift: the first
block, `simulate` on the example's snapshot, runs as a subprocess; every command of the second
runs verbatim through kubectl. "A cluster whose GPU nodes carry NVIDIA's `nvidia.com/gpu.product`
label, with the chart installed" is: tests/installation.py's `installed()` (the operator's pace
and its reclaim delay cut), two A100 and two V100 nodes of 5 cards each, shaped as a cluster
holds them (tests/realistic), the scheduler stand-in, which honours required node affinity (the
A100 nodes sort first: a pod without its pool's affinity would land there), and the Job
stand-in (tests/apiserver/jobs.py: an evicted pod is replaced, as the Job controller does).

Around the README's commands: a `kubectl get pods -A -w` that records every node any pod was
ever bound to, the tree-id denial through kubectl, and a node joining the V100 pool.

Team B's pods are within its guarantee, so the operator admits them at once; they wait
Pending, for free V100 cards, until reclaim has evicted team A's borrowed pods. What waits
behind the gate is team A's Job's replacements for the pods evicted (as the README says).

The walkthrough is played on the real control plane too (tests/control_plane/test_node_pools.py):
a `Walkthrough` is given a GPU node's manifest as that cluster takes it, how long the Job
controller takes to replace evicted pods, and how to show that team B's pods waited for cards
and not behind the gate (`team_b_waited_for_cards`: here, the emulator's view at each
eviction).
"""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from tests.apiserver import ApiServer
from tests.apiserver.client import Client
from tests.apiserver.jobs import Jobs
from tests.apiserver.standins import Scheduler
from tests.installation import NAMESPACE, installed
from tests.kubectl import Kubectl, Result, argv, rows
from tests.paths import REPO
from tests.readme import blocks
from tests.realistic import node
from tests.waiting import eventually

SECTION = "## Node pools"
SETTINGS = (
    "operator.batchInterval=0.05",
    "operator.leaseDuration=2",
    "operator.reclaim.interval=0.1",
    "operator.reclaim.delay=0.5",
)
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
    "tree id is unset, parent v100's is 'v100': a group is in its parent's tree"
)


CPU, MEMORY_GI, CARDS = "64", 512, "5"
"""A GPU node: 5 cards, with room for the Jobs' 8 CPUs and 64Gi per pod on each card."""


def gpu_node(name: str, product: str) -> dict[str, Any]:
    """A GPU node as a cluster holds it."""
    return node(name, cpu=CPU, memory_gi=MEMORY_GI, labels={PRODUCT: product}, extra={GPU: CARDS})


def new_gpu_node(name: str, product: str) -> dict[str, Any]:
    """A GPU node as `kubectl create -f` takes it: without what the API server sets."""
    created = gpu_node(name, product)
    for field in ("resourceVersion", "uid", "creationTimestamp"):
        created["metadata"].pop(field)
    return created


def gpus(cell: str) -> str | None:
    """The GPUs of a JSON resource-list cell (`{"cpu":"80",...,"nvidia.com/gpu":"10"}`)."""
    return json.loads(cell).get(GPU) if cell else None


def by_name(result: Result) -> dict[str, dict[str, str]]:
    return {row["NAME"]: row for row in rows(result.out)}


def test_simulate_plans_the_reclaim_offline() -> None:
    """`team-a-v100`'s runtime is 5 cards while it uses 10, and the plan takes 5 of its pods
    back."""
    (simulate,), _ = blocks(SECTION)
    executable, *args = simulate.split()
    assert executable == ".venv/bin/elastic-quota", simulate
    done = subprocess.run(
        [str(REPO / executable), *args], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    header = lines[0].split()
    assert header == ["GROUP", "RESOURCE", "MIN", "MAX", "REQUEST", "RUNTIME", "USED"], lines[0]
    table = {
        (words[0], words[1]): dict(zip(header, words, strict=True))
        for words in (line.split() for line in lines)
        if len(words) == len(header) and words[0].endswith("v100")
    }
    team_a = table["team-a-v100", GPU]
    assert (team_a["RUNTIME"], team_a["USED"]) == ("5", "10"), done.stdout
    assert (table["team-b-v100", GPU]["RUNTIME"], table["team-b-v100", GPU]["USED"]) == ("5", "0")
    assert lines[1].startswith(f"Tree v100: cpu 128, memory 1006Gi, {GPU} 10,"), done.stdout
    plan = lines[lines.index("Reclaim (evicted in this order):") + 1 :]
    group, pods = plan[0].strip().split(": ", 1)
    assert group == "team-a-v100", done.stdout
    assert [pod.rstrip("0123456789") for pod in pods.split(", ")] == ["team-a/train-"] * 5
    assert not plan[1].startswith("  "), done.stdout  # no other group loses pods


class Walkthrough:
    """The README's kubectl commands, each played verbatim and judged."""

    def __init__(
        self,
        kubectl: Kubectl,
        tmp: Path,
        *,
        node: Callable[[str, str], dict[str, Any]],
        replaced: float = 20,
    ) -> None:
        self.kubectl, self.tmp = kubectl, tmp
        self.node = node
        """(name, GPU product) -> a GPU node's manifest, as `kubectl create -f` takes it."""
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
        """docs/node-pools.md: a child's tree id is its parent's; the webhook names both ids."""
        spare = {
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
        """Reclaim takes 5 of team A's pods back, and the operator says why on each."""
        # Each eviction is told twice, on the pod and on the group, in two writes: wait for both.
        result = await self.kubectl.until(
            command,
            lambda r: len(rows(r.out)) == 10,
            what="a Reclaimed Event on each of 5 of team A's pods and 5 on their group",
            timeout=30,
        )
        objects = sorted(x["OBJECT"] for x in rows(result.out))
        assert objects[:5] == ["elasticquota/team-a-v100"] * 5, objects
        assert len({o for o in objects[5:] if o.startswith("pod/train-")}) == 5, objects
        for event in rows(result.out):  # the numbers of the plan each eviction was decided on
            assert re.search(
                r"Evicted pod team-a/train-\w+ to return borrowed capacity: group team-a-v100 "
                rf"uses .*, above its runtime .*{GPU} 5, for \d+s",
                event["MESSAGE"],
            ), event
        await self.team_b_waited_for_cards()

    async def team_b_waited_for_cards(self) -> None:
        """Team B's pods waited for cards, not behind the gate: within team B's guarantee, they
        were admitted at once, and bound only once reclaim had freed cards."""
        raise NotImplementedError

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


class EmulatedWalkthrough(Walkthrough):
    """On the emulator, which tells each eviction as it is asked for."""

    def __init__(self, api: ApiServer, kubectl: Kubectl, tmp: Path) -> None:
        super().__init__(kubectl, tmp, node=new_gpu_node)
        self.api = api
        self.evictions: list[tuple[str, int, int, int]] = []
        """At each eviction: the pod's namespace; team B's pods, those admitted, those bound."""
        api.evictions = self.evicting

    def evicting(self, pod: dict[str, Any]) -> None:
        team_b = [
            p["spec"] for p in self.api.objects("pods") if p["metadata"]["namespace"] == "team-b"
        ]
        admitted = sum(not spec.get("schedulingGates") for spec in team_b)
        bound = sum(bool(spec.get("nodeName")) for spec in team_b)
        self.evictions.append((pod["metadata"]["namespace"], len(team_b), admitted, bound))

    async def team_b_waited_for_cards(self) -> None:
        assert [e[0] for e in self.evictions] == ["team-a"] * 5, self.evictions
        _, made, admitted, bound = self.evictions[0]  # at the first eviction
        assert made >= 1 and admitted >= 1 and bound == 0, self.evictions


class NodeWatch:
    """`kubectl get pods -A -w` for the whole story: every node a pod was ever bound to."""

    COLUMNS = "NAME:.metadata.name,NODE:.spec.nodeName,RV:.metadata.resourceVersion"

    def __init__(self, api: ApiServer, kubectl: Kubectl, tmp: Path) -> None:
        self.api, self.kubectl, self.path = api, kubectl, tmp / "watch.txt"
        self.process: asyncio.subprocess.Process | None = None

    async def start(self) -> None:
        """Once it returns, kubectl watches: nothing after is missed."""
        command = f"kubectl get pods -A -w -o custom-columns={self.COLUMNS}"
        watches = self.api.count("watch", "pods")
        with self.path.open("wb") as out:
            self.process = await asyncio.create_subprocess_exec(
                *argv(command), cwd=REPO, env=self.kubectl.env, stdout=out
            )
        await eventually(lambda: self.api.count("watch", "pods") > watches, what="the watch")

    def seen(self) -> list[tuple[str, str, int]]:
        lines = self.path.read_text().splitlines()[1:]
        return [(w[0], w[1], int(w[2])) for w in (line.split() for line in lines) if len(w) == 3]

    async def nodes(self) -> set[str]:
        """The nodes seen, once the watch has caught up with every pod's last write."""
        latest = max(int(p["metadata"]["resourceVersion"]) for p in self.api.objects("pods"))
        await eventually(
            lambda: any(rv >= latest for _, _, rv in self.seen()), what="the watch caught up"
        )
        return {node for _, node, _ in self.seen()}

    async def stop(self) -> None:
        if self.process is not None and self.process.returncode is None:
            self.process.terminate()
            await self.process.wait()


async def test_the_readme_node_pools_walkthrough_through_kubectl(tmp_path: Path) -> None:
    _, walkthrough = blocks(SECTION)
    async with ApiServer() as api:
        api.seed(*(gpu_node(f"{pool}-{i}", product) for pool, product in PRODUCTS for i in (1, 2)))
        client = Client(api.url)
        scheduler, jobs = Scheduler(client), Jobs(client)
        kubectl = Kubectl(api, tmp_path / "user")
        watch = NodeWatch(api, kubectl, tmp_path)
        try:
            async with installed(api, tmp_path, *SETTINGS):
                await scheduler.start()
                await jobs.start()
                await watch.start()
                story = EmulatedWalkthrough(api, kubectl, tmp_path)
                for command in walkthrough:
                    await story.play(command)
                await story.a_node_joins_the_v100_pool()
                # No pod of either team was ever bound to an A100 node.
                assert await watch.nodes() == {"<none>", *V100_NODES, "v100-3"}
                assert api.count("create", "pods", "eviction") == 5
        finally:
            await watch.stop()
            await jobs.stop()
            await scheduler.stop()
            await client.close()
