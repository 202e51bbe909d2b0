"""Writing what the engine computed: only our keys, only when they differ, as merge patches,
and never dropped: a write that fails stays pending until it succeeds or the object is gone.

An ElasticQuota gets the `runtime`, `request`, `used` and `waiting-pods` annotations and
`status.used` (through the status subresource where the CRD has one; on the object where it has
none, as with Koordinator's CRD: discovery says which). A pod gets its `capacity` label, and
loses the admission gate when quota admits it. Nothing else of anybody's object is touched;
a key of ours no longer wanted is removed (`null` in the patch), also inside `status.used`.

Pending objects wait in a work queue like client-go's rate-limited one (`WorkQueue`): each is
handed to one worker at a time; one that failed, or whose answer did not hold what was written,
waits 0.25 s, doubling to 5 s (or the server's `Retry-After`), then is compared and written
again from what the engine wants *then*. When the API server does not answer at all, nothing
is sent until one probe gets through (the same backoff), so an outage costs a request now and
then, not one per object. What was written is read back from the answer, not assumed.

Writes run in the background (`start`), `workers` at a time (the kit's `Pool`), while the
loop goes on recomputing: what it wants meanwhile joins the same run, and each object is
compared when a worker takes it, so a write carries what the engine wants at that moment. An
object leaves the pending set only when a comparison finds it right, never merely because a
write went through. They go through the client-side token bucket (`--api-qps`, `--api-burst`),
as raw JSON (no client models), served by rank (`Rank`) when they wait for it: what the loop
awaits first, then the groups' numbers, then the pods' labels. A worker takes its token before
it takes an object, so objects wait in their queues, not in the workers' hands: a group that
changes while every worker waits goes out at the next token, once, as the engine wants it then.
Each answered request counts as progress (`progress`), which the liveness probe reads: a long
burst of writes is work, not a hung loop.
"""

from __future__ import annotations

import dataclasses
import enum
import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any

from eq_engine import Pod
from eq_kit.backoff import FIRST_RETRY, LAST_RETRY, Backoff
from eq_kit.caching import PODS, QUOTAS
from eq_kit.decoding import Decode, fields
from eq_kit.kube import MERGE, TRANSPORT_ERRORS, ApiError, Http
from eq_kit.throttling import TokenBucket, WorkQueue
from eq_kit.workers import Lane, Pool

from . import patches
from .logs import logger
from .metrics import Metrics
from .view import ClusterView, QuotaFields, Unread, WrittenPod, WrittenQuota, label_in

_POD_ANSWER = fields(WrittenPod)
_QUOTA_ANSWER = fields(WrittenQuota)
_UNREAD = fields(Unread)


class Rank(enum.IntEnum):
    """Who goes first when writes wait for the budget (`--api-qps`, `TokenBucket`): the lower
    the number, the sooner. Each rank gets only the tokens the ranks before it leave: under a
    budget smaller than the writes wanted, the labels wait while groups have writes due."""

    LOOP = 0
    """What the loop awaits before it goes on (the bucket's default rank, so the callers
    outside this module need not name it): a pod's admission gate lifted, evictions and the
    reclaim stamp, the built-in groups created. Each is bounded by its own pacing (admission,
    `--max-evictions` per `--reclaim-delay`), and while the loop waits it recomputes nothing:
    behind the groups' writes it would leave them stale."""
    GROUPS = 1
    """A group's annotations and `status.used`: what users and schedulers read. At most one
    write of a group is in flight, so their share is bounded by the groups that change."""
    EVENTS = 2
    """Events, sent by a task of their own (`events.Recorder`): nothing waits for them, and
    they are aggregated and bounded in number."""
    LABELS = 3
    """Pods' capacity labels: as many as the pods, they get what the rest leaves."""


class Gone(Exception):
    """The object is not there (404): compared again once the watch has shown why."""


class NotHeld(Exception):
    """The answer does not hold what was written (a status ignored on the object): again."""


