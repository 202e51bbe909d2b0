"""Which new pods wait behind the admission gate (`eq_engine.decisions.gating`), on pods as their
controllers send them to admission: each case gives the exemption, in words, or None (gated).
The same rule over HTTPS: tests/webhook/test_gating.py."""

from __future__ import annotations

from typing import Any

import pytest
from eq_engine import parse_pod
from eq_engine.decisions.gating import gate_exemption
from eq_engine.model import keys

from tests import realistic
from tests.engine.quota_tree import BUILTIN_NS, DEFAULT, catalog, group, tree
from tests.realistic import P

SOLO = {"app": "batch", P + "name": "solo"}


def as_sent(raw: dict[str, Any]) -> dict[str, Any]:
    """A named pod as its controller sends it to admission: no name yet (`generateName`), no
    uid, no node, no status."""
    metadata = raw["metadata"]
    sent = {key: metadata[key] for key in ("generateName", "labels", "ownerReferences")}
    spec = {key: value for key, value in raw["spec"].items() if key != "nodeName"}
    return {**raw, "metadata": {**sent, "namespace": metadata["namespace"]}, "spec": spec}


def tree_with_default_max() -> list[dict[str, Any]]:
    """The tree, its default group holding its pods to cpu 10."""
    limited = group(DEFAULT, BUILTIN_NS, max={"cpu": "10"}, labels={P + "parent": ""})
    return [limited if o["metadata"]["name"] == DEFAULT else o for o in tree()]


GATED = "gated"
EXEMPTIONS = [
    (
        "a Deployment's pod of a leaf, before it has a name",
        realistic.deployment_pod("apps", "batch", created=False, labels=SOLO),
        GATED,
    ),
    (
        "the same, named by the API server",
        realistic.named_by_server(
            realistic.deployment_pod("apps", "batch", created=False, labels=SOLO)
        ),
        GATED,
    ),
    (
        "a Job's pod in a leaf's namespace",
        as_sent(realistic.job_pod("nlp", "index")),
        GATED,
    ),
    (
        "a pod bound to a node already",
        realistic.pod("apps", "pinned", labels=SOLO, node="worker-1"),
        "bound to a node already",
    ),
    (
        "a pod that opts out",
        realistic.deployment_pod(
            "apps", "batch", created=False, labels={**SOLO, P + "gate": "false"}
        ),
        f'labelled {P}gate: "false"',
    ),
    (
        "a pod that has the gate already",
        realistic.pod("apps", "waiting", labels=SOLO, node=None, gates=[keys.ADMISSION_GATE]),
        "has the admission gate already",
    ),
    (
        "a DaemonSet's pod",
        as_sent(realistic.daemonset_pod("nlp", "log-agent")),
        "a DaemonSet or mirror pod, placed on its node by its controller",
    ),
    (
        "a static pod's mirror, which has its node",
        realistic.static_mirror_pod(namespace="nlp"),
        "bound to a node already",
    ),
    (
        "a pod of a system namespace",
        realistic.deployment_pod("kube-system", "coredns", created=False, labels=SOLO),
        "its group koordinator-system-quota has no limit",
    ),
    (
        "a pod of no group, the default group without a practical max",
        realistic.deployment_pod("anywhere", "web", created=False),
        "its group koordinator-default-quota has no limit",
    ),
]


@pytest.mark.parametrize(("case", "raw", "exemption"), EXEMPTIONS, ids=[c[0] for c in EXEMPTIONS])
def test_which_new_pods_wait_behind_the_gate(case, raw, exemption):
    found = gate_exemption(parse_pod(raw), catalog())
    assert (found or GATED) == exemption


def test_a_pod_of_no_group_is_gated_once_the_default_group_has_a_max():
    raw = realistic.deployment_pod("anywhere", "web", created=False)
    assert gate_exemption(parse_pod(raw), catalog(*tree_with_default_max())) is None
