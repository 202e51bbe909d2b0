"""Admission webhooks called as kube-apiserver's MutatingAdmissionWebhook and
ValidatingAdmissionWebhook plugins call them (apiserver admission/plugin/webhook).

Configured with Mutating/ValidatingWebhookConfiguration dicts as `helm template` renders them,
and a map from a Service (namespace, name, port) to the `host:port` on 127.0.0.1 where the test
serves it. The webhook's certificate is checked against `caBundle` for `NAME.NAMESPACE.svc`.

Honoured: rules (operations, apiGroups, apiVersions, resources with `*`, `x/*`, `*/*`, scope),
namespaceSelector, objectSelector, matchConditions (CEL through `common-expression-language`,
with `object`, `oldObject` and `request`; `authorizer` is not provided, so a condition using it
errors), failurePolicy, timeoutSeconds, clientConfig (service or url, path, caBundle).
Mutating webhooks run serially, configurations by name; validating ones in parallel.
Ignored: admissionReviewVersions (v1 is always sent), sideEffects (no dry run here),
reinvocationPolicy (never reinvoked), matchPolicy (each kind is served in one version).
"""

from __future__ import annotations

import asyncio
import base64
import json
import ssl
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import cel
import jsonpatch

from .errors import ApiError, internal
from .resources import Resource
from .selectors import from_label_selector

NamespaceLabels = Callable[[str], Mapping[str, str] | None]


class CallFailed(ApiError):
    """The webhook could not be asked, or answered nonsense: failurePolicy decides."""


@dataclass(frozen=True)
class User:
    username: str
    groups: tuple[str, ...] = ("system:authenticated",)
    uid: str = ""

    def info(self) -> dict[str, Any]:
        info: dict[str, Any] = {"username": self.username, "groups": list(self.groups)}
        return info | ({"uid": self.uid} if self.uid else {})


@dataclass
class Request:
    """What admission is asked about (admission.Attributes)."""

    operation: str
    resource: Resource
    namespace: str | None
    name: str
    obj: dict[str, Any] | None
    old: dict[str, Any] | None
    user: User
    subresource: str = ""
    kind: dict[str, str] | None = None  # the object's kind when not the resource's (Eviction)
    options: dict[str, Any] | None = None

    def review(self) -> dict[str, Any]:
        r = self.resource
        kind = self.kind or {"group": r.group, "version": r.version, "kind": r.kind}
        resource = {"group": r.group, "version": r.version, "resource": r.plural}
        request: dict[str, Any] = {
            "uid": str(uuid.uuid4()),
            "kind": kind,
            "resource": resource,
            "requestKind": kind,
            "requestResource": resource,
            "name": self.name,
            "operation": self.operation,
            "userInfo": self.user.info(),
            "object": self.obj,
            "oldObject": self.old,
            "dryRun": False,
            "options": self.options,
        }
        if self.namespace:
            request["namespace"] = self.namespace
        if self.subresource:
            request["subResource"] = request["requestSubResource"] = self.subresource
        return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}


@dataclass
class Webhook:
    name: str
    mutating: bool
    spec: dict[str, Any]
    conditions: list[tuple[str, Any]] = field(default_factory=list)

    @property
    def fail_closed(self) -> bool:
        policy: str = self.spec.get("failurePolicy", "Fail")
        return policy == "Fail"

    @property
    def timeout(self) -> int:
        return int(self.spec.get("timeoutSeconds", 10))


def _rule_matches(rule: dict[str, Any], request: Request) -> bool:
    r = request.resource
    operations = rule.get("operations") or []
    if "*" not in operations and request.operation not in operations:
        return False
    if not {"*", r.group} & set(rule.get("apiGroups") or []):
        return False
    if not {"*", r.version} & set(rule.get("apiVersions") or []):
        return False
    scope = rule.get("scope", "*")
    namespaced = bool(request.namespace) and r.plural != "namespaces"
    if (scope == "Namespaced" and not namespaced) or (scope == "Cluster" and namespaced):
        return False
    for pattern in rule.get("resources") or []:
        main, slash, sub = pattern.partition("/")
        if main not in ("*", r.plural):
            continue
        if (not slash and not request.subresource) or sub in ("*", request.subresource):
            return True
    return False


