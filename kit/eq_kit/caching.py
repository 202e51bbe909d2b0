"""One list-then-watch cache per kind, as client-go's reflector keeps one, for both edges.

A `Reflector` follows one collection (a kind, cluster-wide or in one namespace): a paginated
LIST (`kube.pages`), then a WATCH from the list's resourceVersion with bookmarks, read as
raw JSON lines (no kubernetes-asyncio models, the slowest part of that client; a kind's objects
decoded whole, or only the fields its sink reads: `decoding.py`). A clean
end of the stream resumes the watch from the last version seen. A 410, any ERROR event, an HTTP
error or a broken connection leads, after an exponential backoff, to a new LIST that *replaces*
the collection: what it no longer holds is deleted, so a deletion missed across the gap cannot
survive.

The reflector keeps no object: each one goes to a `Sink` that keeps only what its consumer
needs, and which is also the one record of which objects are held (`Sink.held`: what a relist
no longer holds, of the keys in the reflector's namespace, is deleted from it); a consumer with
no map by the reflector's keys wraps itself in `Keyed`. The reflector keeps only the last
version. Ready = the first LIST applied (`listed`); `Caches` is ready when all of its
reflectors are.

An optional kind (`Kind.optional`: a CRD that may not be installed, an alpha API that may be
switched off) whose LIST is answered 404 counts as an empty collection, listed: readiness does
not wait for it, and what it held is deleted (a CRD removed takes its objects along). It is
asked again after a slow backoff (`unserved`), so that a CRD installed later is picked up; the
change is logged once at info level either way, the retries only at debug level.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import orjson

from .backoff import Backoff
from .decoding import WHOLE, Decoding
from .kube import PAGE, TRANSPORT_ERRORS, ApiError, Http, pages

logger = logging.getLogger("eq_kit.caching")

RawObject = Mapping[str, Any]


@dataclass(frozen=True)
class Kind:
    """A kind the product reads or writes: the one place for its group, version and plural."""

    name: str
    group: str
    version: str
    plural: str
    namespaced: bool
    optional: bool = False
    """The cluster may not serve it: a LIST answered 404 counts as an empty collection."""

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def path(self) -> str:
        """The cluster-wide URL, e.g. `/api/v1/pods`."""
        root = f"/apis/{self.group}" if self.group else "/api"
        return f"{root}/{self.version}/{self.plural}"

    def url(self, namespace: str | None) -> str:
        if namespace is None or not self.namespaced:
            return self.path
        prefix, plural = self.path.rsplit("/", 1)
        return f"{prefix}/namespaces/{namespace}/{plural}"


def pod_groups(group: str, version: str) -> Kind:
    """A PodGroup API (several exist, `eq_engine.model.gangs.POD_GROUP_KINDS`): optional, named
    `PodGroup.<group>` (as kubectl takes it) in logs and metrics, since they share a kind and a
    plural."""
    return Kind(f"PodGroup.{group}", group, version, "podgroups", True, optional=True)


QUOTAS = Kind("ElasticQuota", "scheduling.sigs.k8s.io", "v1alpha1", "elasticquotas", True)
PODS = Kind("Pod", "", "v1", "pods", True)
NODES = Kind("Node", "", "v1", "nodes", False)
DISRUPTION_BUDGETS = Kind("PodDisruptionBudget", "policy", "v1", "poddisruptionbudgets", True)
PROFILES = Kind(
    "ElasticQuotaProfile",
    "quota.koordinator.sh",
    "v1alpha1",
    "elasticquotaprofiles",
    True,
    optional=True,  # Koordinator's CRD: the chart installs it with crds.install, else maybe none
)


class Consumer(Protocol):
    """What a consumer does with a kind's objects; `key` is `namespace/name` (or `name` for
    cluster-scoped objects). A consumer that keeps the key keeps this string, not one of its
    own: on 100,000 pods one string per pod, shared by every map that holds the pod."""

    def upsert(self, key: str, obj: RawObject) -> None: ...

    def delete(self, key: str) -> None: ...


class Sink(Consumer, Protocol):
    def held(self) -> Iterable[str]:
        """The keys of the objects it holds something for: a relist deletes those it lacks.
        On a cluster of 100,000 pods a second set of their keys costs megabytes, so the
        consumer's own map answers."""
        ...


class Keyed:
    """A `Sink` for a consumer that keeps no map by the reflector's keys: it remembers them."""

    def __init__(self, consumer: Consumer) -> None:
        self._consumer = consumer
        self._keys: set[str] = set()

    def upsert(self, key: str, obj: RawObject) -> None:
        self._keys.add(key)
        self._consumer.upsert(key, obj)

    def delete(self, key: str) -> None:
        self._keys.discard(key)
        self._consumer.delete(key)

    def held(self) -> Iterable[str]:
        return self._keys


