"""The CRD's own schema accepts the shipped examples and Koordinator-shaped objects."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from openapi_schema_validator import OAS30Validator

from tests.manifests import quota

REPO = Path(__file__).resolve().parents[2]
CRD = yaml.safe_load((REPO / "crds" / "elasticquotas.scheduling.sigs.k8s.io.yaml").read_text())
SCHEMA = CRD["spec"]["versions"][0]["schema"]["openAPIV3Schema"]


def errors(document: dict) -> list[str]:
    return [error.message for error in OAS30Validator(SCHEMA).iter_errors(document)]


def test_the_crd_is_compatible_with_koordinator_and_scheduler_plugins():
    assert CRD["metadata"]["name"] == "elasticquotas.scheduling.sigs.k8s.io"
    assert "api-approved.kubernetes.io" in CRD["metadata"]["annotations"]
    assert CRD["spec"]["names"]["shortNames"] == ["eq", "eqs"]
    version = CRD["spec"]["versions"][0]
    assert version["name"] == "v1alpha1" and version["subresources"] == {"status": {}}
    columns = [c["name"] for c in version["additionalPrinterColumns"]]
    assert columns == ["Parent", "Tree", "Min", "Max", "Runtime", "Used", "Waiting", "Age"]


def test_every_example_elasticquota_passes_the_schema():
    examples = [
        doc
        for path in sorted((REPO / "examples").rglob("*.yaml"))
        for doc in yaml.safe_load_all(path.read_text())
        if doc and doc.get("kind") == "ElasticQuota"
    ]
    assert len(examples) >= 5
    for example in examples:
        assert errors(example) == [], example["metadata"]["name"]


def test_a_koordinator_object_with_status_and_integers_passes():
    document = quota("team", min={"cpu": 4, "memory": "8Gi"}, max={"cpu": "1500m"})
    document["status"] = {"used": {"cpu": "500m"}}
    assert errors(document) == []


@pytest.mark.parametrize("bad", ["lots", "1 Gi", "1ki", "--1"])
def test_a_malformed_quantity_is_refused_by_the_schema(bad):
    assert errors(quota("team", min={"cpu": bad}))
