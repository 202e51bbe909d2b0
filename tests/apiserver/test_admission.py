"""Admission as kube-apiserver runs it, against a small HTTPS webhook served here with a
trustme certificate for its Service name: what a mutating webhook sees of a generateName
create, failurePolicy, a denial's wording, warnings, matchConditions on the user."""

from __future__ import annotations

import base64
import json
import ssl
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest_asyncio
import trustme
from aiohttp import web

from tests.apiserver import User
from tests.apiserver.conftest import PODS
from tests.manifests import pod
from tests.webhook.conftest import free_port

SERVICE = ("hooks", "hook", 443)
OPERATOR = "system:serviceaccount:koordinator-system:elastic-quota-operator"


class Hook:
    """An HTTPS admission webhook: `answer(request)` gives the AdmissionResponse fields."""

    def __init__(self, ca: trustme.CA) -> None:
        self.ca = ca
        self.reviews: list[dict[str, Any]] = []
        self.answer: Callable[[dict[str, Any]], dict[str, Any]] = lambda request: {"allowed": True}
        self.port = free_port()
        self._runner: web.AppRunner | None = None

    async def _handle(self, request: web.Request) -> web.Response:
        review = await request.json()
        self.reviews.append(review["request"])
        response = {"uid": review["request"]["uid"], **self.answer(review["request"])}
        return web.json_response({**review, "response": response})

    async def start(self) -> None:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.ca.issue_cert("hook.hooks.svc").configure_cert(context)
        app = web.Application()
        app.router.add_post("/{path:.*}", self._handle)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", self.port, ssl_context=context).start()

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()


def configuration(kind: str, ca: trustme.CA, **webhook: Any) -> dict[str, Any]:
    """A webhook configuration shaped as the chart renders one."""
    bundle = base64.b64encode(ca.cert_pem.bytes()).decode()
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": kind,
        "metadata": {"name": f"test-{kind.lower()}"},
        "webhooks": [
            {
                "name": f"{kind.lower()}.test",
                "admissionReviewVersions": ["v1"],
                "sideEffects": "None",
                "timeoutSeconds": 5,
                "clientConfig": {
                    "service": {
                        "name": "hook",
                        "namespace": "hooks",
                        "path": "/check",
                        "port": 443,
                    },
                    "caBundle": bundle,
                },
                "rules": [
                    {
                        "apiGroups": [""],
                        "apiVersions": ["v1"],
                        "operations": ["CREATE", "UPDATE"],
                        "resources": ["pods"],
                        "scope": "Namespaced",
                    }
                ],
                **webhook,
            }
        ],
    }


@pytest_asyncio.fixture()
async def hook() -> AsyncIterator[Hook]:
    served = Hook(trustme.CA())
    await served.start()
    yield served
    await served.stop()


def patch(operations: list[dict[str, Any]]) -> dict[str, Any]:
    encoded = base64.b64encode(json.dumps(operations).encode()).decode()
    return {"allowed": True, "patchType": "JSONPatch", "patch": encoded}


async def test_mutation_sees_generate_name_and_the_url_namespace_validation_the_name(
    api, client, hook
):
    api.admission.configure(
        [
            configuration("MutatingWebhookConfiguration", hook.ca),
            configuration("ValidatingWebhookConfiguration", hook.ca),
        ],
        {SERVICE: f"127.0.0.1:{hook.port}"},
    )
    labelled = [{"op": "add", "path": "/metadata/labels/mutated", "value": "yes"}]
    hook.answer = lambda r: patch(labelled) if r["name"] == "" else {"allowed": True}
    body = pod("ignored", node=None)
    body["metadata"] = {"generateName": "web-", "labels": {}, "resourceVersion": ""}
    created = await client.call("POST", PODS, body)
    mutating, validating = hook.reviews
    assert mutating["name"] == "" and mutating["namespace"] == "apps"
    seen = mutating["object"]["metadata"]
    assert "name" not in seen and seen["generateName"] == "web-" and seen["namespace"] == "apps"
    assert "uid" not in seen and "creationTimestamp" not in seen and not seen.get("resourceVersion")
    assert validating["name"] == created["metadata"]["name"]
    assert validating["object"]["metadata"]["labels"] == {"mutated": "yes"}
    assert validating["object"]["metadata"]["uid"] == created["metadata"]["uid"]
    assert created["metadata"]["labels"] == {"mutated": "yes"}
    assert mutating["uid"] != validating["uid"] and mutating["operation"] == "CREATE"


