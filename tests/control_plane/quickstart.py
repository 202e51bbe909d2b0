"""The README's quick start as a story: each of its commands, read out of README.md (so the two
cannot drift), played verbatim through real kubectl and judged on what kubectl shows, as
test_quickstart.py plays it on the real control plane. What cannot run there is replaced, as
close to the real thing as the machine allows:

- `docker build/push`: skipped; the processes run from this checkout.
- `kubectl port-forward` + `curl .../metrics | grep -E ...`: the operator's probe port (the
  metrics Service's target) scraped directly, filtered with the README's own grep pattern.
"""

from __future__ import annotations

import json
import re
import shlex
from typing import Any, Protocol

import aiohttp
import yaml

from tests import readme
from tests.control_plane.product import Process
from tests.kubectl import Kubectl, Result, rows


class Requests(Protocol):
    """How many requests of a kind the API server was asked (its audit log)."""

    def count(self, verb: str, resource: str, subresource: str = "") -> int: ...


SECTION = "## Quick start in a cluster"
OVER_QUOTA = "kubectl get pods -n team-a -l quota.scheduling.koordinator.sh/capacity=over-quota"


def commands() -> list[str]:
    """The section's commands, in order: continuation lines joined, comments kept."""
    return readme.commands(SECTION)


def cpu(cell: str) -> str | None:
    """The cpu of a JSON resource-list cell (`{"cpu":"2500m",...}`), None if empty."""
    return json.loads(cell).get("cpu") if cell else None


def row(result: Result, name: str) -> dict[str, str]:
    (found,) = [r for r in rows(result.out) if r["NAME"] == name]
    return found


async def scrape(process: Process, grep: str) -> list[str]:
    """`curl -s localhost:8080/metrics | grep -E PATTERN`, on the operator's probe port."""
    pattern = shlex.split(grep)[-1]
    async with aiohttp.ClientSession() as session, session.get(process.probes + "/metrics") as r:
        text = await r.text()
    return [line for line in text.splitlines() if re.search(pattern, line)]


