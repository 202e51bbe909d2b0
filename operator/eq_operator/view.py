"""What the operator knows: the engine, fed by the watches, and what our fields hold now.

The writer compares what the engine wants with what the objects hold (as last seen on the
watch), never with what it wrote before: after a restart, an object that is already right is
not written again.

Only the watch changes the view (`observe_*`, `forget_*`), and the answers of the writer's
writes (`label_written`, `quota_written`). What the watch delivered since the last look is
handed over in one call (`take`, an `Observed`): whether the engine has anything new to
recompute, the groups and pods seen (their fields are compared again), the objects found
unreadable. Only the loop takes it (`operating.py`), and keeps what it has not acted on yet.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable, Iterator, Mapping, Set
from dataclasses import dataclass, field
from typing import Any, TypedDict, cast

from eq_engine import (
    GroupStatus,
    Node,
    ObjectError,
    QuotaEngine,
    QuotaReader,
    format_resource_list,
    parse_node,
    parse_pod,
)
from eq_engine.model import PodGroupKind, Requeue, keys, parse_disruption_budget, parse_pod_group
from eq_engine.reading import RawElasticQuota, RawNode, RawObjectMeta, RawPod, requeued_gangs
from eq_kit.caching import DISRUPTION_BUDGETS, QUOTAS, key_of

from .logs import logger

OWNED_ANNOTATIONS = (keys.RUNTIME, keys.REQUEST, keys.USED, keys.WAITING)


class _Labels(TypedDict, total=False):
    labels: dict[str, str] | None


class _Annotations(TypedDict, total=False):
    annotations: dict[str, str] | None


class _Status(TypedDict, total=False):
    used: Any


class WrittenPod(TypedDict, total=False):
    """What the writer reads of a pod it labelled (`label_in`): the answer is decoded into
    these fields only, the rest of the pod skipped."""

    metadata: _Labels


class WrittenQuota(TypedDict, total=False):
    """What the writer reads of an ElasticQuota it wrote (`QuotaFields.of`)."""

    metadata: _Annotations
    status: _Status | None


class Unread(TypedDict, total=False):
    """An answer the writer does not read: every field skipped."""


@dataclass(frozen=True, slots=True)
class QuotaFields:
    """The parts of an ElasticQuota the operator owns, as JSON text (None: absent)."""

    annotations: tuple[str | None, str | None, str | None, str | None]
    status_used: str | None

    @classmethod
    def of(cls, body: Mapping[str, Any]) -> QuotaFields:
        annotations = (body.get("metadata") or {}).get("annotations") or {}
        used = (body.get("status") or {}).get("used")
        return cls(
            annotations=tuple(annotations.get(k) for k in OWNED_ANNOTATIONS),  # type: ignore[arg-type]
            status_used=None if used is None else _json(used),
        )

    @classmethod
    def wanted(cls, status: GroupStatus, waiting: str) -> QuotaFields:
        """What the group's object should hold; `waiting`: the `waiting-pods` annotation (its
        pods behind the admission gate; absent while none wait)."""
        runtime = None if status.runtime is None else _json(format_resource_list(status.runtime))
        used = _json(format_resource_list(status.used))
        request = _json(format_resource_list(status.request))
        return cls(
            annotations=(runtime, request, used, waiting or None),
            status_used=used,
        )


def _json(value: Any) -> str:
    """Compact and key-sorted: equal values are equal texts."""
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


@dataclass(frozen=True, slots=True)
class Ref:
    """Enough of an object to patch it and to attach Events to it."""

    api_version: str
    kind: str
    namespace: str
    name: str
    uid: str


@dataclass(frozen=True, slots=True)
class Observed:
    """What the watch delivered to the view between two takes (`ClusterView.take`)."""

    changed: bool = False
    """An object came, changed or went: the engine has something to recompute."""
    quotas: Set[str] = frozenset()
    """Groups seen, by name: their fields are compared again (a hand edit of ours is undone)."""
    pods: Set[str] = frozenset()
    """Pods seen, by key: their labels are compared again."""
    unreadable: tuple[tuple[Ref, str], ...] = ()
    """Objects found unreadable, each with its error, in the order found: an Event each."""

    def __or__(self, later: Observed) -> Observed:
        """This take and a later one as one (a set shared, not copied, where the other side
        has none: the first take after the first LISTs holds every pod)."""
        return Observed(
            self.changed or later.changed,
            _union(self.quotas, later.quotas),
            _union(self.pods, later.pods),
            self.unreadable + later.unreadable,
        )


def _union(first: Set[str], later: Set[str]) -> Set[str]:
    return later if not first else first if not later else first | later


@dataclass
class ClusterView:
    engine: QuotaEngine
    quota_refs: dict[str, Ref] = field(default_factory=dict)
    """Group name to its object (names are unique; a duplicate is reported by the engine)."""
    quota_fields: dict[str, QuotaFields] = field(default_factory=dict)
    idle_labels: dict[str, str | None] = field(default_factory=dict)
    """The capacity labels of the pods the engine does not hold (finished or unreadable), as
    the watch last showed them. Those of the pods it holds are kept with them in the engine:
    a pod is in one place or the other, never both (`held_label`)."""
    unreadable: dict[str, str] = field(default_factory=dict)
    """Object reference to the parse error of an object the engine cannot use."""
    reclaim_stamps: dict[str, str] = field(default_factory=dict)
    """Group name to its `last-reclaim` annotation, where it has one (reclaiming.py)."""
    requeued: dict[str, tuple[Requeue, ...]] = field(default_factory=dict)
    """Group name to the gangs its `requeued-gangs` annotation records (requeuing.py)."""
    quota_reader: QuotaReader = field(default_factory=QuotaReader)
    """Reads the groups' objects; the echoes of our writes to them mostly from memory."""

    # What the watch delivered since the last `take` (an `Observed`'s fields).
    _changed: bool = field(default=True, init=False, repr=False)
    _quotas: set[str] = field(default_factory=set, init=False, repr=False)
    _pods: set[str] = field(default_factory=set, init=False, repr=False)
    _news: list[tuple[Ref, str]] = field(default_factory=list, init=False, repr=False)

    def requeues(self) -> dict[str, Requeue]:
        """Every group's requeued gangs, by gang key."""
        return {r.gang: r for group in self.requeued.values() for r in group}

    def take(self) -> Observed:
        """What the watch delivered since the last take, handed over once: the next take
        holds only what comes after this one."""
        observed = Observed(self._changed, self._quotas, self._pods, tuple(self._news))
        self._changed, self._quotas, self._pods, self._news = False, set(), set(), []
        return observed

    # Watch events, from the kit's caches (observing.py). A key is `namespace/name`, or the name
    # of a Node; a pod's is the cache's string, kept by the view and the engine alike.

    def observe_quota(self, body: Mapping[str, Any]) -> None:
        metadata = body["metadata"]
        ref = _ref(body, QUOTAS.api_version, QUOTAS.name)
        try:
            quota = self.quota_reader.read(cast(RawElasticQuota, body))
        except ObjectError as error:
            self._unreadable(ref, error)
            self.engine.remove_quota(ref.namespace, ref.name)
        else:
            self.unreadable.pop(_where(ref), None)
            self.engine.set_quota(quota)
        self.quota_refs[metadata["name"]] = ref
        self.quota_fields[metadata["name"]] = QuotaFields.of(body)
        annotations = metadata.get("annotations") or {}
        stamp = annotations.get(keys.LAST_RECLAIM)
        if stamp is None:
            self.reclaim_stamps.pop(metadata["name"], None)
        else:
            self.reclaim_stamps[metadata["name"]] = stamp
        requeues = requeued_gangs(annotations)
        if requeues:
            self.requeued[metadata["name"]] = requeues
        else:
            self.requeued.pop(metadata["name"], None)
        self._quotas.add(metadata["name"])
        self._changed = True

    def forget_quota(self, key: str) -> None:
        namespace, name = key.split("/", 1)
        self.engine.remove_quota(namespace, name)
        self.quota_reader.forget(namespace, name)
        ref = self.quota_refs.get(name)
        if ref is not None and ref.namespace == namespace:
            del self.quota_refs[name]
            self.quota_fields.pop(name, None)
            self.reclaim_stamps.pop(name, None)
            self.requeued.pop(name, None)
        self.unreadable.pop(f"ElasticQuota {key}", None)
        self._changed = True

    def observe_pod(self, body: Mapping[str, Any], key: str | None = None) -> None:
        """`key`: the cache's string for it (`key_of`), kept as the pod's key everywhere."""
        key = key_of(body) if key is None else key
        held = label_in(body)
        self._pods.add(key)
        self._changed = True
        try:
            self.engine.set_pod(parse_pod(cast(RawPod, body), key=key), held)
        except ObjectError as error:
            self.engine.remove_pod(key)
            self._unreadable(_ref(body, "v1", "Pod"), error)
        else:
            if self.unreadable:  # readable again
                self.unreadable.pop(f"Pod {key}", None)
        if self.engine.holds(key):
            self.idle_labels.pop(key, None)
        else:
            self.idle_labels[key] = held

    def forget_pod(self, key: str) -> None:
        self.engine.remove_pod(key)
        self.idle_labels.pop(key, None)
        self.unreadable.pop(f"Pod {key}", None)
        self._changed = True

    def pod_keys(self) -> Iterator[str]:
        """Every pod the watch shows: those the engine holds, then the others. Live: use it up
        before the next await (a copy would cost a set of 100,000 keys)."""
        yield from self.engine.pod_keys()
        yield from self.idle_labels

    def held_label(self, key: str, default: str | None = None) -> str | None:
        """The capacity label the pod holds in the cluster; `default` for a pod not seen."""
        if self.engine.holds(key):
            return self.engine.held_label(key)
        return self.idle_labels.get(key, default)

    def label_written(self, key: str, label: str | None) -> None:
        """A write's answer: the pod holds `label` now (if it is still seen)."""
        if self.engine.holds(key):
            self.engine.hold_label(key, label)
        elif key in self.idle_labels:
            self.idle_labels[key] = label

    def quota_written(self, name: str, fields: QuotaFields) -> None:
        """A write's answer: the group's object holds `fields` (if it is still seen)."""
        if name in self.quota_fields:  # not deleted meanwhile
            self.quota_fields[name] = fields

    def observe_node(self, body: Mapping[str, Any]) -> Node | None:
        """The node as read (None: unreadable, not counted), for the node pools too."""
        self._changed = True
        try:
            node = parse_node(cast(RawNode, body))
        except ObjectError as error:
            self.engine.remove_node(body["metadata"]["name"])
            self._unreadable(_ref(body, "v1", "Node"), error)
            return None
        self.engine.set_node(node)
        self.unreadable.pop(f"Node /{node.name}", None)  # readable again
        return node

    def forget_node(self, key: str) -> None:
        self.engine.remove_node(key)
        self.unreadable.pop(f"Node /{key}", None)
        self._changed = True

    def observe_pod_group(self, kind: PodGroupKind, body: Mapping[str, Any]) -> None:
        """A PodGroup of one of the three APIs: the minimum of the gang it names. Never raises:
        a minimum that does not read is kept as the gang's problem (an Event on its pods)."""
        self.engine.set_pod_group(parse_pod_group(kind, body))
        self._changed = True

    def forget_pod_group(self, kind: PodGroupKind, key: str) -> None:
        self.engine.remove_pod_group(f"{kind.source}:{key}")
        self._changed = True

    def observe_disruption_budget(self, body: Mapping[str, Any]) -> None:
        """A PodDisruptionBudget: reclaim skips the pods it would not let go now. One that does
        not read protects nothing here (the Eviction API still enforces it) and gets an Event."""
        key = key_of(body)
        self._changed = True
        try:
            self.engine.set_disruption_budget(parse_disruption_budget(body))
        except ObjectError as error:
            self.engine.remove_disruption_budget(key)
            ref = _ref(body, DISRUPTION_BUDGETS.api_version, DISRUPTION_BUDGETS.name)
            self._unreadable(ref, error)
        else:
            self.unreadable.pop(f"{DISRUPTION_BUDGETS.name} {key}", None)

    def forget_disruption_budget(self, key: str) -> None:
        self.engine.remove_disruption_budget(key)
        self.unreadable.pop(f"{DISRUPTION_BUDGETS.name} {key}", None)
        self._changed = True

    def _unreadable(self, ref: Ref, error: ObjectError) -> None:
        """Remember the error; if it is news, queue it to be reported once."""
        where = _where(ref)
        if self.unreadable.get(where) == str(error):
            return
        logger.warning("ignoring an unreadable object: %s", error)
        self.unreadable[where] = str(error)
        self._news.append((ref, str(error)))


