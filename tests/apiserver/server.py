"""The emulated kube-apiserver: its state (storage, schemas, injected faults, users), its
serving on 127.0.0.1 and the in-process helpers tests call. Requests are answered by
routing.py. See `__init__` for the public API."""

from __future__ import annotations

import collections
import copy
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aiohttp import web

from . import routing, strategies
from .admission import Admission, User
from .errors import ApiError, not_found
from .faults import Fault, Faults
from .resources import (
    BUILTINS,
    PROFILE_CRD_FILE,
    Catalog,
    Resource,
    crd_as_served,
    from_crd,
    load_crd,
    served_version,
)
from .schemas import Schemas
from .storage import Storage, Stored, error_line, key_of

ADMIN = User("kubernetes-admin", ("system:masters", "system:authenticated"))
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
    profiles: bool = True
    """Serve Koordinator's ElasticQuotaProfile CRD (quota.koordinator.sh/v1alpha1), as the chart
    installs it with the ElasticQuota's; False: a cluster without it."""


class ApiServer:
    """kube-apiserver 1.32 as the product sees it. `async with ApiServer() as api:` serves on
    127.0.0.1 (`api.url`) until the block ends."""

    def __init__(
        self, config: Config | None = None, *, serving: Iterable[dict[str, Any]] = ()
    ) -> None:
        """`serving`: CRDs besides the repository's ElasticQuota CRD, installed before the first
        request (tests/crds/), and besides the chart's ElasticQuotaProfile CRD
        (`Config.profiles`), whose objects the helpers know as
        `elasticquotaprofiles.quota.koordinator.sh`."""
        self.config = config or Config()
        crd = load_crd()
        self.quotas = from_crd(crd, status_subresource=self.config.quota_status_subresource)
        self.catalog = Catalog((*BUILTINS, self.quotas))
        self.schemas = Schemas(
            self.catalog.all, {self.quotas.plural: served_version(crd)["schema"]["openAPIV3Schema"]}
        )
        self.storage = Storage(
            self.catalog.all, window=self.config.window, snapshot_ttl=self.config.snapshot_ttl
        )
        self.users: dict[str, User] = {"admin": ADMIN}
        self.default_user: User | None = ADMIN  # for unknown tokens; None: 401
        self.admission = Admission()
        self.faults = Faults()
        self.evictions: EvictionHook = lambda pod: None
        self.requests: collections.Counter[tuple[str, str, str]] = collections.Counter()
        self.journal: collections.deque[tuple[str, str, str]] = collections.deque(maxlen=10_000)
        """The last requests (verb, resource, subresource) in the order they came, as an audit
        log shows them."""
        self.access: set[tuple[str, str, str, str]] = set()
        self._port = 0
        self._runner: web.AppRunner | None = None
        self._site: web.TCPSite | None = None
        self.seed(crd_as_served(crd, self.quotas))
        if self.config.profiles:
            self.serve_crd(load_crd(PROFILE_CRD_FILE))
        for other in serving:
            self.serve_crd(other)

    def serve_crd(self, crd: dict[str, Any]) -> Resource:
        """Install a CRD besides the ElasticQuota's: stored (unless it is) and served at once,
        as an Established CRD (see `install`)."""
        if self.get("customresourcedefinitions", crd["metadata"]["name"]) is None:
            self.seed(crd_as_served(crd, from_crd(crd, qualified=True)))
        return self.install(crd)

    def install(self, crd: dict[str, Any]) -> Resource:
        """Serve the CRD's storage version, unless served already; what storing a CRD object
        does (`seed`, a create through the API). The helpers know it as `plural.group`
        (`Resource.key`): two PodGroup APIs share a plural."""
        resource = from_crd(crd, qualified=True)
        found = self.catalog.find(resource.group, resource.version, resource.plural)
        if found is not None:
            return found
        self.catalog.add(resource)
        self.storage.add(resource)
        self.schemas.add(resource, served_version(crd)["schema"]["openAPIV3Schema"])
        return resource

    # Serving.

    @property
    def url(self) -> str:
        return f"http://{self.address}"

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self._port}"

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
        sockets = getattr(self._site._server, "sockets", None)  # asyncio's Server or uvloop's
        assert sockets
        self._port = int(sockets[0].getsockname()[1])

    async def _serve(self, request: web.Request) -> web.StreamResponse:
        return await routing.serve(self, request)

    async def stop(self) -> None:
        self.faults.release()
        self.close_watches()
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
        stored: list[dict[str, Any]] = []
        for obj in objects:
            resource = self.catalog.by_kind[obj["apiVersion"], obj["kind"]]
            obj = strategies.wipe_for_create(copy.deepcopy(obj))
            namespace = obj["metadata"].get("namespace") if resource.namespaced else None
            obj = strategies.check_namespace(resource, obj, namespace)
            self.provision(namespace)
            obj = strategies.fill_for_create(resource, obj)
            if "status" in objects[len(stored)]:  # seeding may set any status
                obj["status"] = copy.deepcopy(objects[len(stored)]["status"])
            obj, _ = self.schemas.prune(resource, obj, "Ignore")  # what storage would hold
            stored.append(self.storage.put(resource, obj, type="ADDED").obj)
            if resource.plural == "customresourcedefinitions":
                self.install(obj)
        return stored

    def get(self, key: str, name: str, namespace: str | None = None) -> dict[str, Any] | None:
        """The stored object of the resource `key` (`pods`, `podgroups.scheduling.x-k8s.io`)."""
        found = self.storage.get(self.catalog.named(key), namespace, name)
        return None if found is None else found.obj

    def objects(self, key: str) -> list[dict[str, Any]]:
        return [s.obj for s in self.storage.tables[key].items.values()]

    def count(self, verb: str, resource: str, subresource: str = "") -> int:
        """Requests of `verb` (create, list, watch, ...) on the resource of that key."""
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

    def watchers(self, key: str) -> int:
        return len(self.storage.tables[key].watchers)

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

    # For the handlers (routing.py and what it calls).

    def provision(self, namespace: str | None) -> None:
        """Create `namespace` when missing (NamespaceAutoProvision), or refuse with the 404 of
        NamespaceLifecycle when `config.autoprovision_namespaces` is off."""
        if not namespace or self.get("namespaces", namespace) is not None:
            return
        if not self.config.autoprovision_namespaces:
            raise not_found("namespaces", "", namespace)
        resource = self.catalog.named("namespaces")
        obj = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}
        self.storage.put(resource, strategies.fill_for_create(resource, obj), type="ADDED")

    def stored(self, resource: Resource, namespace: str | None, name: str) -> Stored:
        """The stored object, or the 404 its request gets."""
        found = self.storage.get(resource, namespace, name)
        if found is None:
            raise not_found(resource.plural, resource.group, name)
        return found
