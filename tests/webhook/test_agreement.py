"""One home per rule: what the webhook refuses over HTTPS, `elastic-quota simulate` reports in
the same words for the same objects already in a cluster (and the operator reports the engine's
problems, the same list). And both take the default group's settings from the same flags."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cli.test_simulate import simulate
from tests.manifests import P, pod, quota
from tests.webhook.conftest import cluster_objects, review, start_webhook, stop_webhook
from tests.webhook.test_gating import mutate

pytestmark = pytest.mark.asyncio(loop_scope="module")

RES = {"cpu": 200, "memory": "200Gi"}
RULES = {
    "min above max": quota("x", min={"cpu": 300}, max=RES),
    "min not in max": quota("x", min={"gpu": 1}, max=RES),
    "negative": quota("x", parent="dept-a", max={"cpu": -1, "memory": "1Gi"}),
    "parent is no parent": quota("x", parent="solo", max=RES),
    "keys differ from the parent's": quota("x", parent="dept-a", max={"cpu": 10}),
    "namespace bound twice": quota("x", parent="dept-a", max=RES, namespaces=["shared-1"]),
    "parent labels disagree": quota(
        "x", parent="dept-a", max=RES, labels={P + "parent-quota-name": "dept-b"}
    ),
}


def problems(tmp_path: Path, *objects: dict[str, Any], flags: tuple[str, ...] = ()) -> list[str]:
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump_all([*cluster_objects(), *objects]))
    result = simulate("-f", str(path), "-o", "json", *flags)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)["problems"]  # type: ignore[no-any-return]


@pytest.mark.parametrize("rule", sorted(RULES))
async def test_the_webhook_and_simulate_word_a_rule_the_same(webhook, tmp_path, rule):
    obj = RULES[rule]
    answer = await webhook.review(review("CREATE", new=obj))
    assert answer["allowed"] is False
    reported = [p for p in problems(tmp_path, obj) if p.startswith("ElasticQuota quotas/x:")]
    assert answer["status"]["message"] == "; ".join(reported)


async def test_the_default_groups_flags_reach_the_webhook_and_simulate(api, certificates, tmp_path):
    bounded = await start_webhook(tmp_path, str(api.url), certificates, "--default-max", "cpu=10")
    try:  # the cluster's default group object has a max of its own: take it away first
        raw = pod("p", namespace="nowhere", node=None, cpu="1")
        assert await mutate(bounded, raw) != []
    finally:
        await stop_webhook(bounded)
    path = tmp_path / "default.yaml"
    path.write_text(yaml.safe_dump_all([pod("p", namespace="nowhere", cpu="1")]))
    result = simulate(
        "-f", str(path), "--capacity", "cpu=100", "-o", "json", "--default-max", "cpu=10"
    )
    default = json.loads(result.stdout)["groups"]["koordinator-default-quota"]
    assert default["max"] == {"cpu": "10"} and default["runtime"] == {"cpu": "10"}