def label_in(body: Mapping[str, Any]) -> str | None:
    """The `capacity` label the pod `body` holds (None: none). Interned: a label value is one
    of a few, and a string read from each pod's JSON would be kept for as long as the pod
    lives (75,000 labelled pods kept 8 MiB of copies of "in-quota")."""
    meta = body.get("metadata")
    labels = (meta.labels if type(meta) is RawObjectMeta else (meta or {}).get("labels")) or {}
    label = labels.get(keys.CAPACITY)
    return None if label is None else sys.intern(label)


def _ref(body: Mapping[str, Any], api_version: str, kind: str) -> Ref:
    metadata = body["metadata"]
    if type(metadata) is RawObjectMeta:  # a pod as the caches decode it
        namespace, name, uid = metadata.namespace, metadata.name, metadata.uid
    else:
        namespace, name, uid = metadata.get("namespace"), metadata["name"], metadata.get("uid")
    return Ref(api_version, kind, namespace or "", name or "", uid or "")


def _where(ref: Ref) -> str:
    return f"{ref.kind} {ref.namespace}/{ref.name}"


SHOWN_WITHIN = 3.0
"""Seconds the leader waits for its watch to show the groups it wrote before it computes."""
SHOWN_POLL = 0.01


async def until_shown(shown: Callable[[], bool]) -> None:
    """Until `shown()` (the watch shows what was just written, so that the computation that
    follows holds it and places every pod once), a few seconds at most: a watch that is down
    does not hold the loop, and what was written then comes later, with one more placing."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + SHOWN_WITHIN
    while not shown() and loop.time() < deadline:
        await asyncio.sleep(SHOWN_POLL)
