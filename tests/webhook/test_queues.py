"""An ElasticQuota carrying Koordinator's queue keys is admitted as Koordinator admits it; a key
the gate cannot read is warned of, naming the field, and its default applies."""

from __future__ import annotations

import pytest

from tests.manifests import quota
from tests.webhook.conftest import review

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def test_a_queue_key_the_gate_cannot_read_is_allowed_with_a_warning(webhook):
    queued = quota(
        "queued",
        namespace="queued",
        max={"cpu": 4},
        labels={"koord-queue/queue-policy": "Round"},
    )
    queued["metadata"]["annotations"] = {"koord-queue/max-depth": "-3"}
    answer = await webhook.review(review("CREATE", new=queued))
    assert answer["allowed"], answer
    assert answer["warnings"] == [
        "ElasticQuota queued/queued: metadata.labels[koord-queue/queue-policy]: 'Round' is not "
        "read here (Block or Priority): the gate keeps Block",
        "ElasticQuota queued/queued: metadata.annotations[koord-queue/max-depth]: '-3' is not a "
        "whole number from 1, or -1 for the whole queue: the gate looks at the whole queue",
    ]


async def test_readable_queue_keys_are_allowed_silently(webhook):
    queued = quota(
        "calm", namespace="calm", max={"cpu": 4}, labels={"koord-queue/queue-policy": "Priority"}
    )
    queued["metadata"]["annotations"] = {
        "koord-queue/max-depth": "10",
        "koord-queue/wait-for-pods-running": "true",
        "koord-queue/enable-queueunit-preemption": "false",
    }
    answer = await webhook.review(review("CREATE", new=queued))
    assert answer["allowed"] and "warnings" not in answer, answer
