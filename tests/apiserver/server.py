"""The emulated kube-apiserver: an aiohttp application over `Storage`, with admission webhooks,
injectable faults and in-process helpers for tests. See `__init__` for the public API."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import copy
import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import orjson
from aiohttp import web
from multidict import CIMultiDict

from . import discovery, openapi, patching, strategies, tables
from .access import record_access
from .admission import Admission, Request, User
from .errors import ApiError, already_exists, conflict, internal, invalid, not_found, status
from .faults import Fault, Faults
from .resources import (
    BUILTINS,
    Catalog,
    Resource,
    crd_as_served,
    from_crd,
    load_crd,
    served_version,
)
from .schemas import Schemas
from .selectors import parse_fields, parse_labels
from .storage import Storage, Stored, error_line, key_of

ADMIN = User("kubernetes-admin", ("system:masters", "system:authenticated"))
VERSION = {
    "major": "1",
    "minor": "32",
    "gitVersion": "v1.32.3",
    "gitCommit": "emulated",
    "gitTreeState": "clean",
    "buildDate": "2025-03-11T00:00:00Z",
    "goVersion": "go1.23.6",
    "compiler": "gc",
    "platform": "linux/amd64",
}
_VERBS = {"POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}
# names.SimpleNameGenerator's alphabet: no vowels, no look-alike digits.
_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
EvictionHook = Callable[[dict[str, Any]], ApiError | None]


@dataclass
class Config:
    window: int = 10_000
    """Events kept per resource for watches from a version (the watch cache's capacity)."""
    bookmark_interval: float = 60.0
    """Seconds between BOOKMARK events on watches that allow them (the real server: 1 minute)."""
    graceful_pods: bool = False
    """Pods on a node are only marked deleted; `finish_pod_deletion` removes them (a kubelet)."""
    quota_status_subresource: bool | None = None
    """Serve ElasticQuota with (True) or without (False, like Koordinator's CRD) `/status`;
    None: as the repository's CRD says."""
    autoprovision_namespaces: bool = True
    """Create a missing namespace on first use (NamespaceAutoProvision); False: 404 as with
    NamespaceLifecycle."""
    snapshot_ttl: float = 300.0
    """Seconds a paginated list's snapshot lives (etcd's compaction interval): later continue
    tokens get 410 Expired."""


def disruption_budget(pdb: str = "budget", *, needs: int = 1, has: int = 1) -> ApiError:
    """The 429 an eviction blocked by a PodDisruptionBudget gets (no Retry-After)."""
    return ApiError(
        429,
        "Cannot evict pod as it would violate the pod's disruption budget.",
        details={
            "causes": [
                {
                    "reason": "DisruptionBudget",
                    "message": f"The disruption budget {pdb} needs {needs} healthy pods and "
                    f"has {has} currently",
                }
            ]
        },
    )


class ApiServer:
    """kube-apiserver 1.32 as the product sees it. `async with ApiServer() as api:` serves on
    127.0.0.1 (`api.url`) until the block ends."""

    def __init__(self, config: Config | None = None, *, crd: dict[str, Any] | None = None) -> None:
        self.config = config or Config()
        crd = crd or load_crd()
        self.quotas = from_crd(crd, status_subresource=self.config.quota_status_subresource)
        self.catalog = Catalog((*BUILTINS, self.quotas))
        served = served_version(crd)
        self.printer = tables.Printer({self.quotas.plural: served})
        self.schemas = Schemas(
            self.catalog.all, {self.quotas.plural: served["schema"]["openAPIV3Schema"]}
        )
        self.openapi = openapi.Documents(self.catalog, self.schemas)
        self.storage = Storage(
            self.catalog.all, window=self.config.window, snapshot_ttl=self.config.snapshot_ttl
        )
        self.users: dict[str, User] = {"admin": ADMIN}
        self.default_user: User | None = ADMIN  # for unknown tokens; None: 401
        self.admission = Admission(self._namespace_labels)
        self.faults = Faults()
        self.evictions: EvictionHook = lambda pod: None
        self.requests: collections.Counter[tuple[str, str, str]] = collections.Counter()
        self.access: set[tuple[str, str, str, str]] = set()
        self._port = 0
        self._runner: web.AppRunner | None = None
        self._site: web.TCPSite | None = None
        self.seed(crd_as_served(crd, self.quotas))

    # Serving.

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._port}"

    async def start(self, port: int = 0) -> None:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_route("*", "/{path:.*}", self._serve)
        self._runner = web.AppRunner(app, handle_signals=False, access_log=None)
        await self._runner.setup()
        await self._listen(port)

    async def _listen(self, port: int) -> None:
        assert self._runner is not None
        self._site = web.TCPSite(self._runner, "127.0.0.1", port, reuse_address=True)
        await self._site.start()
        server = self._site._server
        assert server is not None and server.sockets
        self._port = int(server.sockets[0].getsockname()[1])

    async def stop(self) -> None:
        self.close_watches()
        await self.admission.close()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> ApiServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def go_down(self) -> None:
        """Unreachable: stop listening and drop every open connection; state is kept."""
        assert self._site is not None and self._runner is not None
        await self._site.stop()
        self.close_watches()
        for transport in list(self._runner.server._connections.values()):  # type: ignore[union-attr]
            transport.abort()

    async def come_up(self) -> None:
        """Listen again on the same port."""
        await self._listen(self._port)

    # In-process helpers for tests (no HTTP, no admission).

    def seed(self, *objects: dict[str, Any]) -> list[dict[str, Any]]:
        """Store objects as a create would (uid, timestamps, RV, status rules), without
        admission; their namespaces are created when missing."""
        stored = []
        for obj in objects:
            resource = self.catalog.by_kind[obj["apiVersion"], obj["kind"]]
            obj = strategies.wipe_for_create(copy.deepcopy(obj))
            namespace = obj["metadata"].get("namespace") if resource.namespaced else None
            obj = strategies.check_namespace(resource, obj, namespace)
            self._provision(namespace)
            obj = strategies.fill_for_create(resource, obj)
            if "status" in objects[len(stored)]:  # seeding may set any status
                obj["status"] = copy.deepcopy(objects[len(stored)]["status"])
            obj, _ = self.schemas.prune(resource, obj, "Ignore")  # what storage would hold
            stored.append(self.storage.put(resource, obj, type="ADDED").obj)
        return stored

    def get(self, plural: str, name: str, namespace: str | None = None) -> dict[str, Any] | None:
        found = self.storage.get(self.catalog.named(plural), namespace, name)
        return None if found is None else found.obj

    def objects(self, plural: str) -> list[dict[str, Any]]:
        return [s.obj for s in self.storage.tables[plural].items.values()]

    def count(self, verb: str, resource: str, subresource: str = "") -> int:
        return self.requests[verb, resource, subresource]

    def fault(self, method: str, resource: str, **kwargs: Any) -> Fault:
        """Inject a fault; see `Fault` for the fields."""
        return self.faults.add(Fault(method, resource, **kwargs))

    def compact(self) -> None:
        """Compact history: resuming a watch or a paginated list from before now gets 410."""
        self.storage.compact()

    def watch_error(self, code: int = 410, message: str | None = None) -> None:
        """Send an ERROR event into every open watch, which then ends."""
        reason = "Expired" if code == 410 else None
        text = message or (
            f"too old resource version: 1 ({self.storage.rv})" if code == 410 else "injected"
        )
        for watcher in self.storage.watchers():
            watcher.send(error_line(code, text, reason=reason), finish=True)

    def close_watches(self) -> None:
        """End every open watch abruptly (no clean end of the chunked stream)."""
        for watcher in self.storage.watchers():
            watcher.send(b"", abort=True)

    def watchers(self, plural: str) -> int:
        return len(self.storage.tables[plural].watchers)

    def finish_pod_deletion(self, namespace: str, name: str) -> None:
        """What a kubelet does once a terminating pod's containers stopped: the grace-0 delete."""
        pods = self.catalog.named("pods")
        stored = self.storage.get(pods, namespace, name)
        if stored is None:
            raise KeyError(f"{namespace}/{name}")
        if stored.obj["metadata"].get("finalizers"):
            metadata = {**stored.obj["metadata"], "deletionGracePeriodSeconds": 0}
            self.storage.put(pods, {**stored.obj, "metadata": metadata}, type="MODIFIED")
        else:
            self.storage.remove(pods, key_of(namespace, name))

    def write_kubeconfig(self, path: Path, token: str = "admin") -> Path:
        """A kubeconfig for this server whose user authenticates with `token` (see `users`)."""
        path.write_text(
            "apiVersion: v1\nkind: Config\n"
            f"clusters: [{{name: emulated, cluster: {{server: '{self.url}'}}}}]\n"
            f"users: [{{name: user, user: {{token: '{token}'}}}}]\n"
            "contexts: [{name: emulated, context: {cluster: emulated, user: user}}]\n"
            "current-context: emulated\n"
        )
        return path

    def _namespace_labels(self, name: str) -> dict[str, str] | None:
        found = self.get("namespaces", name)
        return None if found is None else found["metadata"].get("labels") or {}

    def _provision(self, namespace: str | None) -> None:
        if not namespace or self.get("namespaces", namespace) is not None:
            return
        if not self.config.autoprovision_namespaces:
            raise not_found("namespaces", "", namespace)
        resource = self.catalog.named("namespaces")
        obj = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}
        self.storage.put(resource, strategies.fill_for_create(resource, obj), type="ADDED")

    # HTTP.

    async def _serve(self, request: web.Request) -> web.StreamResponse:
        try:
            user = self._authenticate(request)
            parts = [p for p in request.path.split("/") if p]
            route = self._route(parts)
            if route is None:
                return self._discovery(request, parts)
            resource, namespace, name, sub = route
            verb = self._verb(request, name)
            self.requests[verb, resource.plural, sub] += 1
            record_access(self.access, request.headers.get("User-Agent", ""), resource, sub, verb)
            fault = self.faults.take(request.method, resource.plural, sub, name, namespace)
            if fault is not None:
                return self._injected(request, fault)
            return await self._dispatch(request, user, resource, namespace, name, sub, verb)
        except ApiError as error:
            return _json(error.body, error.code, error.headers)
        except orjson.JSONDecodeError as error:
            return _json(status(400, f"couldn't decode the request body: {error}"), 400)

    def _authenticate(self, request: web.Request) -> User:
        header = request.headers.get("Authorization", "")
        token = header[7:] if header.startswith("Bearer ") else ""
        user = self.users.get(token, self.default_user)
        if user is None:
            raise ApiError(401, "Unauthorized")
        return user

    def _route(self, parts: list[str]) -> tuple[Resource, str | None, str, str] | None:
        """(resource, namespace, name, subresource) of a resource URL, None for the others."""
        if parts[:1] == ["api"] and len(parts) >= 3:
            group, version, rest = "", parts[1], parts[2:]
        elif parts[:1] == ["apis"] and len(parts) >= 4:
            group, version, rest = parts[1], parts[2], parts[3:]
        else:
            return None
        namespace = None
        if (
            len(rest) >= 3
            and rest[0] == "namespaces"
            and self.catalog.find(group, version, rest[2])
        ):
            namespace, rest = rest[1], rest[2:]
        resource = self.catalog.find(group, version, rest[0])
        if resource is None or len(rest) > 3:
            raise ApiError(404, "the server could not find the requested resource")
        name = rest[1] if len(rest) > 1 else ""
        sub = rest[2] if len(rest) > 2 else ""
        if sub and sub not in resource.subresources:
            raise ApiError(404, "the server could not find the requested resource")
        return resource, namespace if resource.namespaced else None, name, sub

    @staticmethod
    def _verb(request: web.Request, name: str) -> str:
        if request.method != "GET":
            return _VERBS.get(request.method, request.method.lower())
        if name:
            return "get"
        return "watch" if request.query.get("watch", "").lower() in ("true", "1") else "list"

    def _injected(self, request: web.Request, fault: Fault) -> web.StreamResponse:
        if fault.drop:
            assert request.transport is not None
            request.transport.abort()
            return web.Response(status=500)  # never sent: the connection is gone
        headers = {"Retry-After": str(fault.retry_after)} if fault.retry_after else {}
        details = {"retryAfterSeconds": fault.retry_after} if fault.retry_after else None
        return _json(status(fault.status, fault.message, details=details), fault.status, headers)

    def _discovery(self, request: web.Request, parts: list[str]) -> web.StreamResponse:
        address = f"127.0.0.1:{self._port}"
        documents: dict[tuple[str, ...], Callable[[], Any]] = {
            ("api",): lambda: self.catalog.api_versions(address),
            ("api", "v1"): lambda: self.catalog.resource_list("", "v1"),
            ("apis",): self.catalog.api_group_list,
            ("version",): lambda: VERSION,
        }
        if parts in (["api"], ["apis"]) and discovery.wanted(request.headers.get("Accept", "")):
            response = _json(discovery.aggregated(self.catalog, core=parts == ["api"]))
            response.headers["Content-Type"] = discovery.MEDIA_TYPE
            return response
        if tuple(parts) in documents:
            return _json(documents[tuple(parts)]())
        if parts == ["openapi", "v3"]:
            return _json(self.openapi.index())
        if parts[:2] == ["openapi", "v3"] and "/".join(parts[2:]) in self.openapi.documents:
            return _raw(self.openapi.documents["/".join(parts[2:])])
        if parts[:1] == ["apis"] and len(parts) == 2:
            group = self.catalog.api_group(parts[1])
            if group is not None:
                return _json({"kind": "APIGroup", "apiVersion": "v1", **group})
        if parts[:1] == ["apis"] and len(parts) == 3:
            listed = self.catalog.resource_list(parts[1], parts[2])
            if listed is not None:
                return _json(listed)
        if parts in (["healthz"], ["readyz"], ["livez"]):
            return web.Response(text="ok")
        raise ApiError(404, "the server could not find the requested resource")

    async def _dispatch(
        self,
        request: web.Request,
        user: User,
        resource: Resource,
        namespace: str | None,
        name: str,
        sub: str,
        verb: str,
    ) -> web.StreamResponse:
        if verb == "list":
            return self._list(request, resource, namespace)
        if verb == "watch":
            return await self._watch(request, resource, namespace)
        if verb == "get":
            stored = self._stored(resource, namespace, name)
            version = tables.wanted(request.headers.get("Accept", ""))
            if version is None:
                return _raw(stored.raw)
            rv = {"resourceVersion": stored.obj["metadata"].get("resourceVersion", "")}
            return self._table(request, resource, [stored.obj], version, rv)
        if "protobuf" in request.headers.get("Content-Type", ""):
            # Typed kubectl commands (`create namespace`, `run`) send protobuf: not emulated.
            raise ApiError(
                415,
                "the body of the request was in an unknown format - accepted media types "
                "include: application/json (the emulator decodes no protobuf)",
            )
        body = orjson.loads(await request.read() or b"null")
        if verb == "create" and not name:
            validation = request.query.get("fieldValidation", "")
            stored, warnings = await self._create(
                user, resource, namespace, body, validation=validation
            )
            return _raw(stored.raw, 201, warnings)
        if verb == "create" and sub == "eviction":
            return await self._evict(user, resource, namespace, name, body)
        if verb == "create" and sub == "binding":
            return await self._bind(user, resource, namespace, name, body)
        if verb in ("update", "patch") and name:
            patch = None
            if verb == "patch":
                patch = patching.media_type(request.headers.get("Content-Type", ""))
            validation = request.query.get("fieldValidation", "")
            return await self._update(user, resource, namespace, name, sub, body, patch, validation)
        if verb == "delete" and name and not sub:
            options = body if isinstance(body, dict) else {}
            grace = request.query.get("gracePeriodSeconds")
            if grace is not None:
                options["gracePeriodSeconds"] = int(grace)
            return await self._delete(user, resource, namespace, name, options)
        raise ApiError(405, "the server does not allow this method on the requested resource")

    def _stored(self, resource: Resource, namespace: str | None, name: str) -> Stored:
        found = self.storage.get(resource, namespace, name)
        if found is None:
            raise not_found(resource.plural, resource.group, name)
        return found

    # LIST and WATCH.

    def _matcher(
        self, request: web.Request, resource: Resource
    ) -> Callable[[dict[str, Any]], bool] | None:
        labels = request.query.get("labelSelector", "")
        fields = request.query.get("fieldSelector", "")
        checks: list[Callable[[dict[str, Any]], bool]] = []
        if labels:
            match = parse_labels(labels)
            checks.append(lambda o: match(o["metadata"].get("labels") or {}))
        if fields:
            checks.append(parse_fields(fields, resource))
        if not checks:
            return None
        return lambda o: all(check(o) for check in checks)

    def _list(
        self, request: web.Request, resource: Resource, namespace: str | None
    ) -> web.StreamResponse:
        query = request.query
        token = query.get("continue") or None
        rv = query.get("resourceVersion", "")
        if token and rv not in ("", "0"):
            raise ApiError(400, "specifying resource version is not allowed when using continue")
        limit = 0 if rv == "0" else int(query.get("limit") or 0)
        items, list_rv, next_token, remaining = self.storage.list(
            resource, namespace, matches=self._matcher(request, resource), limit=limit, token=token
        )
        metadata: dict[str, Any] = {"resourceVersion": str(list_rv)}
        if next_token:
            metadata["continue"] = next_token
            if remaining is not None:
                metadata["remainingItemCount"] = remaining
        head = orjson.dumps(
            {
                "kind": resource.kind + "List",
                "apiVersion": resource.api_version,
                "metadata": metadata,
            }
        )
        version = tables.wanted(request.headers.get("Accept", ""))
        if version is not None:
            objects = [orjson.loads(item) for item in items]
            return self._table(request, resource, objects, version, metadata)
        body = head[:-1] + b',"items":[' + b",".join(items) + b"]}"
        return _raw(body)

    def _table(
        self,
        request: web.Request,
        resource: Resource,
        objects: list[dict[str, Any]],
        version: str,
        metadata: dict[str, Any],
    ) -> web.Response:
        include = request.query.get("includeObject", "Metadata")
        table = self.printer.table(
            resource, objects, version=version, metadata=metadata, include=include
        )
        response = _json(table)
        response.headers["Content-Type"] = tables.MEDIA_TYPE.replace("v=v1", f"v={version}")
        return response

    def _table_lines(
        self, request: web.Request, resource: Resource
    ) -> Callable[[bytes], bytes] | None:
        """For a watch asking for Tables: each event's object as a one-row Table, the first
        one with the column definitions (watchEmbeddedEncoder)."""
        version = tables.wanted(request.headers.get("Accept", ""))
        if version is None:
            return None
        include = request.query.get("includeObject", "Metadata")
        headers = [True]

        def convert(line: bytes) -> bytes:
            if not line:
                return line
            event = orjson.loads(line)
            if event["type"] in ("ERROR", "BOOKMARK"):
                return line
            event["object"] = self.printer.table(
                resource,
                [event["object"]],
                version=version,
                metadata={"resourceVersion": event["object"]["metadata"]["resourceVersion"]},
                include=include,
                headers=headers[0],
            )
            headers[0] = False
            return orjson.dumps(event) + b"\n"

        return convert

    async def _watch(
        self, request: web.Request, resource: Resource, namespace: str | None
    ) -> web.StreamResponse:
        query = request.query
        rv = query.get("resourceVersion", "")
        try:
            since = None if rv in ("", "0") else int(rv)
        except ValueError as error:
            raise ApiError(
                400, f'resourceVersion: Invalid value: "{rv}": must be an integer'
            ) from error
        bookmarks = query.get("allowWatchBookmarks", "").lower() in ("true", "1")
        timeout = float(query["timeoutSeconds"]) if query.get("timeoutSeconds") else None
        matches = self._matcher(request, resource)
        watcher, first = self.storage.watch(resource, namespace, matches, since)
        convert = self._table_lines(request, resource)
        if convert is not None:
            first = iter([convert(line) for line in first])
        response = web.StreamResponse(headers={"Content-Type": "application/json"})
        response.enable_chunked_encoding()
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        try:
            await response.prepare(request)
            chunk: list[bytes] = []
            for line in first:
                chunk.append(line)
                if len(chunk) >= 1000:
                    await response.write(b"".join(chunk))
                    chunk = []
            if chunk:
                await response.write(b"".join(chunk))
            if since is not None and since < self.storage.tables[resource.plural].window_start:
                await response.write_eof()
                return response
            next_bookmark = loop.time() + self.config.bookmark_interval
            while True:
                wait = next_bookmark - loop.time() if bookmarks else None
                if deadline is not None:
                    left = deadline - loop.time()
                    wait = left if wait is None else min(wait, left)
                if not watcher.buffer:
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(watcher.wake.wait(), timeout=wait)
                watcher.wake.clear()
                if deadline is not None and loop.time() >= deadline and not watcher.buffer:
                    break
                if bookmarks and loop.time() >= next_bookmark:
                    watcher.buffer.append(self._bookmark(resource))
                    next_bookmark = loop.time() + self.config.bookmark_interval
                lines, watcher.buffer = watcher.buffer, []
                if convert is not None:
                    lines = [convert(line) for line in lines]
                if watcher.abort:
                    if request.transport is not None:
                        request.transport.abort()
                    return response
                if lines:
                    await response.write(b"".join(lines))
                if watcher.finish:
                    break
            await response.write_eof()
        except (ConnectionResetError, aiohttp.ClientConnectionResetError):
            pass
        finally:
            self.storage.unwatch(resource, watcher)
        return response

    def _bookmark(self, resource: Resource) -> bytes:
        obj = {
            "kind": resource.kind,
            "apiVersion": resource.api_version,
            "metadata": {"resourceVersion": str(self.storage.rv)},
        }
        return b'{"type":"BOOKMARK","object":' + orjson.dumps(obj) + b"}\n"

    # Writes.

    async def _create(
        self,
        user: User,
        resource: Resource,
        namespace: str | None,
        body: Any,
        *,
        admit: bool = True,
        validation: str = "",
    ) -> tuple[Stored, list[str]]:
        if not isinstance(body, dict):
            raise ApiError(400, "the body of the request is not an object")
        given = body.get("apiVersion")
        if given and given != resource.api_version:
            raise ApiError(
                400,
                f"the API version in the data ({given}) does not match the expected API version "
                f"({resource.api_version})",
            )
        obj = {**body, "apiVersion": resource.api_version, "kind": resource.kind}
        obj = strategies.check_namespace(resource, strategies.wipe_for_create(obj), namespace)
        obj, unknown = self.schemas.prune(resource, obj, validation)
        metadata = obj["metadata"]
        if not metadata.get("name") and not metadata.get("generateName"):
            raise invalid(
                resource.kind,
                "",
                ["metadata.name: Required value: name or generateName is required"],
            )
        self._provision(namespace if resource.namespaced else None)
        attrs = Request("CREATE", resource, namespace, metadata.get("name", ""), obj, None, user)
        warnings = unknown + (await self.admission.mutate(attrs) if admit else [])
        for attempt in range(8):  # maxNameGenerationCreateAttempts
            candidate = strategies.fill_for_create(resource, copy.deepcopy(attrs.obj or {}))
            meta = candidate["metadata"]
            generated = not meta.get("name")
            if generated:
                base = meta["generateName"][:58]
                meta["name"] = base + "".join(random.choices(_NAME_ALPHABET, k=5))
            strategies.validate_create(resource, candidate)
            if admit:
                check = Request("CREATE", resource, namespace, meta["name"], candidate, None, user)
                warnings += await self.admission.validate(check)
            if meta.get("resourceVersion"):
                raise internal("resourceVersion should not be set on objects to be created")
            if self.storage.get(resource, namespace, meta["name"]) is None:
                return self.storage.put(resource, candidate, type="ADDED"), warnings
            if not generated:
                raise already_exists(resource.plural, resource.group, meta["name"])
            del attempt
        error = already_exists(resource.plural, resource.group, meta["name"])
        error.body["message"] += (
            ", the server was not able to generate a unique name for the object"
        )
        error.body["details"]["retryAfterSeconds"] = 1
        raise error

    async def _update(
        self,
        user: User,
        resource: Resource,
        namespace: str | None,
        name: str,
        sub: str,
        body: Any,
        patch: str | None,
        validation: str = "",
    ) -> web.StreamResponse:
        """PUT (`patch` None) or PATCH (`patch` the media type) of an object or its status."""
        stored = self._stored(resource, namespace, name)
        old = stored.obj
        if patch == patching.MERGE:
            # What is stored was pruned already: only the patch can bring unknown fields, and
            # pruning it alone spares a walk of the whole object on every write.
            body, unknown = self.schemas.prune(resource, body, validation, patch=True)
            new = patching.apply(patch, old, body, custom=resource.custom)
        else:
            new = (
                body if patch is None else patching.apply(patch, old, body, custom=resource.custom)
            )
            new, unknown = self.schemas.prune(resource, new, validation)
        if not isinstance(new, dict):
            raise ApiError(400, "the body of the request is not an object")
        given_name = (new.get("metadata") or {}).get("name")
        if patch is None and given_name != name:
            raise ApiError(
                400,
                f"the name of the object ({given_name}) does not match the name on the URL "
                f"({name})",
            )
        new = strategies.check_namespace(resource, new, namespace)
        attrs = Request("UPDATE", resource, namespace, name, new, old, user, sub)
        warnings = unknown + await self.admission.mutate(attrs)
        new = attrs.obj or {}
        rv = (new.get("metadata") or {}).get("resourceVersion")
        if rv and rv != old["metadata"]["resourceVersion"]:
            raise conflict(resource.plural, resource.group, name)
        if not rv and resource.custom:
            raise invalid(
                resource.kind,
                name,
                ["metadata.resourceVersion: Invalid value: 0x0: must be specified for an update"],
                group=resource.group,
            )
        result = strategies.prepare_update(resource, sub, new, old)
        check = Request("UPDATE", resource, namespace, name, result, old, user, sub)
        warnings += await self.admission.validate(check)
        if strategies.same(result, old):
            return _raw(stored.raw, 200, warnings)
        metadata = result["metadata"]
        if (
            metadata.get("deletionTimestamp")
            and not metadata.get("finalizers")
            and not metadata.get("deletionGracePeriodSeconds")
        ):
            self.storage.remove(resource, key_of(namespace, name))
            return _json(result, 200, warnings=warnings)
        return _raw(self.storage.put(resource, result, type="MODIFIED").raw, 200, warnings)

    async def _delete(
        self,
        user: User,
        resource: Resource,
        namespace: str | None,
        name: str,
        options: dict[str, Any],
        *,
        admit: bool = True,
    ) -> web.StreamResponse:
        stored = self._stored(resource, namespace, name)
        old = stored.obj
        metadata = old["metadata"]
        preconditions = options.get("preconditions") or {}
        for field, what in (("uid", "UID"), ("resourceVersion", "ResourceVersion")):
            wanted = preconditions.get(field)
            if wanted and wanted != metadata.get(field):
                why = {"uid": "deleted and then recreated", "resourceVersion": "modified"}[field]
                raise conflict(
                    resource.plural,
                    resource.group,
                    name,
                    f"Precondition failed: {what} in precondition: {wanted}, {what} in object "
                    f"meta: {metadata.get(field)}. The object might have been {why}",
                )
        warnings: list[str] = []
        if admit:
            attrs = Request("DELETE", resource, namespace, name, None, old, user, options=options)
            warnings = await self.admission.mutate(attrs) + await self.admission.validate(attrs)
        grace = self._grace(resource, old, options)
        if grace:
            if metadata.get("deletionTimestamp") and grace >= (
                metadata.get("deletionGracePeriodSeconds") or 0
            ):
                return _raw(stored.raw, 200, warnings)
            marked = {
                **metadata,
                "deletionTimestamp": strategies.now(grace),
                "deletionGracePeriodSeconds": grace,
            }
            return _raw(
                self.storage.put(resource, {**old, "metadata": marked}, type="MODIFIED").raw,
                200,
                warnings,
            )
        if metadata.get("finalizers"):
            if metadata.get("deletionTimestamp") and not metadata.get("deletionGracePeriodSeconds"):
                return _raw(stored.raw, 200, warnings)
            marked = {
                **metadata,
                "deletionTimestamp": metadata.get("deletionTimestamp") or strategies.now(),
                "deletionGracePeriodSeconds": 0,
            }
            if "generation" in metadata:
                marked["generation"] = int(metadata["generation"]) + 1
            return _raw(
                self.storage.put(resource, {**old, "metadata": marked}, type="MODIFIED").raw,
                200,
                warnings,
            )
        gone = self.storage.remove(resource, key_of(namespace, name))
        if resource.plural == "pods":
            return _raw(gone.raw, 200, warnings)
        details = {"name": name, "kind": resource.plural, "uid": metadata.get("uid")}
        if resource.group:
            details["group"] = resource.group
        return _json(status(200, "", details=details, success=True), 200, warnings=warnings)

    def _grace(self, resource: Resource, pod: dict[str, Any], options: dict[str, Any]) -> int:
        """Seconds a pod is kept terminating (podStrategy.CheckGracefulDelete); 0: delete now."""
        if resource.plural != "pods" or not self.config.graceful_pods:
            return 0
        spec = pod.get("spec") or {}
        phase = (pod.get("status") or {}).get("phase")
        if not spec.get("nodeName") or phase in ("Succeeded", "Failed"):
            return 0
        grace = options.get("gracePeriodSeconds")
        if grace is None:
            grace = spec.get("terminationGracePeriodSeconds", 30)
        return 1 if int(grace) < 0 else int(grace)

    async def _evict(
        self, user: User, resource: Resource, namespace: str | None, name: str, body: Any
    ) -> web.StreamResponse:
        if not isinstance(body, dict) or (body.get("metadata") or {}).get("name") != name:
            raise ApiError(400, "name in URL does not match name in Eviction object")
        kind = {"group": "policy", "version": "v1", "kind": "Eviction"}
        attrs = Request("CREATE", resource, namespace, name, body, None, user, "eviction", kind)
        await self.admission.mutate(attrs)
        await self.admission.validate(attrs)
        pod = self._stored(resource, namespace, name).obj
        refusal = self.evictions(pod)
        if refusal is not None:
            raise refusal
        conditions = [
            c
            for c in (pod.get("status") or {}).get("conditions") or ()
            if c.get("type") != "DisruptionTarget"
        ]
        conditions.append(
            {
                "type": "DisruptionTarget",
                "status": "True",
                "reason": "EvictionByEvictionAPI",
                "message": "Eviction API: evicting",
                "lastTransitionTime": strategies.now(),
            }
        )
        self.storage.put(
            resource,
            {**pod, "status": {**(pod.get("status") or {}), "conditions": conditions}},
            type="MODIFIED",
        )
        await self._delete(
            user, resource, namespace, name, body.get("deleteOptions") or {}, admit=False
        )
        return _json(status(201, "", success=True), 201)

    async def _bind(
        self, user: User, resource: Resource, namespace: str | None, name: str, body: Any
    ) -> web.StreamResponse:
        if not isinstance(body, dict) or not (body.get("target") or {}).get("name"):
            raise invalid("Binding", name, ["target.name: Required value"])
        kind = {"group": "", "version": "v1", "kind": "Binding"}
        attrs = Request("CREATE", resource, namespace, name, body, None, user, "binding", kind)
        await self.admission.mutate(attrs)
        await self.admission.validate(attrs)
        pod = self._stored(resource, namespace, name).obj
        spec = pod.get("spec") or {}
        node = body["target"]["name"]
        if spec.get("schedulingGates"):
            raise conflict(
                "pods/binding", "", name, f"pod {name} has non-empty .spec.schedulingGates"
            )
        if pod["metadata"].get("deletionTimestamp"):
            raise conflict(
                "pods/binding",
                "",
                name,
                f"pod {name} is being deleted, cannot be assigned to a host",
            )
        if spec.get("nodeName"):
            raise conflict(
                "pods/binding",
                "",
                name,
                f'pod {name} is already assigned to node "{spec["nodeName"]}"',
            )
        status_ = dict(pod.get("status") or {})
        conditions = [c for c in status_.get("conditions") or () if c.get("type") != "PodScheduled"]
        conditions.append(
            {"type": "PodScheduled", "status": "True", "lastTransitionTime": strategies.now()}
        )
        bound = {
            **pod,
            "spec": {**spec, "nodeName": node},
            "status": {**status_, "conditions": conditions},
        }
        self.storage.put(resource, bound, type="MODIFIED")
        return _json(status(201, "", success=True), 201)


def _headers(warnings: Iterable[str]) -> CIMultiDict[str]:
    headers: CIMultiDict[str] = CIMultiDict({"Content-Type": "application/json"})
    for text in dict.fromkeys(warnings):  # identical warnings are sent once
        headers.add("Warning", '299 - "' + text.replace('"', '\\"') + '"')
    return headers


def _raw(body: bytes, code: int = 200, warnings: Iterable[str] = ()) -> web.Response:
    return web.Response(body=body, status=code, headers=_headers(warnings))


def _json(
    obj: Any, code: int = 200, headers: dict[str, str] | None = None, warnings: Iterable[str] = ()
) -> web.Response:
    response = _raw(orjson.dumps(obj), code, warnings)
    response.headers.update(headers or {})
    return response