class Writer:
    def __init__(
        self,
        http: Http,
        view: ClusterView,
        metrics: Metrics,
        *,
        limiter: TokenBucket,
        workers: int,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._http, self._view, self._metrics = http, view, metrics
        self._limiter, self._workers, self._clock = limiter, workers, clock
        self.groups, self.pods = self._queue(), self._queue()
        """Objects to compare and maybe write, with their backoff (new ones: due now)."""
        metrics.pending_writes.labels("ElasticQuota").set_function(lambda: len(self.groups))
        metrics.pending_writes.labels("Pod").set_function(lambda: len(self.pods))
        self._unreachable = Backoff(FIRST_RETRY, LAST_RETRY)
        """Failures in a row to reach the API server: no write is sent before its end."""
        self._status_subresource: bool | None = None
        """Whether the CRD serves `/status` (discovery says); None: ask before the next write."""
        self.progress = time.monotonic()
        """When a write was last answered."""
        self._caught_up = True
        """Every group has been taken once since the workers started (`start`)."""
        self._pool = Pool(
            "writers",
            clock=clock,
            crashed=self._crashed,
            hold=self._unreachable,
            budget=limiter,
        )

    def _queue(self) -> WorkQueue:
        return WorkQueue(FIRST_RETRY, LAST_RETRY, self._clock)

    def want(self, groups: Iterable[str] = (), pods: Iterable[str] = ()) -> None:
        """Compare these objects soon (a pending one keeps its backoff)."""
        added = [self.groups.add(name) for name in groups] + [self.pods.add(key) for key in pods]
        if any(added):  # the workers resting have something to do
            self._pool.wake()

    def clear(self) -> None:
        """Stop writing and forget what was pending (a stand-by writes nothing; a new leader
        compares all). Writes still in flight finish on queues of their own."""
        self.groups, self.pods = self._queue(), self._queue()
        self._pool.stop()

    @property
    def reachable(self) -> bool:
        return self._unreachable.due(self._clock())

    def start(self) -> None:
        """Start the workers unless they run; they stay, waiting for work, until `clear`.
        All but one take groups first, and that one pods first, each the other kind when its
        own has nothing due: without a budget, the groups (a bounded set, each coalesced) get
        most of what the server answers while labels are due (a quarter of the workers taking
        labels first left them seconds behind under a churn that kept the operator's CPU busy),
        and the labels never less than one worker's round trips; with a budget, the groups also
        go first for the tokens (`Rank`). Until every group has been taken once (a new leader's
        first comparison of all), every worker takes groups first: a first install has every
        group's numbers right before it labels."""
        if self._pool.running:
            return
        self._caught_up = False
        groups = Lane("ElasticQuota", self.groups, self._group_write, Rank.GROUPS)
        catching_up = dataclasses.replace(groups, only_while=self._catching_up)
        pods = Lane("Pod", self.pods, self._pod_write, Rank.LABELS)
        for_pods = min(self._workers - 1, 1)
        for_groups = self._workers - for_pods
        self._pool.start([((groups, pods), for_groups), ((catching_up, pods, groups), for_pods)])

    def _catching_up(self) -> bool:
        """Whether the groups wanted when the workers started are still being taken."""
        self._caught_up = self._caught_up or not self.groups.due()
        return not self._caught_up

    async def settled(self) -> None:
        """Until every worker waits with nothing due (no write in flight); at once if none
        runs."""
        await self._pool.settled()

    async def stopped(self) -> None:
        """Until the workers (if any) have ended, after `clear`."""
        await self._pool.stopped()

    def _group_write(self, queue: WorkQueue, name: str) -> Awaitable[None] | None:
        """The write the group's object needs; None if none."""
        view = self._view
        ref, seen = view.quota_refs.get(name), view.quota_fields.get(name)
        try:
            status = view.engine.status(name)
        except KeyError:
            status = None  # the group went away since
        waiting = view.waiting.get(name, "")
        wanted = None if status is None else QuotaFields.wanted(status, waiting)
        if ref is None or seen is None or wanted is None or wanted == seen:
            return None  # right already, or no object to write to (it may come: the watch says)
        return self._write_group(queue, name, ref.namespace, wanted, seen)

    def _pod_write(self, queue: WorkQueue, key: str) -> Awaitable[None] | None:
        """The label write the pod needs; None if none."""
        label = self._view.engine.capacity_label(key)
        if self._view.held_label(key, label) == label:
            return None  # right already, or no object to write to
        return self._write_label(queue, key, label)

    async def _write_group(
        self, queue: WorkQueue, name: str, namespace: str, wanted: QuotaFields, seen: QuotaFields
    ) -> None:
        path = f"{QUOTAS.url(namespace)}/{name}"

        async def write() -> None:
            current = seen
            if wanted.annotations != current.annotations:
                current = await self._patch(path, patches.owned_annotations(wanted))
            if wanted.status_used != current.status_used:
                current = await self._write_status(path, wanted, current)
            if name in self._view.quota_fields:  # not deleted meanwhile
                self._view.quota_fields[name] = current
            if current != wanted:  # e.g. an API server that ignored status on the object
                raise NotHeld(f"ElasticQuota {namespace}/{name} does not hold what was written")

        await self._attempt("ElasticQuota", name, queue, write)

    async def _patch(self, path: str, patch: Mapping[str, Any]) -> QuotaFields:
        return QuotaFields.of(await self._send("PATCH", path, patch, Rank.GROUPS, _QUOTA_ANSWER))

    async def _write_status(self, path: str, wanted: QuotaFields, seen: QuotaFields) -> QuotaFields:
        """`status.used` as wanted, resources no longer used removed."""
        patch = patches.status_used(wanted, seen)
        if self._status_subresource is None:
            self._status_subresource = await self._serves_status()
        if self._status_subresource:
            try:
                return await self._patch(f"{path}/status", patch)
            except Gone:
                # Gone, or a CRD without the status subresource (changed since): ask again.
                self._status_subresource = await self._serves_status()
                if self._status_subresource:
                    raise
                logger.info("no status subresource: writing status.used on the object")
        written = await self._patch(path, patch)
        if written.status_used != wanted.status_used:
            self._status_subresource = None  # ignored: the CRD may have gained `/status`
        return written

    async def _serves_status(self) -> bool:
        """Whether the CRD serves `/status`: a read, once (and after a 404 there), not paced by
        the budget, as the caches' reads are not."""
        listed = await self._http.get_json(f"/apis/{QUOTAS.group}/{QUOTAS.version}", {})
        names = {resource.get("name") for resource in listed.get("resources") or ()}
        return f"{QUOTAS.plural}/status" in names

    async def lift_gate(self, pod: Pod) -> bool:
        """Remove the admission gate from `pod`, keeping any other gate (one attempt: the
        admitter decides again). The API server only lets gates be removed, so a list that
        went stale meanwhile is refused, never restored."""
        patch = patches.gate_lifted(pod)
        path = f"{PODS.url(pod.namespace)}/{pod.name}"

        async def write() -> None:
            await self._send("PATCH", path, patch, Rank.LOOP, _UNREAD)

        return await self._attempt("Pod", pod.key, None, write)

    async def _write_label(self, queue: WorkQueue, key: str, label: str | None) -> None:
        namespace, name = key.split("/", 1)
        patch = patches.capacity_label(label)

        async def write() -> None:
            path = f"{PODS.url(namespace)}/{name}"
            body = await self._send("PATCH", path, patch, Rank.LABELS, _POD_ANSWER)
            held = label_in(body)
            self._view.label_written(key, held)
            if held != label:  # e.g. a mutating webhook took it off: again, after a pause
                raise NotHeld(f"Pod {key} does not hold the label written")

        await self._attempt("Pod", key, queue, write)

    async def _send(
        self, method: str, path: str, body: Any, rank: Rank, decode: Decode
    ) -> dict[str, Any]:
        """`decode`: into the fields read of the answer."""
        await self._limiter.acquire(rank)
        try:
            answer = await self._http.send(method, path, body, content_type=MERGE, decode=decode)
        except ApiError as error:
            self.progress = time.monotonic()  # answered, if with an error
            if error.status == 404:
                raise Gone from error
            raise
        self.progress = time.monotonic()
        return answer

    async def _attempt(
        self, kind: str, key: str, queue: WorkQueue | None, write: Callable[[], Any]
    ) -> bool:
        """Run `write` once. Done: compared again at once (off the queue when found right);
        failed or gone: compared again after a pause (gone: the watch has the deletion by
        then, and a namesake created meanwhile keeps its write)."""
        if not self.reachable:
            return False  # the server is away: wait for the probe, send nothing (put back)
        try:
            await write()
        except Gone:
            self._metrics.count_write(kind, "gone")
            if queue is not None:
                queue.failed(key)
            return False
        except (ApiError, NotHeld) as error:
            self._unreachable.reset()
            after = error.retry_after if isinstance(error, ApiError) else 0.0
            self._failed(kind, key, queue, f"{error}", after)
            return False
        except TRANSPORT_ERRORS as error:
            if self.reachable:
                self._unreachable.failed(self._clock())
            self._failed(kind, key, queue, repr(error), 0.0)
            return False
        self._unreachable.reset()
        self._metrics.count_write(kind, "ok")
        if queue is not None:
            failures = queue.again(key)
            if failures:
                logger.info("wrote %s %s after %d failed attempts", kind, key, failures)
        return True

    def _crashed(self, kind: str, queue: WorkQueue, key: str, error: Exception) -> None:
        self._failed(kind, key, queue, repr(error), 0.0, trace=True)

    def _failed(
        self,
        kind: str,
        key: str,
        queue: WorkQueue | None,
        why: str,
        retry_after: float,
        *,
        trace: bool = False,
    ) -> None:
        """Count and log the failure (a pending object only its first, with the traceback
        where `trace`: a bug), and back the object off."""
        self._metrics.count_write(kind, "error")
        failures = None if queue is None else queue.failed(key, retry_after)
        level = logging.ERROR if trace else logging.WARNING
        if failures is None:
            logger.log(level, "writing %s %s failed: %s", kind, key, why, exc_info=trace)
        elif failures == 1:
            logger.log(
                level, "writing %s %s failed: %s; it stays pending", kind, key, why, exc_info=trace
            )