def key_of(obj: RawObject) -> str:
    """Not interned: the interning table would cost a slot per object (45 B a pod) where
    passing the one string along costs nothing."""
    metadata = obj["metadata"]
    if type(metadata) is dict:
        namespace, name = metadata.get("namespace"), metadata["name"]
    else:  # a schema's struct (`decoding.Decoding`)
        namespace, name = metadata.namespace, metadata.name
    return f"{namespace}/{name}" if namespace else name


def version_of(obj: RawObject) -> str | None:
    """`metadata.resourceVersion`, of a map or of a schema's struct (`decoding.Decoding`);
    None where it lacks one."""
    metadata = obj["metadata"]
    version: str | None = (
        metadata.get("resourceVersion") if type(metadata) is dict else metadata.resource_version
    )
    return version


class WatchEnded(Exception):
    """The stream cannot be resumed from its version: list again (an ERROR event)."""


def relisting() -> Backoff:
    """client-go's reflector backoff: 0.8 s doubling to 30 s, each pause up to twice as long
    (jitter 1.0); reset by a LIST that succeeds."""
    return Backoff(0.8, 30.0, jitter=(1.0, 2.0))


def starting() -> Backoff:
    """Until a kind's first LIST is in: 0.8 s doubling to 5 s. Nothing is decided before it
    (readiness waits for it), so a replica started while the API server is away comes up within
    seconds of the server's return; once listed, `relisting`'s longer pauses spare the server."""
    return Backoff(0.8, 5.0, jitter=(1.0, 1.25))


def unserved() -> Backoff:
    """How often an optional kind the cluster does not serve is asked for again: 5 s doubling
    to 3 min (each pause up to half as long again), so that a CRD installed later is followed
    within minutes at the cost of a 404 every 3 minutes; reset once it is served."""
    return Backoff(5.0, 180.0, jitter=(1.0, 1.5))


