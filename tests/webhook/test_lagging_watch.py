"""An ElasticQuota write is never denied on the webhook's watched copy of the tree alone: the
denial is judged again on the ElasticQuotas the API server holds. `kubectl apply` of a whole
tree sends a child a moment after the parent it names, and the real API server's watch can
deliver that parent after the child's review (the README's quick start met it there)."""

from __future__ import annotations

from pathlib import Path

from tests.apiserver import ApiServer
from tests.manifests import quota
from tests.realistic import P
from tests.webhook.conftest import (
    Certificates,
    cluster_objects,
    review,
    start_webhook,
    stop_webhook,
)

RES = {"cpu": 10, "memory": "10Gi"}
TREE_ID = P + "tree-id"
STALLED = 120.0
"""Seconds the webhook's ElasticQuota watch waits for an answer: longer than the test."""


async def test_a_denial_is_judged_again_on_what_the_api_server_holds(
    tmp_path: Path, certificates: Certificates
) -> None:
    async with ApiServer() as api:
        api.seed(*cluster_objects())
        # The webhook lists the ElasticQuotas, but its watch sees nothing from then on.
        api.fault("GET", "elasticquotas", verb="watch", latency=STALLED, seconds=STALLED)
        webhook = await start_webhook(tmp_path, str(api.url), certificates)
        try:
            api.seed(quota("research", is_parent=True, min=RES, max=RES))

            child = quota("team-x", namespace="team-x", parent="research", min=RES, max=RES)
            answer = await webhook.review(review("CREATE", new=child))
            assert answer["allowed"], answer

            api.seed(quota("gpus", is_parent=True, min=RES, max=RES, labels={TREE_ID: "gpus"}))
            pooled = quota("team-z", namespace="team-z", parent="gpus", min=RES, max=RES)
            patch = await webhook.mutation("/mutate/elasticquotas", review("CREATE", new=pooled))
            assert [step["value"] for step in patch] == ["gpus"]

            orphan = quota("team-y", namespace="team-y", parent="nowhere", max=RES)
            answer = await webhook.review(review("CREATE", new=orphan))
            assert not answer["allowed"]
            assert answer["status"]["message"] == (
                "ElasticQuota team-y/team-y: metadata.labels[quota.scheduling.koordinator.sh/"
                "parent]: parent 'nowhere' does not exist"
            )

            # Without an answer from the API server, the watched copy's denial stands.
            api.fault("GET", "elasticquotas", verb="list", status=503, times=1)
            answer = await webhook.review(review("CREATE", new=child))
            assert not answer["allowed"]
            assert "parent 'research' does not exist" in answer["status"]["message"]
            assert api.faults.active[-1].hits == 1, "the denial was not judged again"
        finally:
            await stop_webhook(webhook)