class Admission:
    """The configured webhooks and the way to call them."""

    def __init__(self, namespace_labels: NamespaceLabels) -> None:
        self._namespace_labels = namespace_labels
        self.webhooks: list[Webhook] = []
        self.services: dict[tuple[str, str, int], str] = {}
        self._contexts: dict[str, ssl.SSLContext] = {}
        self._session: aiohttp.ClientSession | None = None

    def configure(
        self,
        configurations: Iterable[Mapping[str, Any]],
        services: Mapping[tuple[str, str, int], str] | None = None,
    ) -> None:
        """Replace the webhooks with those of these configuration objects (other kinds are
        skipped, so a whole `helm template` render can be passed)."""
        kinds = {"MutatingWebhookConfiguration": True, "ValidatingWebhookConfiguration": False}
        chosen = sorted(
            (c for c in configurations if c.get("kind") in kinds),
            key=lambda c: (c["metadata"]["name"], c["kind"]),
        )
        self.webhooks = [
            Webhook(
                spec["name"],
                kinds[config["kind"]],
                spec,
                [
                    (c["expression"], cel.compile(c["expression"]))
                    for c in spec.get("matchConditions") or []
                ],
            )
            for config in chosen
            for spec in config.get("webhooks") or []
        ]
        self.services.update(services or {})

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def mutate(self, request: Request) -> list[str]:
        """Run the mutating webhooks in order; `request.obj` is replaced by each patch."""
        warnings: list[str] = []
        for hook in [h for h in self.webhooks if h.mutating]:
            if self._applies(hook, request):
                response = await self._call(hook, request)
                warnings += response.get("warnings") or []
                patch = response.get("patch")
                if patch:
                    if request.operation == "DELETE":
                        raise internal(
                            f'admission webhook "{hook.name}" attempted to modify the object, '
                            "which is not supported for this operation"
                        )
                    operations = _decode_patch(hook, response)
                    request.obj = jsonpatch.apply_patch(request.obj, operations)
        return warnings

    async def validate(self, request: Request) -> list[str]:
        hooks = [h for h in self.webhooks if not h.mutating and self._applies(h, request)]
        results = await asyncio.gather(
            *(self._call(h, request) for h in hooks), return_exceptions=True
        )
        warnings: list[str] = []
        for hook, result in zip(hooks, results, strict=True):
            if isinstance(result, BaseException):
                raise result
            if result.get("patch"):
                raise self._failure(
                    hook,
                    "received invalid webhook response: validating webhooks may not return patches",
                )
            warnings += result.get("warnings") or []
        return warnings

    def _applies(self, hook: Webhook, request: Request) -> bool:
        if not any(_rule_matches(rule, request) for rule in hook.spec.get("rules") or []):
            return False
        if not self._namespace_matches(hook, request):
            return False
        objects = from_label_selector(hook.spec.get("objectSelector"))
        if hook.spec.get("objectSelector") and not any(
            o is not None and objects((o.get("metadata") or {}).get("labels") or {})
            for o in (request.obj, request.old)
        ):
            return False
        return self._conditions_hold(hook, request)

    def _namespace_matches(self, hook: Webhook, request: Request) -> bool:
        selector = hook.spec.get("namespaceSelector")
        if not selector:
            return True
        if request.resource.plural == "namespaces" and not request.subresource:
            subject = request.obj if request.obj is not None else request.old
            labels = ((subject or {}).get("metadata") or {}).get("labels") or {}
        elif not request.namespace:
            return True  # cluster-scoped: always matches
        else:
            found = self._namespace_labels(request.namespace)
            if found is None:
                raise ApiError(404, f'namespaces "{request.namespace}" not found')
            labels = found
        return from_label_selector(selector)(labels)

    def _conditions_hold(self, hook: Webhook, request: Request) -> bool:
        if not hook.conditions:
            return True
        review = request.review()["request"]
        context = {"object": request.obj, "oldObject": request.old, "request": review}
        error: Exception | None = None
        for _, program in hook.conditions:
            try:
                if program.execute(context) is False:
                    return False
            except Exception as failed:  # the CEL library raises plain exceptions
                error = error or failed
        if error is None:
            return True
        if not hook.fail_closed:
            return False
        what = request.resource.plural
        raise ApiError(403, f'{what} "{request.name}" is forbidden: {error}')

    def _failure(self, hook: Webhook, why: str) -> CallFailed:
        return CallFailed(
            500, f'Internal error occurred: failed calling webhook "{hook.name}": {why}'
        )

    async def _call(self, hook: Webhook, request: Request) -> dict[str, Any]:
        """The webhook's AdmissionResponse; a call that fails counts per failurePolicy (an
        Ignore webhook that fails answers as an allowing one)."""
        try:
            return await self._post(hook, request)
        except CallFailed:
            if hook.fail_closed:
                raise
            return {"allowed": True}

    async def _post(self, hook: Webhook, request: Request) -> dict[str, Any]:
        config = hook.spec.get("clientConfig") or {}
        shown, target, server_name = self._address(hook, config)
        review = request.review()
        if self._session is None:
            self._session = aiohttp.ClientSession()
        try:
            async with self._session.post(
                target,
                params={"timeout": f"{hook.timeout}s"},
                json=review,
                ssl=self._context(config.get("caBundle")),
                server_hostname=server_name,
                timeout=aiohttp.ClientTimeout(total=hook.timeout),
            ) as response:
                if response.status != 200:
                    text = (await response.text())[:200]
                    why = f"failed to call webhook: the server responded with {response.status}"
                    raise self._failure(hook, f"{why}: {text}")
                body = await response.json(content_type=None)
        except TimeoutError as error:
            why = f'failed to call webhook: Post "{shown}": context deadline exceeded'
            raise self._failure(hook, why) from error
        except aiohttp.ClientConnectorCertificateError as error:
            why = f'failed to call webhook: Post "{shown}": tls: failed to verify certificate: '
            why += str(error.certificate_error)
            raise self._failure(hook, why) from error
        except aiohttp.ClientError as error:
            why = f'failed to call webhook: Post "{shown}": {_go_error(error, target)}'
            raise self._failure(hook, why) from error
        answer = body.get("response") if isinstance(body, dict) else None
        if not isinstance(answer, dict) or answer.get("uid") != review["request"]["uid"]:
            raise self._failure(
                hook,
                "received invalid webhook response: expected response.uid "
                f"{review['request']['uid']!r}",
            )
        if not answer.get("allowed"):
            raise denial(hook.name, answer.get("status"))
        return answer

    def _address(self, hook: Webhook, config: dict[str, Any]) -> tuple[str, str, str | None]:
        """(the URL as the real server names it, the URL to connect to, the TLS server name)."""
        service = config.get("service")
        if service is None:
            url = str(config["url"])
            return f"{url}?timeout={hook.timeout}s", url, None
        port = int(service.get("port", 443))
        host = f"{service['name']}.{service['namespace']}.svc"
        path = service.get("path") or "/"
        local = self.services.get((service["namespace"], service["name"], port))
        if local is None:
            raise self._failure(hook, f'failed to call webhook: service "{host}" has no endpoints')
        shown = f"https://{host}:{port}{path}?timeout={hook.timeout}s"
        return shown, f"https://{local}{path}", host

    def _context(self, bundle: str | None) -> ssl.SSLContext:
        key = bundle or ""
        if key not in self._contexts:
            context = ssl.create_default_context()
            if bundle:
                context = ssl.create_default_context(cadata=base64.b64decode(bundle).decode())
            self._contexts[key] = context
        return self._contexts[key]


