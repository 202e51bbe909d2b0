"""The Grafana dashboard the chart ships: a ConfigMap for Grafana's sidecar, whose every query
names a metric the operator or the webhook exports (their /metrics pages, as served)."""

from __future__ import annotations

import json
import re

from eq_operator.metrics import Metrics as OperatorMetrics
from eq_webhook.metrics import Metrics as WebhookMetrics
from prometheus_client import generate_latest

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


def test_the_dashboard_is_a_configmap_for_grafanas_sidecar():
    assert not [o for o in render() if o["metadata"]["name"].endswith("-dashboard")]
    configmap = find(render("metrics.dashboard.enabled=true"), "ConfigMap")
    assert configmap["metadata"]["labels"]["grafana_dashboard"] == "1"
    dashboard = json.loads(configmap["data"]["elastic-quota.json"])
    assert dashboard["uid"] == "elastic-quota" and len(dashboard["panels"]) >= 10


def test_every_query_names_a_metric_the_product_exports():
    configmap = find(render("metrics.dashboard.enabled=true"), "ConfigMap")
    dashboard = json.loads(configmap["data"]["elastic-quota.json"])
    queries = [t["expr"] for p in dashboard["panels"] for t in p["targets"]]
    queries += [v["query"] for v in dashboard["templating"]["list"] if v["type"] == "query"]
    names = exported()
    for query in queries:
        named = set(re.findall(r"\b(elastic_quota_[a-z_]+)", query))
        assert named, query
        assert named <= names, f"{query}: {sorted(named - names)} not exported"
