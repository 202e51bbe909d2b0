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
write went through. They go through the operator's `Sender` (`sending.py`): the client-side
token bucket (`--api-qps`, `--api-burst`), as raw JSON (no client models), served by rank
(`sending.Rank`) when they wait for it: what the loop awaits first, then the groups' numbers,
then the pods' labels. A worker takes its token before it takes an object, so objects wait in
their queues, not in the workers' hands: a group that changes while every worker waits goes
out at the next token, once, as the engine wants it then. The gates' lifts go through a
`Sender` of their own (`lifts`), with a bucket of the same size (`settings.api_qps` says why).
Each answered request counts as progress (`progress`), which the liveness probe reads: a long
burst of writes is work, not a hung loop.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from eq_engine import Pod
from eq_engine.model import LabelSelector
from eq_engine.pools import pool_affinity
from eq_kit.backoff import FIRST_RETRY, LAST_RETRY, Backoff
from eq_kit.caching import PODS, QUOTAS
from eq_kit.decoding import Decode, fields
from eq_kit.kube import JSON_PATCH, MERGE
from eq_kit.throttling import WorkQueue
from eq_kit.workers import Lane, Pool

from . import patches
from .logs import logger
from .metrics import Metrics
from .sending import Done, Failed, Gone, NotDone, Rank, Sender, Sent, Unanswered
from .view import ClusterView, QuotaFields, Unread, WrittenPod, WrittenQuota, label_in

_POD_ANSWER = fields(WrittenPod)
_QUOTA_ANSWER = fields(WrittenQuota)
_UNREAD = fields(Unread)


@dataclass(frozen=True, slots=True)
class NotHeld:
    """The answer does not hold what was written (a status ignored on the object, a label a
    mutating webhook took off): compared and written again after a pause, as after a failure."""

    why: str
    retry_after: ClassVar[float] = 0.0


@dataclass(frozen=True)
class Placement:
    """The group of its pools the gate chose for a pod, and the node pool's selector (None: a
    tree of no pool, whose pods may go anywhere)."""

    group: str
    selector: LabelSelector | None
    name: str = ""
    """The pool as warnings name it: `ElasticQuotaProfile ns/name`."""

    def patch(self, raw: Mapping[str, Any]) -> list[dict[str, Any]]:
        affinity = (
            [] if self.selector is None else pool_affinity(raw, self.selector, pool=self.name).patch
        )
        return patches.placed_in_pool(raw, self.group, affinity)


