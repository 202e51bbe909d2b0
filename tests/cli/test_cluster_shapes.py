"""`elastic-quota simulate` on clusters as `kubectl get -o json` dumps them (tests/realistic/):
the product's own pods, Koordinator's default group, partial weights, pod-level resources and
YAML with empty maps (issue 19)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.cli.test_simulate import simulate
from tests.realistic import (
    P,
    deployment_pod,
    elastic_quota,
    koordinator_default_quota,
    kubectl_list,
    namespace,
    node,
    product_pods,
)

SYSTEM, DEFAULT = "koordinator-system-quota", "koordinator-default-quota"
Report = Callable[..., dict[str, Any]]


@pytest.fixture
def report(tmp_path: Path) -> Report:
    """`simulate -o json` on `objects`, dumped as one `kubectl get -o json` list."""

    def run(*objects: dict[str, Any], args: tuple[str, ...] = ()) -> dict[str, Any]:
        path = tmp_path / "cluster.json"
        path.write_text(json.dumps(kubectl_list(*objects), indent=4))
        result = simulate("-f", str(path), "-o", "json", *args)
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout)  # type: ignore[no-any-return]

    return run


def pods(namespace: str, deployment: str, count: int, cpu: str) -> list[dict[str, Any]]:
    requests = {"cpu": cpu, "memory": "256Mi"}
    return [deployment_pod(namespace, deployment, i, requests=requests) for i in range(count)]


def quick_start() -> list[dict[str, Any]]:
    """The quick start before issue 19: the department `research` in the chart's namespace,
    team-a borrowing (5 pods of 500m), team-b using its guarantee (2 pods of 500m)."""
    teams = [
        elastic_quota(team, team, parent="research", min={"cpu": "1"}, max={"cpu": "3"})
        for team in ("team-a", "team-b")
    ]
    return [
        *(namespace(name) for name in ("koordinator-system", "team-a", "team-b")),
        elastic_quota(
            "research", "koordinator-system", is_parent=True, min={"cpu": "2"}, max={"cpu": "3"}
        ),
        *teams,
        *pods("team-a", "batch", 5, "500m"),
        *pods("team-b", "serve", 2, "500m"),
        node("worker-1", cpu="8"),
        node("worker-2", cpu="8"),
    ]


def keys(objects: list[dict[str, Any]]) -> list[str]:
    return [f"{o['metadata']['namespace']}/{o['metadata']['name']}" for o in objects]


# 1. The product's own pods and the namespace fallback


def test_the_products_own_pods_belong_to_the_system_group(report):
    own = product_pods()
    result = report(*quick_start(), *own)
    for key in keys(own):
        assert result["pods"][key] == {"group": SYSTEM, "capacity": None}, key
        assert not any(key in planned for planned in result["reclaim"].values())
        assert not any(key in problem for problem in result["problems"])


def test_system_namespaces_given_replace_the_default(report):
    own = product_pods()
    monitoring = deployment_pod("monitoring", "prometheus", requests={"cpu": "1"})
    result = report(*quick_start(), *own, monitoring, args=("--system-namespaces", "monitoring"))
    assert result["pods"][keys([monitoring])[0]]["group"] == SYSTEM
    assert all(result["pods"][key]["group"] != SYSTEM for key in keys(own))


def test_the_namespace_fallback_never_picks_a_parent_group(report):
    research = elastic_quota(
        "research", "research", is_parent=True, min={"cpu": "2"}, max={"cpu": "4"}
    )
    team = elastic_quota("team-x", "team-x", parent="research", min={"cpu": "1"}, max={"cpu": "4"})
    tool = deployment_pod("research", "notebook", requests={"cpu": "500m"})
    result = report(research, team, tool, node("worker-1"))
    assert result["pods"][keys([tool])[0]]["group"] == DEFAULT


def test_a_parent_group_owning_a_namespace_with_pods_is_a_problem(report):
    engineering = elastic_quota(
        "engineering",
        "quotas",
        is_parent=True,
        min={"cpu": "4"},
        max={"cpu": "8"},
        annotations={P + "namespaces": '["tools"]'},
    )
    team = elastic_quota(
        "team-y", "team-y", parent="engineering", min={"cpu": "2"}, max={"cpu": "8"}
    )
    tool = deployment_pod("tools", "dashboard", requests={"cpu": "500m"})
    result = report(engineering, team, tool, node("worker-1"))
    (name,) = keys([tool])
    assert any(name in p and "engineering" in p for p in result["problems"]), result["problems"]


# 2. Koordinator's default group is not a limit


def test_koordinators_default_group_has_no_max_and_no_reclaim(report):
    busy = [deployment_pod("misc", "crawler", i, requests={"cpu": "3"}) for i in range(4)]
    result = report(
        koordinator_default_quota(),
        *busy,
        node("worker-1"),
        args=("--capacity", "cpu=4,memory=8Gi"),
    )
    default = result["groups"][DEFAULT]
    assert default["max"] is None
    assert default["runtime"] is None
    assert DEFAULT not in result["reclaim"]
    assert {result["pods"][key]["group"] for key in keys(busy)} == {DEFAULT}


# 3. A partial shared-weight takes max's value for the resources it leaves out


def test_a_partial_shared_weight_lets_the_group_borrow_what_it_leaves_out(report):
    limits = {"max": {"cpu": "100", "memory": "100Gi"}, "min": {"cpu": "10", "memory": "10Gi"}}
    vision = elastic_quota(
        "vision", "vision", annotations={P + "shared-weight": '{"cpu":"50"}'}, **limits
    )
    idle = elastic_quota("speech", "speech", **limits)
    work = [
        deployment_pod("vision", "trainer", i, requests={"cpu": "1", "memory": "8Gi"})
        for i in range(6)
    ]
    result = report(vision, idle, *work, args=("--capacity", "cpu=100,memory=100Gi"))
    group = result["groups"]["vision"]
    assert group["request"] == {"cpu": "6", "memory": "48Gi"}
    assert group["runtime"] == {"cpu": "6", "memory": "48Gi"}
    assert not result["reclaim"].get("vision")


# 7. Pod-level resources


@pytest.mark.parametrize(
    ("containers", "pod_level", "overhead", "counted"),
    [
        (None, {"cpu": "2", "memory": "1Gi"}, None, {"cpu": "2", "memory": "1Gi"}),
        (
            {"cpu": "500m", "memory": "256Mi"},
            {"cpu": "2"},
            {"cpu": "100m", "memory": "64Mi"},
            {"cpu": "2100m", "memory": "320Mi"},
        ),
    ],
    ids=["pod-level only", "pod-level wins per resource, overhead added"],
)
def test_pod_level_requests_count(report, containers, pod_level, overhead, counted):
    lab = elastic_quota("lab", "lab", max={"cpu": "10", "memory": "10Gi"})
    runner = deployment_pod(
        "lab", "runner", requests=containers, pod_requests=pod_level, overhead=overhead
    )
    group = report(lab, runner, node("worker-1"))["groups"]["lab"]
    assert group["request"] == counted
    assert group["used"] == counted


# 8. Empty maps in YAML


def test_yaml_with_empty_labels_min_and_annotations_is_read(tmp_path):
    path = tmp_path / "quota.yaml"
    path.write_text(
        "apiVersion: scheduling.sigs.k8s.io/v1alpha1\n"
        "kind: ElasticQuota\n"
        "metadata:\n"
        "  name: team-z\n"
        "  namespace: team-z\n"
        "  labels:\n"
        "  annotations:\n"
        "spec:\n"
        "  min:\n"
        "  max:\n"
        "    cpu: '4'\n"
        "---\n"
        "apiVersion: v1\n"
        "kind: Pod\n"
        "metadata:\n"
        "  name: web-0\n"
        "  namespace: team-z\n"
        "  labels:\n"
        "spec:\n"
        "  nodeName: worker-1\n"
        "  containers:\n"
        "    - name: web\n"
        "      image: nginx\n"
        "      resources:\n"
        "        requests: {cpu: '1'}\n"
    )
    result = simulate("-f", str(path), "--capacity", "cpu=8", "-o", "json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["groups"]["team-z"]["min"] == {}
    assert report["groups"]["team-z"]["used"] == {"cpu": "1"}