async def test_a_denial_reaches_the_client_as_the_real_server_words_it(api, client, hook):
    api.admission.configure(
        [configuration("ValidatingWebhookConfiguration", hook.ca)],
        {SERVICE: f"127.0.0.1:{hook.port}"},
    )
    hook.answer = lambda r: {
        "allowed": False,
        "status": {"code": 422, "message": "too big"},
        "warnings": ["think again"],
    }
    status, body, response = await client.request("POST", PODS, pod("p"))
    assert (status, body["code"]) == (422, 422)
    assert (
        body["message"]
        == 'admission webhook "validatingwebhookconfiguration.test" denied the request: too big'
    )
    hook.answer = lambda r: {"allowed": True, "warnings": ["careful", "careful"]}
    status, _, response = await client.request("POST", PODS, pod("q"))
    assert status == 201 and response.headers.getall("Warning") == ['299 - "careful"']


async def test_a_webhook_that_is_down_fails_closed_or_is_ignored(api, client, hook):
    await hook.stop()
    for policy in ("Fail", "Ignore"):
        api.admission.configure(
            [configuration("ValidatingWebhookConfiguration", hook.ca, failurePolicy=policy)],
            {SERVICE: f"127.0.0.1:{hook.port}"},
        )
        status, body, _ = await client.request("POST", PODS, pod(f"p-{policy.lower()}"))
        if policy == "Fail":
            assert status == 500
            assert body["message"].startswith(
                "Internal error occurred: failed calling webhook "
                '"validatingwebhookconfiguration.test": '
                'failed to call webhook: Post "https://hook.hooks.svc:443/check?timeout=5s": '
            )
            assert "connection refused" in body["message"]
        else:
            assert status == 201


async def test_a_certificate_not_signed_by_the_ca_bundle_fails_the_call(api, client, hook):
    api.admission.configure(
        [configuration("ValidatingWebhookConfiguration", trustme.CA())],
        {SERVICE: f"127.0.0.1:{hook.port}"},
    )
    status, body, _ = await client.request("POST", PODS, pod("p"))
    assert status == 500 and "tls: failed to verify certificate" in body["message"]


async def test_match_conditions_exempt_the_operator_and_selectors_narrow(api, client, hook):
    condition = {
        "name": "not-the-operator",
        "expression": f'request.userInfo.username != "{OPERATOR}"',
    }
    api.admission.configure(
        [
            configuration(
                "ValidatingWebhookConfiguration",
                hook.ca,
                matchConditions=[condition],
                namespaceSelector={
                    "matchExpressions": [
                        {
                            "key": "kubernetes.io/metadata.name",
                            "operator": "NotIn",
                            "values": ["kube-system"],
                        }
                    ]
                },
                objectSelector={"matchExpressions": [{"key": "skip", "operator": "DoesNotExist"}]},
            )
        ],
        {SERVICE: f"127.0.0.1:{hook.port}"},
    )
    hook.answer = lambda r: {"allowed": False, "status": {"message": "no"}}
    api.users["op"] = User(OPERATOR, ("system:serviceaccounts", "system:authenticated"))
    operator = type(client)(api.url, token="op")
    try:
        status, _, _ = await operator.request("POST", PODS, pod("by-operator"))
        assert status == 201
    finally:
        await operator.close()
    status, body, _ = await client.request("POST", PODS, pod("by-user"))
    assert status == 400 and body["message"].endswith("denied the request: no")
    assert hook.reviews[-1]["userInfo"]["username"] == "kubernetes-admin"
    status, _, _ = await client.request("POST", PODS, pod("opted-out", labels={"skip": "1"}))
    assert status == 201
    status, _, _ = await client.request(
        "POST", "/api/v1/namespaces/kube-system/pods", pod("sys", namespace="kube-system")
    )
    assert status == 201
    assert len(hook.reviews) == 1


async def test_subresources_are_matched_only_when_a_rule_names_them(api, client, hook):
    config = configuration("ValidatingWebhookConfiguration", hook.ca)
    config["webhooks"][0]["rules"][0]["resources"] = ["pods/status", "pods/eviction"]
    config["webhooks"][0]["rules"][0]["operations"] = ["*"]
    api.admission.configure([config], {SERVICE: f"127.0.0.1:{hook.port}"})
    api.seed(pod("p"))
    await client.call(
        "PATCH",
        PODS + "/p",
        {"metadata": {"labels": {"a": "b"}}},
        content_type="application/merge-patch+json",
    )
    assert hook.reviews == []
    await client.call(
        "PATCH",
        PODS + "/p/status",
        {"status": {"phase": "Running"}},
        content_type="application/merge-patch+json",
    )
    await client.call(
        "POST",
        PODS + "/p/eviction",
        {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "p"}},
    )
    assert [(r["operation"], r.get("subResource"), r["kind"]["kind"]) for r in hook.reviews] == [
        ("UPDATE", "status", "Pod"),
        ("CREATE", "eviction", "Eviction"),
    ]


async def test_the_charts_webhook_configurations_load(api):
    from tests.chart.rendering import render

    api.admission.configure(render())
    names = {(w.name, w.mutating) for w in api.admission.webhooks}
    assert ("pods-gate.elastic-quota.webhook", True) in names
    assert ("elasticquotas.elastic-quota.webhook", False) in names
