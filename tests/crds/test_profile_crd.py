"""Koordinator's ElasticQuotaProfile CRD, shipped as Koordinator ships it: a cluster where
Koordinator installed it keeps it unchanged when the chart installs it."""

from __future__ import annotations

import hashlib
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
FILE = REPO / "crds" / "elasticquotaprofiles.quota.koordinator.sh.yaml"
KOORDINATOR_BLOB = "5b954221b4a23611432602d6710fb6e1ef57b58e"
"""`git rev-parse a7a1b76:config/crd/bases/quota.koordinator.sh_elasticquotaprofiles.yaml` in
koordinator-sh/koordinator: the file's git blob id."""


def test_below_its_comment_the_file_is_koordinators_byte_for_byte():
    text = FILE.read_text()
    comment, separator, rest = text.partition("\n---\n")
    assert separator and all(line.startswith("#") for line in comment.splitlines())
    assert "a7a1b76bbf81abd26f9c377de1f31a60dd965f6e" in comment.replace("\n# ", "")
    content = ("---\n" + rest).encode()
    blob = hashlib.sha1(b"blob %d\0" % len(content) + content).hexdigest()
    assert blob == KOORDINATOR_BLOB


def test_names_scope_and_the_fields_a_profile_must_have():
    crd = yaml.safe_load(FILE.read_text())
    assert crd["metadata"]["name"] == "elasticquotaprofiles.quota.koordinator.sh"
    spec = crd["spec"]
    assert (spec["group"], spec["scope"]) == ("quota.koordinator.sh", "Namespaced")
    assert spec["names"]["kind"] == "ElasticQuotaProfile"
    assert spec["names"]["shortNames"] == ["eqp"]
    (version,) = spec["versions"]
    assert (version["name"], version["served"], version["storage"]) == ("v1alpha1", True, True)
    assert "subresources" not in version and "additionalPrinterColumns" not in version
    schema = version["schema"]["openAPIV3Schema"]["properties"]["spec"]
    assert schema["required"] == ["nodeSelector", "quotaName"]
    assert set(schema["properties"]) == {
        "nodeSelector",
        "quotaLabels",
        "quotaName",
        "resourceRatio",
    }
