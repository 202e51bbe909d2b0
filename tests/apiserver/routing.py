"""From an HTTP request to its handler: the user from the bearer token, the resource, namespace,
name and subresource from the URL, the verb from the method; the request is counted, recorded
for RBAC (access.py) and answered by an injected fault, a read (reading.py) or a write
(writing.py). Of the URLs that are not resources, only the legacy discovery the product reads
is served; the others (aggregated discovery, `/version`, `/openapi`: kubectl's) are 404."""

from __future__ import annotations

from typing import TYPE_CHECKING

import orjson
from aiohttp import web

from . import patching, reading, responses, writing
from .access import record_access
from .admission import User
from .errors import ApiError, status
from .faults import Call, Fault
from .resources import Catalog, Resource

if TYPE_CHECKING:
    from .server import ApiServer

_VERBS = {"POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}


async def serve(api: ApiServer, request: web.Request) -> web.StreamResponse:
    try:
        user = _authenticate(api, request)
        parts = [p for p in request.path.split("/") if p]
        try:
            route = _route(api.catalog, parts)
        except ApiError:
            _unserved(api, request, parts)
            raise
        if route is None:
            return _discovery(api, parts)
        resource, namespace, name, sub = route
        verb = _verb(request, name)
        api.requests[verb, resource.key, sub] += 1
        api.journal.append((verb, resource.key, sub))
        record_access(api.access, request.headers.get("User-Agent", ""), resource, sub, verb)
        fault = api.faults.take(Call(request.method, verb, resource.key, sub, name, namespace))
        if fault is not None and fault.latency:
            await api.faults.slow(fault)
        elif fault is not None:
            return _injected(request, fault)
        return await _dispatch(api, request, user, resource, namespace, name, sub, verb)
    except ApiError as error:
        return responses.json(error.body, error.code, error.headers)
    except orjson.JSONDecodeError as error:
        return responses.json(status(400, f"couldn't decode the request body: {error}"), 400)


def _authenticate(api: ApiServer, request: web.Request) -> User:
    header = request.headers.get("Authorization", "")
    token = header[7:] if header.startswith("Bearer ") else ""
    user = api.users.get(token, api.default_user)
    if user is None:
        raise ApiError(401, "Unauthorized")
    return user


def _route(catalog: Catalog, parts: list[str]) -> tuple[Resource, str | None, str, str] | None:
    """(resource, namespace, name, subresource) of a resource URL, None for the others."""
    if parts[:1] == ["api"] and len(parts) >= 3:
        group, version, rest = "", parts[1], parts[2:]
    elif parts[:1] == ["apis"] and len(parts) >= 4:
        group, version, rest = parts[1], parts[2], parts[3:]
    else:
        return None
    namespace = None
    if len(rest) >= 3 and rest[0] == "namespaces" and catalog.find(group, version, rest[2]):
        namespace, rest = rest[1], rest[2:]
    resource = catalog.find(group, version, rest[0])
    if resource is None or len(rest) > 3:
        raise ApiError(404, "the server could not find the requested resource")
    name = rest[1] if len(rest) > 1 else ""
    sub = rest[2] if len(rest) > 2 else ""
    if sub and sub not in resource.subresources:
        raise ApiError(404, "the server could not find the requested resource")
    return resource, namespace if resource.namespaced else None, name, sub


def _discovery(api: ApiServer, parts: list[str]) -> web.StreamResponse:
    """`/api`, `/apis` and a group version's resources (resources.Catalog), else 404."""
    document = None
    if parts == ["api"]:
        document = api.catalog.api_versions(api.address)
    elif parts == ["apis"]:
        document = api.catalog.api_group_list()
    elif parts == ["api", "v1"]:
        document = api.catalog.resource_list("", "v1")
    elif parts[:1] == ["apis"] and len(parts) == 3:
        document = api.catalog.resource_list(parts[1], parts[2])
    if document is None:
        raise ApiError(404, "the server could not find the requested resource")
    return responses.json(document)


def _unserved(api: ApiServer, request: web.Request, parts: list[str]) -> None:
    """Count a request for a resource the server does not serve (under the key the resource
    would have as a CRD: `podgroups.scheduling.x-k8s.io`) and record the access it asked for:
    as in kube-apiserver, authorization (which reads the URL alone) comes before the 404, so the
    product's roles must grant it (a PodGroup API the cluster lacks is asked for all the same)."""
    group, rest = ("", parts[2:]) if parts[0] == "api" else (parts[1], parts[3:])
    if len(rest) >= 3 and rest[0] == "namespaces":
        rest = rest[2:]
    name, sub = (rest[1] if len(rest) > 1 else ""), (rest[2] if len(rest) > 2 else "")
    unserved = Resource(group, parts[2 if group else 1], rest[0], "", True, qualified=bool(group))
    verb = _verb(request, name)
    api.requests[verb, unserved.key, sub] += 1
    record_access(api.access, request.headers.get("User-Agent", ""), unserved, sub, verb)


def _verb(request: web.Request, name: str) -> str:
    if request.method != "GET":
        return _VERBS.get(request.method, request.method.lower())
    if name:
        return "get"
    return "watch" if request.query.get("watch", "").lower() in ("true", "1") else "list"


def _injected(request: web.Request, fault: Fault) -> web.StreamResponse:
    if fault.drop:
        assert request.transport is not None
        request.transport.abort()
        return web.Response(status=500)  # never sent: the connection is gone
    headers = {"Retry-After": str(fault.retry_after)} if fault.retry_after else {}
    details = {"retryAfterSeconds": fault.retry_after} if fault.retry_after else None
    return responses.json(
        status(fault.status, fault.message, details=details), fault.status, headers
    )


async def _dispatch(
    api: ApiServer,
    request: web.Request,
    user: User,
    resource: Resource,
    namespace: str | None,
    name: str,
    sub: str,
    verb: str,
) -> web.StreamResponse:
    if verb == "list":
        return reading.list_objects(api, request, resource, namespace)
    if verb == "watch":
        return await reading.watch_objects(api, request, resource, namespace)
    if verb == "get":
        return reading.get_object(api, resource, namespace, name)
    body = orjson.loads(await request.read() or b"null")
    if verb == "create" and not name:
        validation = request.query.get("fieldValidation", "")
        stored, warnings = await writing.create(
            api, user, resource, namespace, body, validation=validation
        )
        return responses.raw(stored.raw, 201, warnings)
    if verb == "create" and sub == "eviction":
        return await writing.evict(api, user, resource, namespace, name, body)
    if verb == "create" and sub == "binding":
        return await writing.bind(api, user, resource, namespace, name, body)
    if verb in ("update", "patch") and name:
        patch = None
        if verb == "patch":
            patch = patching.media_type(request.headers.get("Content-Type", ""))
        validation = request.query.get("fieldValidation", "")
        return await writing.update(
            api, user, resource, namespace, name, sub, body, patch, validation
        )
    if verb == "delete" and name and not sub:
        options = body if isinstance(body, dict) else {}
        grace = request.query.get("gracePeriodSeconds")
        if grace is not None:
            options["gracePeriodSeconds"] = int(grace)
        return await writing.delete(api, user, resource, namespace, name, options)
    raise ApiError(405, "the server does not allow this method on the requested resource")
