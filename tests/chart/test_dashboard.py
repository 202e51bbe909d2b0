"""The Grafana dashboard the chart ships: a ConfigMap for Grafana's sidecar, whose every query
names a metric the operator or the webhook exports (their /metrics pages, as served)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from eq_engine import GroupStatus
from eq_operator.metrics import Metrics as OperatorMetrics
from eq_webhook.metrics import Metrics as WebhookMetrics
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from scripts.dashboard_queries import Call, Parser, Selector, Sum
from tests.chart.rendering import find, render

_SUFFIXES = ("_bucket", "_sum", "_count", "_total", "_created")


def exported() -> set[str]:
    """Every series name the two /metrics pages can carry (their `# TYPE` families)."""
    names = set()
    for registry in (OperatorMetrics().registry, WebhookMetrics().registry):
        page = generate_latest(registry).decode()
        for family in re.findall(r"^# TYPE (\S+) \S+$", page, re.MULTILINE):
            names.add(family)
            names.update(family + suffix for suffix in _SUFFIXES)
    return names


def labels() -> dict[str, set[str]]:
    """The labels of each series of the operator's /metrics once every group series has a
    sample: one group of a node pool's tree, borrowing cpu, lending memory, waiting and
    reclaimed."""
    metrics = OperatorMetrics()
    quota = {"cpu": 2000, "memory": 4}
    status = GroupStatus(
        name="train",
        namespace="ml",
        parent="gpu",
        is_parent=False,
        min=quota,
        max=quota,
        shared_weight=quota,
        request={"cpu": 3000, "memory": 1},
        runtime=quota,
        used={"cpu": 3000, "memory": 1},
        effective_min=quota,
        non_preemptible_request={},
        non_preemptible_used={},
        tree="gpu",
    )
    metrics.groups = lambda: [status]
    metrics.publish_waiting({"train": 1}, {"train": 1})
    metrics.evictions.labels("train", "gpu", "evicted").inc()
    metrics.gang_evictions.labels("train", "gpu").inc()
    page = generate_latest(metrics.registry).decode()
    found: dict[str, set[str]] = {}
    for family in text_string_to_metric_families(page):
        for sample in family.samples:
            found.setdefault(sample.name, set()).update(sample.labels)
    return found


def selectors(expr: Any) -> Iterator[Selector]:
    if isinstance(expr, Selector):
        yield expr
    elif isinstance(expr, Sum):
        yield from selectors(expr.expr)
    elif isinstance(expr, Call):
        for arg in expr.args:
            yield from selectors(arg)


def dashboard() -> dict[str, Any]:
    configmap = find(render("metrics.dashboard.enabled=true"), "ConfigMap")
    loaded: dict[str, Any] = json.loads(configmap["data"]["elastic-quota.json"])
    return loaded


def test_the_dashboard_is_a_configmap_for_grafanas_sidecar():
    assert not [o for o in render() if o["metadata"]["name"].endswith("-dashboard")]
    configmap = find(render("metrics.dashboard.enabled=true"), "ConfigMap")
    assert configmap["metadata"]["labels"]["grafana_dashboard"] == "1"
    dashboard = json.loads(configmap["data"]["elastic-quota.json"])
    assert dashboard["uid"] == "elastic-quota" and len(dashboard["panels"]) >= 10


def test_every_query_names_a_metric_the_product_exports():
    shown = dashboard()
    queries = [t["expr"] for p in shown["panels"] for t in p["targets"]]
    queries += [v["query"] for v in shown["templating"]["list"] if v["type"] == "query"]
    names = exported()
    for query in queries:
        named = set(re.findall(r"\b(elastic_quota_[a-z_]+)", query))
        assert named, query
        assert named <= names, f"{query}: {sorted(named - names)} not exported"


def test_every_group_panel_selects_the_tree_on_labels_its_metric_carries():
    shown = dashboard()
    variables = {v["name"]: v for v in shown["templating"]["list"]}
    assert list(variables) == ["datasource", "resource", "tree", "group"]
    tree = variables["tree"]
    assert tree["query"] == "label_values(elastic_quota_group_runtime, tree)"
    # Prometheus drops the default tree's empty label: All must match a missing label too.
    assert tree["multi"] and tree["includeAll"] and tree["allValue"] == ".*"
    assert '{tree=~"$tree"}' in variables["group"]["query"]
    exported = labels()
    grouped = 0
    for panel in shown["panels"]:
        for target in panel["targets"]:
            for selector in selectors(Parser(target["expr"]).parse()):
                carried = exported.get(selector.name, set())  # the webhook's: none
                matched = {label for label, _, _ in selector.matchers}
                assert matched <= carried, (target["expr"], carried)
                if "group" in carried:
                    grouped += 1
                    assert ("group", "=~", "$group") in selector.matchers, target["expr"]
                    assert ("tree", "=~", "$tree") in selector.matchers, target["expr"]
    assert grouped == 8
