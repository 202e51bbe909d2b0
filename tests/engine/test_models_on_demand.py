"""Reading the objects of a healthy cluster, as the operator and the webhook do from their
start, never loads pydantic: the fast paths read them (the models cost 0.1 s of every start).
The models load with the first object a fast path is unsure of, and name its field."""

from __future__ import annotations

import json
from typing import Any

from tests import realistic
from tests.cli.running import python

READER = """
import json, sys
import eq_operator.main, eq_webhook.main
from eq_engine import ObjectError, QuotaReader, parse_node, parse_pod
objects = json.load(sys.stdin)
reader = QuotaReader()
for raw in objects["nodes"]:
    parse_node(raw)
for raw in objects["pods"]:
    parse_pod(raw)
for raw in objects["quotas"]:
    reader.read(raw)
print("pydantic" in sys.modules)
try:
    reader.read(objects["odd"])
except ObjectError as error:
    print(error)
print("pydantic" in sys.modules)
"""


def _read(objects: dict[str, Any]) -> list[str]:
    done = python("-c", READER, stdin=json.dumps(objects))
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_a_healthy_cluster_is_read_without_the_models_and_an_odd_object_with_them() -> None:
    quota = realistic.elastic_quota(
        "ml", "ml", min={"cpu": "8"}, max={"cpu": "16"}, status={"used": {"cpu": "2"}}
    )
    echo = {**quota, "status": {"used": {"cpu": "3500m"}}}  # its status written, come back
    odd = {**quota, "spec": {"min": {"cpu": "lots"}}}
    objects = {
        "nodes": [realistic.node("n1"), realistic.node("n2", cpu="96", labels={"pool": "a100"})],
        "pods": [realistic.deployment_pod("ml", "trainer", i) for i in range(3)],
        "quotas": [quota, echo, *realistic.koordinator_builtins()],
        "odd": odd,
    }
    assert _read(objects) == [
        "False",
        "ElasticQuota ml/ml: spec.min: 'lots': not a Kubernetes quantity (resource cpu)",
        "True",
    ]