class Writer:
    def __init__(
        self,
        sender: Sender,
        view: ClusterView,
        metrics: Metrics,
        *,
        workers: int,
        lifts: Sender,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """`lifts`: what the gates' lifts go through, a budget of their own."""
        self._sender, self._view, self._metrics = sender, view, metrics
        self._lifts = lifts
        self._workers, self._clock = workers, clock
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
        self._waiting: dict[str, str] = {}
        """Group name to its pods behind the admission gate, where any wait, as `kubectl get
        eq` shows them (`4`, or with the gangs among them, `8 (2 gangs)`): the groups'
        `waiting-pods` annotations as the admitter counted them last (`set_waiting`)."""
        self._pool = Pool(
            "writers",
            clock=clock,
            crashed=self._crashed,
            hold=self._unreachable,
            budget=sender.budget,
        )

    def _queue(self) -> WorkQueue:
        return WorkQueue(FIRST_RETRY, LAST_RETRY, self._clock)

    def want(self, groups: Iterable[str] = (), pods: Iterable[str] = ()) -> None:
        """Compare these objects soon (a pending one keeps its backoff)."""
        added = [self.groups.add(name) for name in groups] + [self.pods.add(key) for key in pods]
        if any(added):  # the workers resting have something to do
            self._pool.wake()

    def set_waiting(self, waiting: dict[str, str]) -> set[str]:
        """The `waiting-pods` annotation of each group where pods wait, from now on; the groups
        whose annotation is to change."""
        before, self._waiting = self._waiting, waiting
        return {
            group
            for group in waiting.keys() | before.keys()
            if waiting.get(group) != before.get(group)
        }

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
        waiting = self._waiting.get(name, "")
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

        async def write() -> NotDone | NotHeld | None:
            current = seen
            if wanted.annotations != current.annotations:
                written = await self._patch(path, patches.owned_annotations(wanted))
                if not isinstance(written, QuotaFields):
                    return written
                current = written
            if wanted.status_used != current.status_used:
                written = await self._write_status(path, wanted, current)
                if not isinstance(written, QuotaFields):
                    return written
                current = written
            self._view.quota_written(name, current)
            if current != wanted:  # e.g. an API server that ignored status on the object
                return NotHeld(f"ElasticQuota {namespace}/{name} does not hold what was written")
            return None

        await self._attempt("ElasticQuota", name, queue, write)

    async def _patch(self, path: str, patch: Mapping[str, Any]) -> QuotaFields | NotDone:
        sent = await self._send("PATCH", path, patch, Rank.GROUPS, _QUOTA_ANSWER)
        return QuotaFields.of(sent.body) if isinstance(sent, Done) else sent

    async def _write_status(
        self, path: str, wanted: QuotaFields, seen: QuotaFields
    ) -> QuotaFields | NotDone:
        """`status.used` as wanted, resources no longer used removed."""
        patch = patches.status_used(wanted, seen)
        if self._status_subresource is None:
            serves = await self._serves_status()
            if not isinstance(serves, bool):
                return serves
            self._status_subresource = serves
        if self._status_subresource:
            written = await self._patch(f"{path}/status", patch)
            if not isinstance(written, Gone):
                return written
            # Gone, or a CRD without the status subresource (changed since): ask again.
            serves = await self._serves_status()
            if not isinstance(serves, bool):
                return serves
            self._status_subresource = serves
            if serves:
                return written
            logger.info("no status subresource: writing status.used on the object")
        written = await self._patch(path, patch)
        if isinstance(written, QuotaFields) and written.status_used != wanted.status_used:
            self._status_subresource = None  # ignored: the CRD may have gained `/status`
        return written

    async def _serves_status(self) -> bool | NotDone:
        """Whether the CRD serves `/status`: a read, once (and after a 404 there), not paced by
        the budget, as the caches' reads are not."""
        match await self._sender.read(f"/apis/{QUOTAS.group}/{QUOTAS.version}"):
            case Done(listed):
                names = {resource.get("name") for resource in listed.get("resources") or ()}
                return f"{QUOTAS.plural}/status" in names
            case Gone(error):
                return Failed(error)  # the API group not served: a failure, not a gone object
            case failure:
                return failure

    async def lift_gate(self, pod: Pod, placement: Placement | None = None) -> bool:
        """Remove the admission gate from `pod`, keeping any other gate (one attempt: the
        admitter decides again). The API server only lets gates be removed, so a list that
        went stale meanwhile is refused, never restored. With `placement`, the group of its pools
        the gate chose: the pod is read, then labelled with it and its node affinity narrowed
        to its node pool in the same write (`patches.placed_in_pool`)."""
        path = f"{PODS.url(pod.namespace)}/{pod.name}"

        async def write() -> NotDone | None:
            if placement is None:
                patch: Any = patches.gate_lifted(pod)
                content = MERGE
            else:
                match await self._sender.read(path):
                    case Done(raw):
                        patch, content = placement.patch(raw), JSON_PATCH
                    case failure:
                        return failure
            sent = await self._send("PATCH", path, patch, Rank.LOOP, _UNREAD, self._lifts, content)
            return None if isinstance(sent, Done) else sent

        return await self._attempt("Pod", pod.key, None, write)

    async def _write_label(self, queue: WorkQueue, key: str, label: str | None) -> None:
        namespace, name = key.split("/", 1)
        patch = patches.capacity_label(label)

        async def write() -> NotDone | NotHeld | None:
            path = f"{PODS.url(namespace)}/{name}"
            sent = await self._send("PATCH", path, patch, Rank.LABELS, _POD_ANSWER)
            if not isinstance(sent, Done):
                return sent
            held = label_in(sent.body)
            self._view.label_written(key, held)
            if held != label:  # e.g. a mutating webhook took it off: again, after a pause
                return NotHeld(f"Pod {key} does not hold the label written")
            return None

        await self._attempt("Pod", key, queue, write)

    async def _send(
        self,
        method: str,
        path: str,
        body: Any,
        rank: Rank,
        decode: Decode,
        sender: Sender | None = None,
        content_type: str = MERGE,
    ) -> Sent:
        """`decode`: into the fields read of the answer; `sender`: the writes' own unless
        given. An answer, if with an error, counts as progress."""
        sent = await (sender or self._sender).send(
            method, path, body, rank=rank, content_type=content_type, decode=decode
        )
        if sent.answered:
            self.progress = time.monotonic()
        return sent

    async def _attempt(
        self,
        kind: str,
        key: str,
        queue: WorkQueue | None,
        write: Callable[[], Awaitable[NotDone | NotHeld | None]],
    ) -> bool:
        """Run `write` once. Done (None): compared again at once (off the queue when found
        right); failed or gone: compared again after a pause (gone: the watch has the deletion
        by then, and a namesake created meanwhile keeps its write)."""
        if not self.reachable:
            return False  # the server is away: wait for the probe, send nothing (put back)
        match await write():
            case None:
                self._unreachable.reset()
                self._metrics.count_write(kind, "ok")
                if queue is not None:
                    failures = queue.again(key)
                    if failures:
                        logger.info("wrote %s %s after %d failed attempts", kind, key, failures)
                return True
            case Gone():
                self._metrics.count_write(kind, "gone")
                if queue is not None:
                    queue.failed(key)
            case Unanswered() as unanswered:
                if self.reachable:
                    self._unreachable.failed(self._clock())
                self._failed(kind, key, queue, unanswered.why, 0.0)
            case failure:  # an error answer, or one that does not hold what was written
                self._unreachable.reset()
                self._failed(kind, key, queue, failure.why, failure.retry_after)
        return False

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
