"""docs/pod-groups.md's walkthrough and the other gang stories on the real control plane.

The stories and their claims are pod_groups.py's, played here through real kubectl: the chart
installed by the README's `helm install` (step 1 of the quick start, as the walkthrough asks),
the Jobs' pods made by the real Job controller, gated by the product's webhook on their way in,
lifted by the operator, placed by the real kube-scheduler on kwok nodes and completed as their
kubelet would (`Cluster.complete`, the status a kubelet writes; kwok completes no Job pod by
itself). scheduler-plugins' PodGroup CRD is installed first, as on a cluster
running scheduler-plugins. The audit log shows the chart's RBAC refused the product nothing, the
PodGroups' reads included.

It runs on a control plane of its own: the chart's webhooks would gate the pods of every other
test on the shared one.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from scripts.control_plane.build import Built
from scripts.control_plane.plane import ControlPlane
from tests.chart.rendering import env
from tests.control_plane.cluster import Cluster, refused_to_the_product
from tests.control_plane.pod_groups import (
    ROUNDS,
    Story,
    a_gang_short_of_its_minimum_waits_for_its_last_member,
    a_scheduler_plugins_gang_waits_for_its_pod_group,
    two_gangs_in_room_for_one_run_one_after_the_other,
)
from tests.control_plane.product import NAMESPACE, RELEASE, helm_install, running
from tests.control_plane.quickstart import commands
from tests.control_plane.test_quickstart import RealKubectl
from tests.paths import REPO

POD_GROUP_CRD = REPO / "tests" / "crds" / "podgroups.scheduling.x-k8s.io.yaml"


async def test_gangs_are_admitted_whole_or_not_at_all_on_the_real_control_plane(
    built: Built, tmp_path: Path
) -> None:
    helm = next(c for c in commands() if c.startswith("helm "))
    assert helm.startswith("helm install elastic-quota manifests/elastic-quota "), helm
    plane = ControlPlane(tmp_path / "plane", built)
    await asyncio.to_thread(plane.start)
    try:
        cluster = Cluster(plane.directory, plane.server, tmp_path / "user")
        await cluster.kubectl(f"kubectl apply -f {POD_GROUP_CRD}")
        await cluster.kubectl(
            "kubectl wait --for condition=established crd/podgroups.scheduling.x-k8s.io"
        )
        await helm_install(cluster, helm)
        operator = cluster.get(
            f"/apis/apps/v1/namespaces/{NAMESPACE}/deployments/{RELEASE}-operator"
        )
        async with running(cluster, tmp_path / "product"):
            story = Story(
                RealKubectl(cluster),
                tmp_path,
                pods=lambda namespace, job: cluster.pods(namespace, f"job-name={job}"),
                complete=cluster.complete,
                calm=ROUNDS * float(env(operator)["ELASTIC_QUOTA_BATCH_INTERVAL"]),
            )
            await two_gangs_in_room_for_one_run_one_after_the_other(story)
            await a_gang_short_of_its_minimum_waits_for_its_last_member(story)
            await a_scheduler_plugins_gang_waits_for_its_pod_group(story)
        assert refused_to_the_product(plane.audit_log) == [], "the chart's RBAC refused"
    finally:
        await asyncio.to_thread(plane.stop)