class QuickStart:
    """Each README command, played and judged."""

    def __init__(self, api: Requests, kubectl: Kubectl, operator: Process) -> None:
        self.api, self.kubectl, self.operator = api, kubectl, operator
        self.watch: Any = None

    async def play(self, command: str) -> None:
        if command.startswith("kubectl get eq -A -w"):
            # Step 4's watch runs while the reclaim happens: its own block.
            return await self.reclaim_seen_through_the_watch(command)
        if command.startswith("kubectl port-forward"):
            return  # see scrape()
        if command.startswith("curl "):
            return await self.metrics(command.split("|", 1)[1])
        assert command.startswith("kubectl "), (
            f"a quick start command this test cannot play: {command}"
        )
        check = getattr(self, "_" + re.sub(r"\W+", "_", command.split("#")[0].strip()), None)
        assert check is not None, f"no claim checked for the README command {command!r}"
        await check(command)

    async def team_b_is_done(self, *, timeout: float = 20) -> None:
        """After the README: team-b gives its guarantee back, and the waiting replacement is
        admitted once team-a has room."""
        await self.kubectl.run("kubectl delete -f examples/quickstart/reclaim.yaml")
        await self.kubectl.until(
            "kubectl get pods -n team-a",
            lambda r: [x["STATUS"] for x in rows(r.out)] == ["Running"] * 5,
            what="team-a's five pods running, none gated",
            timeout=timeout,
        )
        await self.kubectl.until(
            "kubectl get eq -A",
            lambda r: row(r, "team-a")["WAITING"] == "",
            what="the WAITING column cleared",
        )

    # Step 1.

    async def _kubectl_get_eq_n_koordinator_system(self, command: str) -> None:
        built_in = (
            "koordinator-root-quota",
            "koordinator-system-quota",
            "koordinator-default-quota",
        )
        await self.kubectl.until(
            command,
            lambda r: {row["NAME"] for row in rows(r.out)} == set(built_in),
            what="the root, system and default groups, made by the operator",
        )

    # Step 2.

    async def _kubectl_apply_f_examples_quickstart_tree_yaml(self, command: str) -> None:
        result = await self.kubectl.run(command)
        for name in ("research", "team-a", "team-b"):
            assert f"elasticquota.scheduling.sigs.k8s.io/{name} created" in result.out

    # Step 3.

    async def _kubectl_apply_f_examples_quickstart_borrow_yaml(self, command: str) -> None:
        assert "deployment.apps/batch created" in (await self.kubectl.run(command)).out

    async def _kubectl_get_eq_A(self, command: str) -> None:
        """team-a's RUNTIME becomes cpu 2500m (within the department's max), USED cpu 2500m."""
        result = await self.kubectl.until(
            command,
            lambda r: any(
                (x["NAME"], cpu(x["RUNTIME"]), cpu(x["USED"])) == ("team-a", "2500m", "2500m")
                for x in rows(r.out)
            ),
            what="team-a's RUNTIME and USED at cpu 2500m",
        )
        assert row(result, "team-a")["PARENT"] == "research"
        assert cpu(row(result, "research")["MAX"]) == "3"

    async def _kubectl_get_eq_team_a_n_team_a_o_yaml(self, command: str) -> None:
        """The `request` annotation holds what its pods ask for."""
        quota = yaml.safe_load((await self.kubectl.run(command)).out)
        request = json.loads(
            quota["metadata"]["annotations"]["quota.scheduling.koordinator.sh/request"]
        )
        assert request["cpu"] == "2500m"

    async def _kubectl_get_pods_n_team_a_l_quota_scheduling_koordinator_sh_capacity_over_quota(
        self, command: str
    ) -> None:
        """The pods running on borrowed capacity: 2.5 CPUs used, 1 guaranteed, 500m each."""
        result = await self.kubectl.until(
            command, lambda r: len(rows(r.out)) == 3, what="three pods over quota"
        )
        assert {x["STATUS"] for x in rows(result.out)} == {"Running"}
        assert all(x["NAME"].startswith("batch-") for x in rows(result.out))

    # Step 4.

    async def _kubectl_apply_f_examples_quickstart_reclaim_yaml(self, command: str) -> None:
        assert "deployment.apps/serve created" in (await self.kubectl.run(command)).out

    async def reclaim_seen_through_the_watch(self, command: str) -> None:
        """team-a's runtime drops to cpu 2, below what it uses."""
        async with self.kubectl.streaming(command) as watch:

            def dropped(line: str) -> bool:
                blobs = re.findall(r"\{\S*\}", line)  # MIN MAX RUNTIME USED
                return line.startswith("team-a ") and [cpu(b) for b in blobs[2:]] == ["2", "2500m"]

            await watch.line_where(dropped)

    async def _kubectl_get_events_n_team_a_field_selector_reason_Reclaimed(
        self, command: str
    ) -> None:
        """After the reclaim delay, one borrowed pod is evicted and the operator says why, on the
        pod and on the ElasticQuota."""
        result = await self.kubectl.until(
            command,
            lambda r: len(rows(r.out)) == 2,
            what="the Reclaimed Events on the pod and on the ElasticQuota",
            timeout=30,
        )
        objects = {x["OBJECT"].split("/")[0]: x for x in rows(result.out)}
        assert set(objects) == {"pod", "elasticquota"}, result
        assert objects["elasticquota"]["OBJECT"] == "elasticquota/team-a"
        assert "group team-a uses cpu 2500m" in objects["elasticquota"]["MESSAGE"]
        assert objects["pod"]["OBJECT"].startswith("pod/batch-")
        assert self.api.count("create", "pods", "eviction") == 1
        await self.the_replacement_waits()

    async def the_replacement_waits(self) -> None:
        """The Deployment recreates the pod and it waits behind the gate: `kubectl describe pod`
        shows why, and the WAITING column counts it."""
        pods = await self.kubectl.until(
            "kubectl get pods -n team-a",
            lambda r: [x["STATUS"] for x in rows(r.out)].count("SchedulingGated") == 1,
            what="the replacement, gated",
        )
        (waiting,) = [x["NAME"] for x in rows(pods.out) if x["STATUS"] == "SchedulingGated"]
        told = "waiting for quota: team-a runtime cpu 2, used or admitted 2, this pod 500m"
        await self.kubectl.until(
            f"kubectl describe pod {waiting} -n team-a",
            lambda r: "WaitingForQuota" in r.out and told in r.out,
            what="the WaitingForQuota Event in kubectl describe",
        )
        await self.kubectl.until(
            "kubectl get eq -A",
            lambda r: row(r, "team-a")["WAITING"] == "1",
            what="team-a's WAITING column at 1",
        )

    # Step 5.

    async def metrics(self, grep: str) -> None:
        lines = await scrape(self.operator, grep)
        team_a_cpu = [
            line
            for line in lines
            if line.startswith("elastic_quota_group_runtime{")
            and 'group="team-a"' in line
            and 'resource="cpu"' in line
        ]
        # Canonical units: cpu in milli-cores.
        assert [float(line.rsplit(" ", 1)[1]) for line in team_a_cpu] == [2000.0], lines
        evictions = [line for line in lines if line.startswith("elastic_quota_evictions_total")]
        assert sum(float(line.rsplit(" ", 1)[1]) for line in evictions) == 1.0, lines
