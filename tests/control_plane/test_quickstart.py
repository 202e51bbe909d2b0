"""The README's quick start on the real control plane, through real kubectl, as a user plays it.

The commands are the README's, read out of it and judged by the emulator's quick start test
(tests/test_readme_quickstart.py's QuickStart: the same claims). Here `helm install` runs
verbatim with the real helm against the real API server; the operator and the webhook run as
processes with their ServiceAccounts' tokens (tests/control_plane/product.py); the pods come
from the real Deployment controller, wait behind the real scheduler's honouring of the gate,
are placed by it on kwok nodes and evicted through the real Eviction API. The evictions are
counted in the API server's audit log, which also shows that the chart's RBAC let the product
do all it asked (no 403).

It runs on a control plane of its own: the chart's webhooks would gate the pods of every other
test on the shared one.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from scripts.control_plane.audit import PRODUCT_ACCOUNTS, audit_events, audited
from scripts.control_plane.build import Built
from scripts.control_plane.plane import ControlPlane
from tests.control_plane.cluster import Cluster
from tests.control_plane.product import helm_install, running, webhook_configurations
from tests.kubectl import Kubectl
from tests.test_readme_quickstart import QuickStart, commands

WEBHOOK_DOWN = (
    r'(?s)failed calling webhook "elasticquotas\.elastic-quota\.webhook".*connection refused'
)
UNGUARDED = json.dumps(
    {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "unguarded", "labels": {"app": "unguarded"}},
        "spec": {
            "containers": [
                {
                    "name": "work",
                    "image": "registry.k8s.io/pause:3.10",
                    "resources": {"requests": {"cpu": "500m", "memory": "256Mi"}},
                }
            ]
        },
    }
)


class RealKubectl(Kubectl):
    """tests/kubectl.py's Kubectl (run, until, streaming), on the real control plane."""

    def __init__(self, cluster: Cluster) -> None:  # no emulator to write a kubeconfig
        cluster.home.mkdir(parents=True, exist_ok=True)
        self.env = {
            **os.environ,
            "HOME": str(cluster.home),
            "KUBECONFIG": str(cluster.kubeconfig),
            "KUBECACHEDIR": str(cluster.home / "kubectl-cache"),
        }


class Audit:
    """The emulator's request count, answered by the real API server's audit log."""

    def __init__(self, plane: ControlPlane) -> None:
        self.plane = plane

    def count(self, verb: str, resource: str, subresource: str = "") -> int:
        return audited(self.plane.audit_log, verb, resource, subresource)


async def test_the_readme_quick_start_on_the_real_control_plane(
    built: Built, tmp_path: Path
) -> None:
    helm, *rest = [c for c in commands() if not c.startswith("docker ")]
    assert helm.startswith("helm install elastic-quota manifests/elastic-quota "), helm
    plane = ControlPlane(tmp_path / "plane", built)
    await asyncio.to_thread(plane.start)
    try:
        cluster = Cluster(plane.directory, plane.server, tmp_path / "user")
        await helm_install(cluster, helm)
        installed = webhook_configurations(cluster)
        async with running(cluster, tmp_path / "product") as (webhook, operator):
            # The only difference from the chart: each webhook's Service is a URL on its name.
            served = webhook_configurations(cluster)
            assert served.keys() == installed.keys() and len(served) == 2
            for name, webhooks in installed.items():
                for before, after in zip(webhooks, served[name], strict=True):
                    service = before["clientConfig"].pop("service")
                    url = after["clientConfig"].pop("url")
                    host = f"{service['name']}.{service['namespace']}.svc"
                    assert url.startswith(f"https://{host}:") and url.endswith(service["path"])
                    assert before == after, name
            kubectl = RealKubectl(cluster)
            story = QuickStart(Audit(plane), kubectl, operator)  # type: ignore[arg-type]
            for command in rest:
                await story.play(command)
            await story.team_b_is_done(timeout=60)
            assert audited(plane.audit_log, "create", "pods", "eviction", code=201) == 1

            # With the webhook down, admission follows the chart's failure policies: a change
            # to the tree is refused (Fail), a new pod is let through ungated (Ignore).
            await webhook.stop()
            with pytest.raises(AssertionError, match=WEBHOOK_DOWN):
                await cluster.kubectl("kubectl label eq team-b -n team-b example=1")
            await cluster.kubectl("kubectl apply -n team-b -f -", stdin=UNGUARDED)
            (pod,) = await cluster.wait_running("team-b", 1, selector="app=unguarded")
            assert "schedulingGates" not in pod["spec"]
        product = [
            e for e in audit_events(plane.audit_log) if PRODUCT_ACCOUNTS in e["user"]["groups"]
        ]
        assert product, "the product's requests are in the audit log"
        forbidden = [
            (e["user"]["username"], e["verb"], e["requestURI"])
            for e in product
            if e["responseStatus"]["code"] == 403
        ]
        assert forbidden == [], "the chart's RBAC refused the product"
    finally:
        await asyncio.to_thread(plane.stop)