def denial(name: str, result: dict[str, Any] | None) -> ApiError:
    """A webhook's refusal as the client gets it (webhook/errors ToStatusErr)."""
    result = dict(result or {})
    message, reason = result.get("message") or "", result.get("reason") or ""
    denied = f'admission webhook "{name}" denied the request'
    if message:
        text = f"{denied}: {message}"
    elif reason:
        text = f"{denied}: {reason}"
    else:
        text = f"{denied} without explanation"
    code = int(result.get("code") or 0)
    return ApiError(max(code, 400), text, reason=reason, details=result.get("details"))


def _decode_patch(hook: Webhook, response: dict[str, Any]) -> list[dict[str, Any]]:
    if response.get("patchType") != "JSONPatch":
        raise internal(
            f'failed calling webhook "{hook.name}": received invalid webhook response: '
            f"unsupported patch type {response.get('patchType')!r}"
        )
    decoded: list[dict[str, Any]] = json.loads(base64.b64decode(response["patch"]))
    return decoded


def _go_error(error: aiohttp.ClientError, target: str) -> str:
    """Connection failures worded as Go's net package words them."""
    if isinstance(error, aiohttp.ClientConnectorError):
        return f"dial tcp {error.host}:{error.port}: connect: connection refused"
    return str(error) or type(error).__name__