class Reflector:
    def __init__(
        self,
        http: Http,
        kind: Kind,
        sink: Sink,
        *,
        namespace: str | None = None,
        page: int = PAGE,
        watch_timeout: tuple[int, int] = (300, 600),
        backoff: Backoff | None = None,
        absent: Backoff | None = None,
        decoding: Decoding = WHOLE,
    ) -> None:
        self._http, self.kind, self._sink, self._decoding = http, kind, sink, decoding
        self._url = kind.url(namespace)
        self._scope = f"{namespace}/" if namespace is not None and kind.namespaced else ""
        """The keys this reflector answers for: one sink may take several namespaces' lists."""
        self._page, self._watch_timeout = page, watch_timeout
        self._backoff = backoff or relisting()
        self._starting = starting()
        self._absent = absent or unserved()
        self.version: str | None = None
        """The last resourceVersion seen (list, event or bookmark); None: list next."""
        self.listed = asyncio.Event()
        """Set once the first LIST is applied (or, for an optional kind, answered 404)."""
        self.served: bool | None = None
        """Whether the last LIST found the kind served; None: not asked yet."""
        self.lists = self.events = 0

    async def run(self) -> None:
        while True:
            try:
                if self.version is None and not await self._list():
                    await self._absent.sleep()  # an optional kind not served: ask again later
                    continue
                await self._watch()  # a clean end: watch again from self.version
                continue
            except WatchEnded as error:
                logger.info("watching %s: %s; listing again", self.kind.name, error)
            except ApiError as error:
                # An optional kind's watch answered 404: its CRD was just removed, say so once.
                log = logger.info if self._optional(error) else logger.warning
                log("%s %s: %s; listing again", self.kind.name, self._url, error)
            except (*TRANSPORT_ERRORS, orjson.JSONDecodeError) as error:
                logger.warning("watching %s broke: %r; listing again", self.kind.name, error)
            self.version = None
            await (self._backoff if self.listed.is_set() else self._starting).sleep()

    async def snapshot(self) -> None:
        """One paginated LIST delivered to the sink, for a command that reads the cluster once
        (`kubectl eq`) with the code the caches use."""
        await self._list()

    async def _list(self) -> bool:
        """Apply a full, paginated LIST; then forget what it lacks. False: the kind is optional
        and not served (a 404), applied as an empty list."""
        seen: set[str] = set()
        version = None
        try:
            listing = pages(
                self._http, self._url, limit=self._page, decoding=self._decoding, ahead=True
            )
            async with contextlib.aclosing(listing):  # a failure here cancels the page asked for
                async for page in listing:
                    version = version or page["metadata"]["resourceVersion"]
                    self._deliver(page.get("items") or (), seen)
        except ApiError as error:
            if not self._optional(error):
                raise
            self._not_served(error)
            return False
        for key in [key for key in self._mine() if key not in seen]:
            self._sink.delete(key)
        self.version = version
        self.lists += 1
        self.listed.set()
        self._backoff.reset()
        self._absent.reset()
        if self.served is False:
            logger.info("%s is served now", self.kind.name)
        self.served = True
        logger.info("listed %d %s objects", len(seen), self.kind.name)
        return True

    def _mine(self) -> list[str]:
        """The keys the sink holds in this reflector's scope."""
        scope = self._scope
        return [key for key in self._sink.held() if key.startswith(scope)]

    def _optional(self, error: ApiError) -> bool:
        """Whether `error` says that an optional kind is not served."""
        return self.kind.optional and error.status == 404

    def _not_served(self, error: ApiError) -> None:
        """An empty list: forget what was delivered (before, or by the pages of this LIST)."""
        for key in self._mine():
            self._sink.delete(key)
        self.version = None
        self.listed.set()
        if self.served is not False:
            logger.info(
                "%s is not served (%s: %s): none counted; asking again every few minutes",
                self.kind.name,
                self._url,
                error,
            )
        else:
            logger.debug("%s is still not served", self.kind.name)
        self.served = False

    def _deliver(self, items: Iterable[RawObject], seen: set[str]) -> None:
        upsert = self._sink.upsert
        for obj in items:
            key = key_of(obj)
            seen.add(key)
            upsert(key, obj)

    async def _watch(self) -> None:
        assert self.version is not None
        low, high = self._watch_timeout
        params = {
            "watch": "true",
            "resourceVersion": self.version,
            "allowWatchBookmarks": "true",
            "timeoutSeconds": str(random.randint(low, high)),
        }
        started, events = time.monotonic(), self.events
        async with self._http.stream(self._url, params) as response:
            rest = b""
            async for chunk in response.content.iter_any():
                lines = (rest + chunk).split(b"\n")
                rest = lines.pop()
                for line in lines:
                    if line:
                        self._event(self._decoding.event(line))
            if rest.strip():
                self._event(self._decoding.event(rest))
        if self.events == events and time.monotonic() - started < 1.0:
            # client-go: a very short watch with no events is an error, not a clean end.
            raise WatchEnded("the watch ended at once without events")

    def _event(self, event: dict[str, Any]) -> None:
        kind, obj = event["type"], event["object"]
        if kind == "ERROR":
            raise WatchEnded(
                f"ERROR event {obj.get('code')} {obj.get('reason', '')}: {obj.get('message', '')}"
            )
        self.version = version_of(obj)
        if kind == "BOOKMARK":
            return
        self.events += 1
        key = key_of(obj)
        if kind == "DELETED":
            self._sink.delete(key)
        else:
            self._sink.upsert(key, obj)


class Caches:
    """The reflectors of one process: started together, ready together."""

    def __init__(self, reflectors: Iterable[Reflector]) -> None:
        self.reflectors = tuple(reflectors)
        self._tasks: list[asyncio.Task[None]] = []

    def start(self) -> None:
        self._tasks = [asyncio.create_task(r.run()) for r in self.reflectors]

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task

    @property
    def ready(self) -> bool:
        return all(r.listed.is_set() for r in self.reflectors)

    def missing(self) -> list[str]:
        """The kinds whose first LIST is not applied yet."""
        return sorted({r.kind.name for r in self.reflectors if not r.listed.is_set()})

    async def wait_ready(self) -> None:
        await asyncio.gather(*(r.listed.wait() for r in self.reflectors))


def reflectors(
    http: Http,
    sinks: Mapping[Kind, Sink],
    namespaces: Iterable[str] = (),
    *,
    schemas: Mapping[str, type] | None = None,
    **options: Any,
) -> list[Reflector]:
    """One reflector per kind, or per kind and namespace when `namespaces` are given (a
    cluster-scoped kind is followed once). `schemas`: by kind name, the fields a kind's sink
    reads, where it reads only some (`decoding.py`); a kind not named is decoded whole."""
    scopes: list[str | None] = list(namespaces) or [None]
    found = []
    for kind, sink in sinks.items():
        decoding = Decoding((schemas or {}).get(kind.name))
        for namespace in scopes if kind.namespaced else [None]:
            reflector = Reflector(
                http, kind, sink, namespace=namespace, decoding=decoding, **options
            )
            found.append(reflector)
    return found
