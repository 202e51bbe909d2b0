"""The webhook as a server: garbage in, load, the watch, metrics, readiness, TLS rotation."""

from __future__ import annotations

import asyncio
import hashlib
import io
import json
import re
import ssl
from pathlib import Path

import aiohttp
import pytest

from tests.apiserver import ApiServer
from tests.manifests import quota
from tests.waiting import eventually
from tests.webhook.conftest import (
    Certificates,
    review,
    start_webhook,
    stop_webhook,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")
RES = {"cpu": 200, "memory": "200Gi"}
VALID = review("CREATE", new=quota("t", parent="dept-a", min={"cpu": 1}, max=RES))


async def still_serving(webhook) -> None:
    answer = await webhook.review(VALID)
    assert answer["allowed"] is True


@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        (b"{not json", 400, "invalid JSON"),
        (b"\xff\xfe", 400, "invalid JSON"),
        ([1, 2, 3], 400, "expected a JSON object (an AdmissionReview)"),
        (
            {"apiVersion": "admission.k8s.io/v1beta1", "kind": "AdmissionReview"},
            400,
            "expected apiVersion admission.k8s.io/v1 and kind AdmissionReview",
        ),
        ({**VALID, "request": "x"}, 400, "request: expected an object"),
        (
            {**VALID, "request": {**VALID["request"], "uid": ""}},
            400,
            "request.uid: expected a non-empty string",
        ),
        (
            {**VALID, "request": {**VALID["request"], "operation": "CONNECT"}},
            400,
            "request.operation: expected CREATE, UPDATE or DELETE, got 'CONNECT'",
        ),
        (
            {**VALID, "request": {**VALID["request"], "object": None}},
            400,
            "request.object: expected an object for CREATE",
        ),
        (
            {**VALID, "request": {**VALID["request"], "object": [1]}},
            400,
            "request.object: expected an object",
        ),
    ],
)
async def test_malformed_bodies_get_400_with_a_message(webhook, body, status, message):
    response = await webhook.post("/validate/elasticquotas", body)
    assert response.status == status
    assert message in (await response.json())["error"]
    await still_serving(webhook)


async def test_a_review_of_another_kind_gets_400(webhook):
    body = review(
        "CREATE",
        new={
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "d", "namespace": "apps"},
        },
    )
    response = await webhook.post("/validate/pods", body)
    assert response.status == 400
    assert (await response.json())["error"] == (
        "request.kind.kind: this endpoint validates Pod, not Deployment"
    )
    await still_serving(webhook)


async def test_an_oversized_body_is_refused_and_the_server_keeps_serving(webhook):
    big = quota("t", max=RES)
    big["metadata"]["annotations"]["padding"] = "x" * (9 * 2**20)
    body = io.BytesIO(json.dumps(review("CREATE", new=big)).encode())
    response = await webhook.session.post(
        webhook.url + "/validate/elasticquotas", data=body, ssl=webhook.context
    )
    assert response.status == 413
    assert "Maximum request body size" in await response.text()
    await still_serving(webhook)


async def test_200_concurrent_reviews_are_all_answered_correctly(webhook):
    bodies = []
    for i in range(200):
        min_cpu = 5 if i % 2 else 50  # 50 does not fit beside dept-a's other children
        bodies.append(
            review(
                "CREATE",
                uid=f"r{i}",
                new=quota(f"t{i}", parent="dept-a", min={"cpu": min_cpu}, max=RES),
            )
        )
    answers = await asyncio.gather(*(webhook.review(body) for body in bodies))
    for i, answer in enumerate(answers):
        assert answer["uid"] == f"r{i}"
        assert answer["allowed"] is bool(i % 2)


async def test_a_quota_created_in_the_cluster_is_seen_through_the_watch(webhook, api):
    child = review("CREATE", new=quota("late-child", parent="late-parent", max=RES))
    assert (
        "parent 'late-parent' does not exist" in (await webhook.review(child))["status"]["message"]
    )
    async with aiohttp.ClientSession() as session:
        url = f"{api.url}/apis/scheduling.sigs.k8s.io/v1alpha1/namespaces/quotas/elasticquotas"
        async with session.post(url, json=quota("late-parent", is_parent=True, max=RES)) as r:
            assert r.status in (200, 201)

    async def allowed() -> bool:
        return bool((await webhook.review(child))["allowed"])

    await eventually(allowed, what="the new parent to reach the webhook")


async def test_metrics_count_admissions_by_kind_operation_and_result(webhook):
    async with webhook.session.get(webhook.probes + "/metrics") as response:
        before = await response.text()
    await webhook.review(review("CREATE", new=quota("t", parent="ghost", max=RES)))
    async with webhook.session.get(webhook.probes + "/metrics") as response:
        after = await response.text()
    sample = (
        'elastic_quota_webhook_admissions_total{kind="ElasticQuota",operation="CREATE",'
        'result="denied"}'
    )

    def value(text: str) -> float:
        match = re.search(re.escape(sample) + r" (\S+)", text)
        return float(match.group(1)) if match else 0.0

    assert value(after) == value(before) + 1
    assert 'elastic_quota_webhook_admission_duration_seconds_bucket{kind="ElasticQuota"' in after
    async with webhook.session.get(webhook.probes + "/healthz") as response:
        assert response.status == 200


async def test_until_the_quotas_are_loaded_it_is_not_ready_and_denies(tmp_path, certificates):
    # An API server that does not serve ElasticQuota (no CRD): the first listing fails.
    async with ApiServer() as api:
        api.fault("GET", "elasticquotas", status=404, times=10**6)
        hook = await start_webhook(
            tmp_path, str(api.url), certificates, "--log-level", "error", wait=0
        )
        try:
            # it listed, failed and listed again: still not ready
            await eventually(
                lambda: api.count("list", "elasticquotas") >= 2,
                what="a second listing of ElasticQuota objects",
            )
            async with hook.session.get(hook.probes + "/readyz") as response:
                assert response.status == 503
                assert "ElasticQuota" in await response.text()
            answer = await hook.review(VALID)
            assert answer["allowed"] is False
            assert (
                "has not loaded the cluster's ElasticQuota objects yet"
                in (answer["status"]["message"])
            )
        finally:
            await stop_webhook(hook)


def presented(certificate_file: Path) -> str:
    return hashlib.sha256(ssl.PEM_cert_to_DER_cert(certificate_file.read_text())).hexdigest()


async def test_a_certificate_replaced_on_disk_is_served_without_a_restart(tmp_path, api):
    first = Certificates.issue(tmp_path)
    hook = await start_webhook(tmp_path, str(api.url), first, "--cert-check-interval", "0.1")
    try:

        async def served() -> str:
            context = ssl.create_default_context()
            context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
            _, writer = await asyncio.open_connection(
                "127.0.0.1", int(hook.url.rsplit(":", 1)[1]), ssl=context
            )
            der = writer.get_extra_info("ssl_object").getpeercert(binary_form=True)
            writer.transport.abort()  # a TLS close could outlive the test's loop
            return hashlib.sha256(der).hexdigest()

        assert await served() == presented(first.cert_file)
        second = Certificates.issue(tmp_path)  # a new CA and certificate over the same files

        async def renewed() -> bool:
            return await served() == presented(second.cert_file)

        await eventually(renewed, what="the new certificate to be served")
        hook.context = second.client_context()
        await still_serving(hook)
        assert hook.process.poll() is None  # the same process
    finally:
        await stop_webhook(hook)
