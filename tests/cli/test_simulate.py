"""`elastic-quota simulate` through a subprocess, as a user runs it."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from benchmarks import cluster as generated
from tests.cli.running import cli
from tests.manifests import node, pod, quota
from tests.paths import REPO

EXAMPLES = [str(REPO / "examples" / f) for f in ("quotas.yaml", "nodes.yaml", "workloads.yaml")]
EXAMPLE_ARGS = [arg for path in EXAMPLES for arg in ("-f", path)]


def simulate(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return cli("simulate", *args, stdin=stdin)


def write(tmp_path: Path, name: str, *objects: dict) -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump_all(objects))
    return str(path)


SEED = [
    quota("a", min={"cpu": "10m"}, max={"cpu": "1"}, weight={"cpu": "40m"}),
    quota("b", min={"cpu": "15m"}, max={"cpu": "1"}, weight={"cpu": "60m"}),
    quota("c", min={"cpu": "20m"}, max={"cpu": "1"}, weight={"cpu": "50m"}),
    quota("d", min={"cpu": "15m"}, max={"cpu": "1"}, weight={"cpu": "80m"}),
    pod("a-0", quota="a", cpu="5m"),
    pod("b-0", quota="b", cpu="20m"),
    pod("c-0", quota="c", cpu="40m"),
    pod("d-0", quota="d", cpu="70m", priority=1),
    pod("d-1", quota="d", cpu="10m", node=None),
    node("n1", cpu="60m"),
    node("n2", cpu="40m"),
]


def test_json_output_has_the_documented_shape_and_the_seeds_numbers(tmp_path):
    result = simulate("-f", write(tmp_path, "seed.yaml", *SEED), "-o", "json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    keys = {"capacity", "groups", "pods", "waiting", "gangs", "pools", "reclaim", "preemption"}
    keys.add("problems")
    assert set(report) == keys
    assert report["capacity"] == {"cpu": "100m"}
    assert set(report["groups"]["a"]) == {
        "namespace",
        "parent",
        "isParent",
        "min",
        "max",
        "sharedWeight",
        "request",
        "runtime",
        "used",
        "lendable",
        "lent",
        "borrowed",
        "borrowingLimit",
    }
    # a asks 5m of its min 10m: it may lend all of it, and lends 5m, which c and d borrow
    assert report["groups"]["a"]["lendable"] == {"cpu": "10m"}
    assert report["groups"]["a"]["lent"] == {"cpu": "5m"}
    assert report["groups"]["d"]["borrowed"] == {"cpu": "55m"}
    assert report["groups"]["d"]["borrowingLimit"] is None
    runtime = {name: report["groups"][name]["runtime"]["cpu"] for name in "abcd"}
    # d's pending pod raises its request to 80m, still above what the split can give it
    assert runtime == {"a": "5m", "b": "20m", "c": "35m", "d": "40m"}
    assert report["groups"]["d"]["request"] == {"cpu": "80m"}
    assert report["groups"]["d"]["used"] == {"cpu": "70m"}
    assert report["groups"]["koordinator-root-quota"]["parent"] is None
    assert report["pods"]["apps/d-1"] == {"group": "d", "capacity": None}
    assert report["pods"]["apps/a-0"] == {"group": "a", "capacity": "in-quota"}
    assert report["pods"]["apps/d-0"] == {"group": "d", "capacity": "over-quota"}
    assert report["problems"] == []
    assert report["waiting"] == report["gangs"] == {}  # d-1 is pending, but not gated


def test_the_seed_example_through_files(tmp_path):
    objects = [o for o in SEED if o["metadata"]["name"] != "d-1"]
    report = json.loads(simulate("-f", write(tmp_path, "s.yaml", *objects), "-o", "json").stdout)
    runtime = {name: report["groups"][name]["runtime"]["cpu"] for name in "abcd"}
    assert runtime == {"a": "5m", "b": "20m", "c": "35m", "d": "40m"}
    # c and d run above their runtime: their least important pods are reclaimed
    assert report["reclaim"] == {"c": ["apps/c-0"], "d": ["apps/d-0"]}


def test_reads_json_lists_from_standard_input_and_pod_lists_without_item_kinds():
    pods = {
        "kind": "PodList",
        "items": [{k: v for k, v in pod("p", cpu="1").items() if k != "kind"}],
    }
    document = {
        "kind": "List",
        "items": [quota("apps", namespace="apps", max={"cpu": 2}), node("n", cpu="4"), pods],
    }
    result = simulate("-f", "-", "-o", "json", stdin=json.dumps(document))
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["pods"] == {"apps/p": {"group": "apps", "capacity": "over-quota"}}
    assert report["groups"]["apps"]["used"] == {"cpu": "1"}


def test_capacity_flag_replaces_the_nodes_total(tmp_path):
    path = write(
        tmp_path,
        "c.yaml",
        quota("t", max={"cpu": 100}),
        pod("p", quota="t", cpu="50"),
        node("n", cpu="8"),
    )
    report = json.loads(
        simulate("-f", path, "--capacity", "cpu=20,memory=1Gi", "-o", "json").stdout
    )
    assert report["capacity"] == {"cpu": "20", "memory": "1Gi"}
    assert report["groups"]["t"]["runtime"] == {"cpu": "20"}


def test_min_scaling_can_be_switched_off(tmp_path):
    path = write(
        tmp_path,
        "m.yaml",
        quota("a", min={"cpu": 8}, max={"cpu": 8}),
        quota("b", min={"cpu": 8}, max={"cpu": 8}),
        node("n", cpu="8"),
        pod("pa", quota="a", cpu="8", node=None),
        pod("pb", quota="b", cpu="8", node=None),
    )
    scaled = json.loads(simulate("-f", path, "-o", "json").stdout)["groups"]
    kept = json.loads(simulate("-f", path, "--no-min-scaling", "-o", "json").stdout)["groups"]
    assert scaled["a"]["runtime"] == scaled["b"]["runtime"] == {"cpu": "4"}
    assert kept["a"]["runtime"] == kept["b"]["runtime"] == {"cpu": "8"}


def test_examples_simulate_in_every_format():
    report = json.loads(simulate(*EXAMPLE_ARGS, "-o", "json").stdout)
    tree = simulate(*EXAMPLE_ARGS, "-o", "tree")
    table = simulate(*EXAMPLE_ARGS)
    assert tree.returncode == table.returncode == 0
    for name in report["groups"]:
        assert name in tree.stdout and name in table.stdout
    assert max(len(line) for line in tree.stdout.splitlines()) <= 80
    assert max(len(line) for line in table.stdout.splitlines()) <= 100
    # the example shows borrowing taken back: ml's reclaimed pods are all over-quota
    assert report["reclaim"]["ml"]
    assert all(report["pods"][key]["capacity"] == "over-quota" for key in report["reclaim"]["ml"])
    assert any(p["capacity"] == "in-quota" for p in report["pods"].values())
    assert report["pods"]["kube-system/coredns-0"]["group"] == "koordinator-system-quota"
    assert "ml/old-job-0" not in report["pods"]  # finished pods count nowhere


def test_the_tree_of_a_108_group_cluster_fits_80_columns_and_keeps_every_pod(tmp_path):
    """3 departments x 5 teams x 6 sub-teams of benchmarks/cluster.py, 900 pods on 10 nodes: the
    mins are scaled down and the reclaim plans list up to four pods of 57 characters each."""
    shape = {"departments": 3, "teams": 5, "subteams": 6}
    objects = generated.quotas(**shape) + generated.pods(**shape) + generated.nodes(10)
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}))
    report = json.loads(simulate("-f", str(path), "-o", "json").stdout)
    tree = simulate("-f", str(path), "-o", "tree")
    assert tree.returncode == 0, tree.stderr
    lines = tree.stdout.splitlines()
    assert sum(name.startswith("dept-") for name in report["groups"]) == 108
    assert [line for line in lines if len(line) > 80] == []
    # the plan as the tree prints it, each group's continuation lines joined back on
    start = lines.index("Reclaim (evicted in this order):") + 1
    end = next(i for i in range(start, len(lines)) if not lines[i].startswith("  "))
    plan = lines[start:end]
    entries: list[str] = []
    for line in plan:
        if line.startswith("   "):
            entries[-1] += " " + line.strip()
        else:
            entries.append(line.strip())
    assert len(entries) < len(plan)  # some plans took more than a line
    printed = {
        group: [] if pods.startswith("nothing") else pods.split(", ")
        for group, pods in (entry.split(": ", 1) for entry in entries)
    }
    assert printed == report["reclaim"]
    assert sum(map(len, printed.values())) > 30


def test_the_plan_names_the_pods_a_waiting_pod_would_take_the_place_of(tmp_path):
    """A group full of priority-1 pods and a waiting priority-10 pod: the two most recently
    started go for it, in the JSON and in the tree."""
    objects = [
        quota("team", min={"cpu": "4"}, max={"cpu": "4"}),
        *(
            pod(f"low-{i}", quota="team", cpu="1", priority=1, start=f"2026-01-01T00:0{i}:00Z")
            for i in range(4)
        ),
        pod("urgent", quota="team", cpu="2", priority=10, node=None, gated=True),
        node("n1", cpu="100"),
    ]
    path = write(tmp_path, "team.yaml", *objects)
    report = json.loads(simulate("-f", path, "-o", "json").stdout)
    assert report["preemption"] == {
        "team": {"for": ["apps/urgent"], "priority": 10, "evicted": ["apps/low-3", "apps/low-2"]}
    }
    lines = simulate("-f", path, "-o", "tree").stdout.splitlines()
    start = lines.index("Preemption (evicted in this order, for what waits first in the group):")
    assert lines[start + 1] == (
        "  team, for pod apps/urgent of priority 10: apps/low-3, apps/low-2"
    )


def test_a_directory_reads_its_yaml_and_json_files(tmp_path):
    write(tmp_path, "a.yaml", quota("t", max={"cpu": 4}))
    (tmp_path / "b.json").write_text(json.dumps(pod("p", quota="t", cpu="1")))
    (tmp_path / "notes.txt").write_text("not a manifest")
    report = json.loads(simulate("-f", str(tmp_path), "--capacity", "cpu=4", "-o", "json").stdout)
    assert report["pods"] == {"apps/p": {"group": "t", "capacity": "over-quota"}}


def test_other_kinds_are_ignored_with_a_note(tmp_path):
    path = write(
        tmp_path,
        "mixed.yaml",
        quota("t", max={"cpu": 1}),
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}},
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}},
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s2"}},
    )
    result = simulate("-f", path, "-o", "json")
    assert result.returncode == 0
    assert "ignored 1 object(s) of kind Deployment" in result.stderr
    assert "ignored 2 object(s) of kind Service" in result.stderr


def test_problems_are_reported_not_fatal(tmp_path):
    path = write(tmp_path, "p.yaml", quota("orphan", namespace="x", parent="ghost"))
    result = simulate("-f", path)
    assert result.returncode == 0
    assert "Problems:" in result.stdout
    assert "ElasticQuota x/orphan" in result.stdout and "'ghost' does not exist" in result.stdout


def test_simulate_reports_what_the_webhook_would_deny(tmp_path):
    path = write(
        tmp_path,
        "rules.yaml",
        quota("dept", is_parent=True, min={"cpu": 10}, max={"cpu": 20}),
        quota("a", parent="dept", min={"cpu": 8}, max={"cpu": 20}),
        quota("b", parent="dept", min={"cpu": 30}, max={"cpu": 20}),
    )
    report = json.loads(simulate("-f", path, "-o", "json").stdout)
    assert report["problems"] == [
        "ElasticQuota quotas/b: spec.min.cpu: 30 exceeds spec.max.cpu 20",
        "ElasticQuota quotas/dept: spec.min.cpu: 10 is below its children's min 38",
    ]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            yaml.safe_dump(quota("ml", namespace="team-a", min={"cpu": "lots"})),
            "ElasticQuota team-a/ml: spec.min: 'lots': not a Kubernetes quantity (resource cpu)",
        ),
        (
            yaml.safe_dump(pod("web-0", namespace="shop", memory="1 Gi")),
            "Pod shop/web-0: spec.containers[0].resources.requests: '1 Gi'",
        ),
        ("kind: [unclosed", "invalid YAML"),
        ('{"kind": "List", "items": [', "invalid JSON at line 1"),
        ("- just\n- a list\n", "expected a Kubernetes object, found str"),
    ],
)
def test_unreadable_input_exits_1_naming_file_object_and_field(tmp_path, content, message):
    path = tmp_path / "bad.yaml"
    path.write_text(content)
    result = simulate("-f", str(path))
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.startswith(f"elastic-quota: error: {path}: ")
    assert message in result.stderr


def test_missing_file_exits_1():
    result = simulate("-f", "/nonexistent/cluster.yaml")
    assert result.returncode == 1
    assert "/nonexistent/cluster.yaml: cannot read: No such file or directory" in result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "the following arguments are required: -f/--filename"),
        (("-f", "x", "-o", "xml"), "invalid choice: 'xml'"),
        (("-f", "x", "--capacity", "cpu"), "'cpu': expected RESOURCE=QUANTITY"),
        (("-f", "x", "--capacity", "cpu=lots"), "'lots': not a Kubernetes quantity"),
    ],
)
def test_bad_usage_exits_2(args, message):
    result = simulate(*args)
    assert result.returncode == 2
    assert message in result.stderr


def test_a_resource_the_cluster_lacks_keeps_its_min_at_the_root(tmp_path):
    """Min scaling at the root covers the resources of the cluster's total only (Koordinator,
    koordinator-semantics.md 2.8): a GPU min on a cluster without GPU nodes stays as written."""
    res = {"cpu": "8", "nvidia.com/gpu": "8"}
    objects = [
        quota("ml", namespace="ml", min={"cpu": "4", "nvidia.com/gpu": "4"}, max=res),
        quota("web", namespace="web", min={"cpu": "4"}, max={"cpu": "8"}),
        pod("train", namespace="ml", cpu="1", nvidia_com_gpu="1"),
        node("n1", cpu="4"),  # less cpu than the mins ask: cpu is scaled, the GPU is not
    ]
    result = simulate("-f", write(tmp_path, "gpu.yaml", *objects), "-o", "json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["pods"]["ml/train"]["capacity"] == "in-quota"


def test_the_table_reads_in_people_s_units_and_marks_scaled_mins():
    table = simulate(*EXAMPLE_ARGS).stdout
    rows = {tuple(line.split()[:2]): line.split()[2:] for line in table.splitlines() if line}
    # engineering's min 32 cpu, 128Gi is scaled to the root's total, 47.4 cpu once the system
    # and default groups' use is taken off the 48 of the nodes
    assert rows["engineering", "cpu"] == ["32*", "48", "42", "31600m", "39"]
    assert rows["engineering", "memory"] == ["128Gi*", "192Gi", "160Gi", "~127.3Gi", "146Gi"]
    assert rows["koordinator-system-quota", "memory"] == ["-", "∞", "70Mi", "∞", "70Mi"]
    assert "  engineering: cpu 32 to 31600m, memory 128Gi to ~127.3Gi" in table
    assert not re.search(r"\d{7}", table)  # no raw byte counts
    for symbol in ("∞", "-", "~", "*"):
        assert f" {symbol} " in table.splitlines()[-1]  # the Symbols line explains each
