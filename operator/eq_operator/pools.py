"""Node pools: each ElasticQuotaProfile's root ElasticQuota, kept as its profile and the nodes
say, as Koordinator's profile controller keeps it (`eq_engine.pools.profile_roots` says what a root
holds, and what is ours where profiles overlap).

The watch feeds the profiles, the nodes and the roots in; the leader writes a root that is
missing (created), or whose owned labels, annotations, min or max differ (a merge patch of those
keys alone: the quota's other labels, annotations and its children stay). A root deleted by
hand is created again; a profile deleted leaves its root as it was (it may have children: the
webhook protects it while it has). A root a profile made under an earlier `quotaName` loses
the root keys the operator wrote, so that two roots never count in one tree. Only changes
that can move a root wake the reconciling: a node's heartbeat does not. While roots are being
written (`settled` false), the loop holds its report of problems back.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from eq_engine import Node, ObjectError, Problem
from eq_engine.model import keys
from eq_engine.pools import (
    KIND,
    Profile,
    RootQuota,
    desired_roots,
    parse_profile,
    pool_profiles,
    root_body,
    root_patch,
)
from eq_kit.backoff import Backoff
from eq_kit.caching import PROFILES, QUOTAS, key_of
from eq_kit.kube import MERGE

from .events import Recorder
from .logs import logger
from .sending import Conflict, Done, NotDone, Sender
from .view import Ref, until_shown

_ROOT_ANNOTATIONS = (keys.TOTAL_RESOURCE, keys.UNSCHEDULABLE_RESOURCE)
_RETIRED = {
    "metadata": {
        "labels": {keys.IS_ROOT: None, keys.PROFILE: None},
        "annotations": dict.fromkeys(_ROOT_ANNOTATIONS),
    }
}
"""What makes a former root a plain group: the keys the operator wrote on it as a root."""


class Pools:
    """The profiles, nodes and roots the watch shows, and the writes that keep the roots."""

    def __init__(
        self, sender: Sender, events: Recorder, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._sender, self._events, self._clock = sender, events, clock
        self._profiles: dict[str, Profile] = {}
        self._refs: dict[str, Ref] = {}
        """Every profile the watch shows, those that do not read too."""
        self._unreadable: dict[str, Problem] = {}
        self._nodes: dict[str, Node] = {}
        self._roots: dict[str, Mapping[str, Any]] = {}
        """Quotas labelled as a tree's root (or named by a profile), by `namespace/name`."""
        self._dirty = True
        self._retry = Backoff(first=1.0, cap=5.0)
        self.problems: tuple[Problem, ...] = ()
        """The profiles' problems as of the last reconciling, for Events."""
        self.settled = False
        """The last reconciling wrote nothing: every root is as its profile wants it, as far as
        the watch shows. Until then the trees are in flux (a root just created has not come
        back yet) and their problems are not reported."""

    def by_tree(self) -> dict[str, Profile]:
        """The profile of each node pool, by tree id (`pool_profiles`)."""
        return pool_profiles(self._profiles.values())

    # ---------------------------------------------------------------- the watch

    def observe_profile(self, body: Mapping[str, Any]) -> None:
        key = key_of(body)
        metadata = body["metadata"]
        self._refs[key] = Ref(
            PROFILES.api_version, KIND, metadata["namespace"], metadata["name"], metadata["uid"]
        )
        try:
            profile = parse_profile(body)
        except ObjectError as error:
            self._profiles.pop(key, None)
            self._unreadable[key] = Problem(KIND, key, error.field, error.message)
        else:
            self._unreadable.pop(key, None)
            self._profiles[key] = profile
        self._dirty = True

    def forget_profile(self, key: str) -> None:
        self._refs.pop(key, None)
        self._profiles.pop(key, None)
        self._unreadable.pop(key, None)
        self._dirty = True

    def observe_node(self, node: Node) -> None:
        if self._nodes.get(node.name) != node:
            self._nodes[node.name] = node
            self._dirty = True

    def forget_node(self, name: str) -> None:
        if self._nodes.pop(name, None) is not None:
            self._dirty = True

    def observe_quota(self, body: Mapping[str, Any]) -> None:
        """Keep the quotas a root may be (labelled as one, or named by a profile), as far as a
        profile writes them: the operator's own status writes on a root wake nothing."""
        key = key_of(body)
        metadata = body["metadata"]
        labels = metadata.get("labels") or {}
        if keys.IS_ROOT in labels or keys.PROFILE in labels or self._named(key):
            annotations = metadata.get("annotations") or {}
            written = {
                "metadata": {
                    "labels": labels,
                    "annotations": {
                        k: annotations[k] for k in _ROOT_ANNOTATIONS if k in annotations
                    },
                },
                "spec": body.get("spec") or {},
            }
            if self._roots.get(key) != written:
                self._roots[key] = written
                self._dirty = True
        elif self._roots.pop(key, None) is not None:
            self._dirty = True

    def forget_quota(self, key: str) -> None:
        if self._roots.pop(key, None) is not None:
            self._dirty = True

    def _named(self, key: str) -> bool:
        return any(profile.root_ref == key for profile in self._profiles.values())

    def ref(self, key: str) -> Ref | None:
        """The profile `namespace/name`, readable or not, for an Event on it."""
        return self._refs.get(key)

    # ---------------------------------------------------------------- the leader's writes

    async def ensure(self, *, wait: bool = False) -> None:
        """Write every root that differs from what its profile makes now (leader only, caches
        listed), unless nothing moved since, or the last attempt failed less than a backoff
        ago. `wait`: then until the watch shows the roots as written (before the leader's first
        computation, which then places every pod once, in trees that have their roots)."""
        if not self._dirty or not self._retry.due(self._clock()):
            return
        self._dirty = False
        self.settled = True  # unless a write below says otherwise
        wanted = desired_roots(self._profiles.values(), self._nodes.values())
        self.problems = tuple(sorted([*wanted.problems, *self._unreadable.values()]))
        for root in wanted.roots:
            if (failure := await self._write(root)) is not None:
                self._failed(failure)
                return
        for key, profile in self._former_roots():
            if (failure := await self._retire(key, profile)) is not None:
                self._failed(failure)
                return
        self._retry.reset()
        if wait and not self.settled:
            await until_shown(lambda: all(map(self._held, wanted.roots)))

    def _held(self, root: RootQuota) -> bool:
        """Whether the watch shows the root as its profile makes it."""
        existing = self._roots.get(root.ref)
        return existing is not None and root_patch(root, existing) is None

    def _former_roots(self) -> list[tuple[str, Profile]]:
        """The roots a profile made under an earlier `quotaName`, with the profile: their total
        would count in the tree besides the new root's."""
        former = []
        for key, written in self._roots.items():
            labels = written["metadata"]["labels"]
            namespace = key.split("/", 1)[0]
            profile = self._profiles.get(f"{namespace}/{labels.get(keys.PROFILE)}")
            if labels.get(keys.IS_ROOT) == "true" and profile and profile.root_ref != key:
                former.append((key, profile))
        return sorted(former, key=lambda pair: pair[0])

    async def _retire(self, key: str, profile: Profile) -> NotDone | None:
        """Take a former root's root keys off (it stays, with its children, as a group of the
        tree), and tell the profile; what went wrong, if anything."""
        namespace, name = key.split("/", 1)
        self.settled = False
        path = f"{QUOTAS.url(namespace)}/{name}"
        sent = await self._sender.send("PATCH", path, _RETIRED, content_type=MERGE)
        if not isinstance(sent, Done):
            return sent
        message = (
            f"ElasticQuota {key} was this profile's root: its root labels and annotations are "
            f"taken off, so that its total no longer counts in tree {profile.tree_id!r}; move "
            f"its children under {profile.root_ref}, or delete it"
        )
        logger.warning("ElasticQuotaProfile %s: %s", profile.ref, message)
        ref = self.ref(profile.ref)
        if ref is not None:
            self._events.record(ref, type="Warning", reason="RootReplaced", message=message)
        return None

    async def _write(self, root: RootQuota) -> NotDone | None:
        """Create or patch the root as its profile makes it; what went wrong, if anything."""
        existing = self._roots.get(root.ref)
        if existing is None:
            self.settled = False
            match await self._sender.send("POST", QUOTAS.url(root.namespace), root_body(root)):
                case Done():
                    logger.info("created the root %s of tree %s", root.ref, root.tree_id)
                    return None
                case Conflict():
                    existing = {}  # a quota of that name the profile takes over: every key
                case failure:
                    return failure
        patch = root_patch(root, existing)
        if patch is None:
            return None
        self.settled = False
        path = f"{QUOTAS.url(root.namespace)}/{root.name}"
        sent = await self._sender.send("PATCH", path, patch, content_type=MERGE)
        if not isinstance(sent, Done):
            return sent
        logger.info("updated the root %s of tree %s", root.ref, root.tree_id)
        return None

    def _failed(self, failure: NotDone) -> None:
        now = self._clock()
        self._retry.failed(now)
        self._dirty = True
        logger.warning(
            "could not write the node pools' roots (%r); trying again in %.1fs",
            failure.error,
            self._retry.not_before - now,
        )
