"""Evicting a Job's pod without failing its Job (`eq_engine.reading.jobs` says why).

Before the eviction, the pod's Job tracking finalizer comes off, as the Job controller takes it
off the pods it deletes itself: the Job then neither counts the pod toward its `backoffLimit`
nor holds its replacement back by the failure backoff, and makes the replacement at once (which
the webhook gates). The removal is conditional on the pod as just read (its resourceVersion),
so a pod that finished meanwhile keeps its finalizer and is counted as the Job would count it.
Should the eviction then be refused (a PodDisruptionBudget) or fail, the finalizer is put back,
so that the pod, which runs on, is counted when it finishes.

A Job that asks for its evictions to count (`counted_evictions`) is left as it is; so is every
Job with `--no-spare-jobs`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from eq_engine.reading import TRACKING_FINALIZER, counted_evictions

from .logs import logger
from .sending import Conflict, Done, Gone, NotDone, Sender
from .view import Ref

STRATEGIC = "application/strategic-merge-patch+json"
"""A finalizer added or removed by name, others left as they are (`patchStrategy: merge`)."""


@dataclass(frozen=True, slots=True)
class JobPod:
    """A pod about to be evicted, as its Job counts it."""

    job: Ref | None = None
    """The Job that made it (its controller); None: no Job's, or not looked up."""
    counted: str | None = None
    """Why its Job counts the eviction as a failure (`counted_evictions`); None: it does not."""
    released: bool = False
    """Its tracking finalizer was taken off for the eviction."""


NOT_A_JOBS = JobPod()
ATTEMPTS = 3
"""Reads and patches of a pod that keeps changing before its eviction waits for the next look."""


class JobPods:
    """Takes a Job's pod out of its Job's accounting before an eviction, and puts it back if the
    eviction does not happen."""

    def __init__(self, sender: Sender, *, enabled: bool) -> None:
        self._sender, self._enabled = sender, enabled

    async def release(self, namespace: str, name: str) -> JobPod | NotDone:
        """The pod as its Job will count the eviction, its finalizer taken off where the Job
        is spared; or why that could not be done (the pod is gone, or the reads or the patch
        failed: the eviction waits). A pod that changed between the read and the patch (its
        status, as the kubelet writes it) is read again, a few times."""
        if not self._enabled:
            return NOT_A_JOBS
        for _ in range(ATTEMPTS - 1):
            released = await self._release(namespace, name)
            if not isinstance(released, Conflict):
                return released
        return await self._release(namespace, name)

    async def _release(self, namespace: str, name: str) -> JobPod | NotDone:
        path = f"/api/v1/namespaces/{namespace}/pods/{name}"
        read = await self._sender.read(path)
        if not isinstance(read, Done):
            return read
        metadata = read.body.get("metadata") or {}
        owner = _controller(metadata, kind="Job", api_version="batch/v1")
        if owner is None:
            return NOT_A_JOBS
        job = Ref("batch/v1", "Job", namespace, owner["name"], owner.get("uid", ""))
        if TRACKING_FINALIZER not in (metadata.get("finalizers") or ()):
            return JobPod(job)  # counted already, or never tracked: nothing to take
        found = await self._sender.read(f"/apis/batch/v1/namespaces/{namespace}/jobs/{job.name}")
        if isinstance(found, Gone):
            return JobPod()  # its Job is gone: the garbage collector takes the pod anyway
        if not isinstance(found, Done):
            return found
        counted = counted_evictions(found.body)
        if counted is not None:
            return JobPod(job, counted)
        patch = {
            "metadata": {
                "resourceVersion": metadata.get("resourceVersion"),
                "$deleteFromPrimitiveList/finalizers": [TRACKING_FINALIZER],
            }
        }
        released = await self._sender.send("PATCH", path, patch, content_type=STRATEGIC)
        if not isinstance(released, Done):
            return released  # a Conflict: the pod changed since it was read; judged again
        return JobPod(job, released=True)

    async def restore(self, namespace: str, name: str) -> None:
        """Put the finalizer back on a released pod whose eviction did not happen."""
        patch = {"metadata": {"finalizers": [TRACKING_FINALIZER]}}
        path = f"/api/v1/namespaces/{namespace}/pods/{name}"
        restored = await self._sender.send("PATCH", path, patch, content_type=STRATEGIC)
        if not isinstance(restored, Done | Gone):
            logger.warning(
                "pod %s/%s keeps running without its Job's tracking finalizer, which could not "
                "be put back: %s; its Job will not count it when it finishes",
                namespace,
                name,
                restored.why,
            )


def _controller(metadata: dict[str, Any], *, kind: str, api_version: str) -> dict[str, Any] | None:
    """The owner reference of the object's controller, if it is a `kind` of `api_version`."""
    for owner in metadata.get("ownerReferences") or ():
        if owner.get("controller") and (owner.get("kind"), owner.get("apiVersion")) == (
            kind,
            api_version,
        ):
            return owner  # type: ignore[no-any-return]
    return None
