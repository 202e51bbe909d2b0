"""A stand-in for the Job controller (batch/v1), driven by watching the emulator over HTTP as
standins.py's controllers are, and what the kubelet writes when a Job's pod completes.

It plays every Job applied (no Indexed completion mode, no suspend, no pod failure policy, no
status written): it keeps `min(parallelism, completions - succeeded)` pods of the template
active, each created as the real controller creates it: `generateName: <job>-`, a controller
ownerReference to the Job (its real uid), the Job's labels in both spellings, the job-tracking
finalizer, which it removes once it has counted the pod (finished, or deleted: an evicted pod
counts as failed and is replaced, up to `backoffLimit`). A Job's `parallelism` may be changed;
the pods of a deleted Job are deleted (the garbage collector).
"""

from __future__ import annotations

from typing import Any

from .client import JSON, Client, Informer
from .resources import BUILTINS
from .standins import PODS, Controller, finished

(JOBS,) = [r for r in BUILTINS if r.plural == "jobs"]
TRACKING = "batch.kubernetes.io/job-tracking"
MERGE = "application/merge-patch+json"


def job_labels(name: str, uid: str) -> dict[str, str]:
    """The labels the Job controller (1.27+) puts on its pods."""
    return {
        "batch.kubernetes.io/controller-uid": uid,
        "batch.kubernetes.io/job-name": name,
        "controller-uid": uid,
        "job-name": name,
    }


class Jobs(Controller):
    def __init__(self, client: Client) -> None:
        super().__init__(client)
        self.jobs = self._inform(Informer(client, JOBS, self._wake.set))
        self.pods = self._inform(
            Informer(client, PODS, self._wake.set, label_selector="batch.kubernetes.io/job-name")
        )
        self.counted: set[str] = set()
        """uids of the finished or deleted pods counted (their finalizer removed)."""
        self.failed: dict[str, int] = {}
        """Job uid to its pods that failed or were deleted before they finished."""

    def owned(self, job: JSON) -> list[JSON]:
        uid = job["metadata"]["uid"]
        return [
            pod
            for pod in self.pods.objects.values()
            if any(ref.get("uid") == uid for ref in pod["metadata"].get("ownerReferences") or ())
        ]

    async def _reconcile(self) -> None:
        jobs = {job["metadata"]["uid"]: job for job in self.jobs.objects.values()}
        for pod in list(self.pods.objects.values()):
            owner = _job_owner(pod)
            if owner is not None and owner not in jobs:  # the garbage collector
                await self._release(pod, owner)
                if not pod["metadata"].get("deletionTimestamp"):
                    await self.client.request("DELETE", _path(pod))
        for uid, job in jobs.items():
            await self._play(uid, job)

    async def _play(self, uid: str, job: JSON) -> None:
        spec = job.get("spec") or {}
        parallelism = int(spec.get("parallelism", 1))
        completions = int(spec.get("completions", parallelism))
        succeeded = active = 0
        for pod in self.owned(job):
            gone = bool(pod["metadata"].get("deletionTimestamp"))
            if finished(pod) or gone:
                if (pod.get("status") or {}).get("phase") == "Succeeded":
                    succeeded += 1
                await self._release(pod, uid)
            else:
                active += 1
        if self.failed.get(uid, 0) > int(spec.get("backoffLimit", 6)):
            return
        for _ in range(min(parallelism, completions - succeeded) - active):
            await self._create(job)

    async def _release(self, pod: JSON, job: str) -> None:
        """Count a finished or deleted pod once, and take the job-tracking finalizer off."""
        metadata = pod["metadata"]
        if metadata["uid"] in self.counted:
            return
        self.counted.add(metadata["uid"])
        if (pod.get("status") or {}).get("phase") != "Succeeded":
            self.failed[job] = self.failed.get(job, 0) + 1
        finalizers = [f for f in metadata.get("finalizers") or () if f != TRACKING]
        if finalizers != (metadata.get("finalizers") or []):
            patch = {"metadata": {"finalizers": finalizers or None}}
            await self.client.request("PATCH", _path(pod), patch, content_type=MERGE)

    async def _create(self, job: JSON) -> None:
        name, namespace, uid = (job["metadata"][k] for k in ("name", "namespace", "uid"))
        template = job["spec"]["template"]
        metadata: dict[str, Any] = dict(template.get("metadata") or {})
        metadata["labels"] = {**(metadata.get("labels") or {}), **job_labels(name, uid)}
        metadata["generateName"] = f"{name}-"
        metadata["finalizers"] = [TRACKING]
        metadata["ownerReferences"] = [
            {
                "apiVersion": "batch/v1",
                "kind": "Job",
                "name": name,
                "uid": uid,
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ]
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": template["spec"]}
        created = await self.client.call("POST", PODS.prefix(namespace), pod)
        # Count it at once: the watch event may come after the next reconcile.
        self.pods.objects[namespace, created["metadata"]["name"]] = created


async def complete(client: Client, pod: JSON) -> None:
    """What the kubelet writes when every container of `pod` exited 0: phase Succeeded, each
    container terminated with reason Completed (`kubectl get pods` says Completed)."""
    finished_at = "2026-01-01T00:01:00Z"
    containers = [
        {
            "name": c.get("name", ""),
            "image": c.get("image", ""),
            "imageID": c.get("image", ""),
            "ready": False,
            "started": False,
            "restartCount": 0,
            "state": {
                "terminated": {"exitCode": 0, "reason": "Completed", "finishedAt": finished_at}
            },
        }
        for c in (pod.get("spec") or {}).get("containers") or ()
    ]
    patch = {"status": {"phase": "Succeeded", "containerStatuses": containers}}
    await client.call("PATCH", _path(pod) + "/status", patch, content_type=MERGE)


def _job_owner(pod: JSON) -> str | None:
    """The uid of the Job controlling `pod`, if one does."""
    for ref in pod["metadata"].get("ownerReferences") or ():
        if ref.get("kind") == "Job" and ref.get("controller"):
            return str(ref.get("uid"))
    return None


def _path(pod: JSON) -> str:
    return f"{PODS.prefix(pod['metadata']['namespace'])}/{pod['metadata']['name']}"
