"""Stand-ins for the control plane's other parts, driven by watching the emulator over HTTP:
a scheduler (kube-scheduler's outcome, not its algorithm, and the kubelet's Running), a
ReplicaSet-like controller, and a Deployment controller that plays each applied Deployment with
one of those.

Both react to watch events (an informer per resource wakes their loop), never to a timer, and
write over HTTP as the real components do: the scheduler through `pods/binding`, the
controller with `generateName` and a controller ownerReference.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import re
import uuid
from typing import Any

from . import node_affinity
from .client import JSON, ApiCallError, Client, Informer
from .resources import BUILTINS
from .strategies import now

PODS, NODES = BUILTINS[0], BUILTINS[1]
(DEPLOYMENTS,) = [r for r in BUILTINS if r.plural == "deployments"]
_SUFFIXES = {
    "": 1,
    "k": 10**3,
    "M": 10**6,
    "G": 10**9,
    "T": 10**12,
    "Ki": 2**10,
    "Mi": 2**20,
    "Gi": 2**30,
    "Ti": 2**40,
}


def quantity(text: Any) -> float:
    """`500m` -> 0.5, `1Gi` -> 1073741824.0, `2` -> 2.0."""
    match = re.fullmatch(r"([0-9.]+)(m|k|M|G|T|Ki|Mi|Gi|Ti)?", str(text))
    if match is None:
        raise ValueError(f"not a quantity: {text!r}")
    number, suffix = float(match[1]), match[2] or ""
    return number / 1000 if suffix == "m" else number * _SUFFIXES[suffix]


def requests(pod: JSON) -> dict[str, float]:
    total: dict[str, float] = {"pods": 1}
    for container in (pod.get("spec") or {}).get("containers") or ():
        for name, value in ((container.get("resources") or {}).get("requests") or {}).items():
            total[name] = total.get(name, 0) + quantity(value)
    return total


def _add(total: dict[str, float], more: dict[str, float]) -> None:
    for name, value in more.items():
        total[name] = total.get(name, 0) + value


def finished(pod: JSON) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


class Controller:
    """An informer-fed loop: `_reconcile` runs after every batch of watch events."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self._wake = asyncio.Event()
        self._informers: list[Informer] = []
        self._task: asyncio.Task[None] | None = None

    def _inform(self, informer: Informer) -> Informer:
        self._informers.append(informer)
        return informer

    async def start(self) -> None:
        for informer in self._informers:
            informer.start()
        for informer in self._informers:
            await informer.synced.wait()
        self._task = asyncio.create_task(self._loop())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        for informer in self._informers:
            await informer.stop()

    async def _loop(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            try:
                await self._reconcile()
            except ApiCallError:
                self._wake.set()  # a conflict or an injected fault: try again on the next turn
                await asyncio.sleep(0.05)

    async def _reconcile(self) -> None:
        raise NotImplementedError


class Scheduler(Controller):
    """Binds each pod that is not gated, not bound, not terminating and not finished to the first
    node (by name) that its constraints allow and that has room. Allowed: as kube-scheduler's
    NodeAffinity filter decides from the pod's `spec.nodeSelector` and required node affinity
    (node_affinity.py); preferred affinity and taints are ignored. Room: the requests of the
    node's bound unfinished pods plus the pod's must fit `status.allocatable` (cpu, memory, pods
    and any other listed resource). A pod no node takes stays Pending, without an event. With
    `run=True` a bound pod is then marked Running, as its kubelet would."""

    def __init__(self, client: Client, *, run: bool = True) -> None:
        super().__init__(client)
        self.run = run
        self.pods = self._inform(Informer(client, PODS, self._wake.set))
        self.nodes = self._inform(Informer(client, NODES, self._wake.set))

    async def _reconcile(self) -> None:
        pods = list(self.pods.objects.values())
        used: dict[str, dict[str, float]] = {}
        for pod in pods:
            node = (pod.get("spec") or {}).get("nodeName")
            if node and not finished(pod):
                _add(used.setdefault(node, {}), requests(pod))
        order = [(p["metadata"].get("creationTimestamp", ""), p["metadata"]["name"]) for p in pods]
        for _, pod in sorted(zip(order, pods, strict=True), key=lambda pair: pair[0]):
            spec, metadata = pod.get("spec") or {}, pod["metadata"]
            if spec.get("nodeName") or spec.get("schedulingGates") or finished(pod):
                continue
            if metadata.get("deletionTimestamp"):
                continue
            node = self._place(pod, used)
            if node is None:
                await self._unschedulable(pod)
                continue
            _add(used.setdefault(node, {}), requests(pod))
            await self._bind(pod, node)

    async def _unschedulable(self, pod: JSON) -> None:
        """What kube-scheduler writes on a pod no node takes: `PodScheduled` False, reason
        `Unschedulable` (kubectl then shows Pending, no longer SchedulingGated), once."""
        conditions = (pod.get("status") or {}).get("conditions") or []
        scheduled = [c for c in conditions if c.get("type") == "PodScheduled"]
        if scheduled and scheduled[0].get("reason") == "Unschedulable":
            return
        nodes = len(self.nodes.objects)
        condition = {
            "type": "PodScheduled",
            "status": "False",
            "reason": "Unschedulable",
            "message": f"0/{nodes} nodes are available: none has room for the pod where it may go.",
            "lastProbeTime": None,
            "lastTransitionTime": now(),
        }
        kept = [c for c in conditions if c.get("type") != "PodScheduled"]
        namespace, name = pod["metadata"]["namespace"], pod["metadata"]["name"]
        path = f"{PODS.prefix(namespace)}/{name}/status"
        patch = {"status": {"conditions": [*kept, condition]}}
        await self.client.request("PATCH", path, patch, content_type="application/merge-patch+json")

    def _place(self, pod: JSON, used: dict[str, dict[str, float]]) -> str | None:
        wanted = requests(pod)
        for node in sorted(self.nodes.objects.values(), key=lambda n: n["metadata"]["name"]):
            if not node_affinity.allows(pod, node):
                continue
            name: str = node["metadata"]["name"]
            allocatable = {
                k: quantity(v)
                for k, v in ((node.get("status") or {}).get("allocatable") or {}).items()
            }
            taken = used.get(name, {})
            if all(
                taken.get(k, 0) + v <= allocatable.get(k, 0 if k != "pods" else 110)
                for k, v in wanted.items()
            ):
                return name
        return None

    async def _bind(self, pod: JSON, node: str) -> None:
        namespace, name = pod["metadata"]["namespace"], pod["metadata"]["name"]
        path = f"{PODS.prefix(namespace)}/{name}"
        binding = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": name},
            "target": {"apiVersion": "v1", "kind": "Node", "name": node},
        }
        status, _, _ = await self.client.request("POST", path + "/binding", binding)
        if status == 201 and self.run:
            # What `kubectl get pods` reads: READY 1/1 and STATUS Running.
            containers = [
                {
                    "name": c.get("name", ""),
                    "image": c.get("image", ""),
                    "imageID": c.get("image", ""),  # always sent by the API (clients require it)
                    "ready": True,
                    "started": True,
                    "restartCount": 0,
                    "state": {"running": {"startedAt": pod["metadata"].get("creationTimestamp")}},
                }
                for c in (pod.get("spec") or {}).get("containers") or ()
            ]
            patch = {"status": {"phase": "Running", "containerStatuses": containers}}
            await self.client.request(
                "PATCH", path + "/status", patch, content_type="application/merge-patch+json"
            )


class ReplicaSet(Controller):
    """Keeps `replicas` pods of `template` alive in `namespace`: missing ones (deleted, evicted,
    finished) are created with `generateName: NAME-` and a controller ownerReference to a
    ReplicaSet named NAME (which exists only here: this stand-in is its controller)."""

    def __init__(
        self, client: Client, name: str, namespace: str, replicas: int, template: JSON
    ) -> None:
        super().__init__(client)
        self.name, self.namespace, self.replicas = name, namespace, replicas
        self.template = template
        self.uid = str(uuid.uuid4())
        labels = (template.get("metadata") or {}).get("labels") or {}
        selector = ",".join(f"{k}={v}" for k, v in sorted(labels.items()))
        self.pods = self._inform(Informer(client, PODS, self._wake.set, label_selector=selector))
        self.created = 0

    def owned(self) -> list[JSON]:
        return [
            p
            for p in self.pods.objects.values()
            if p["metadata"].get("namespace") == self.namespace
            and any(
                ref.get("uid") == self.uid for ref in p["metadata"].get("ownerReferences") or ()
            )
        ]

    async def _reconcile(self) -> None:
        alive = [
            p
            for p in self.owned()
            if not p["metadata"].get("deletionTimestamp") and not finished(p)
        ]
        for _ in range(self.replicas - len(alive)):
            await self._create()

    async def _create(self) -> None:
        metadata = dict(self.template.get("metadata") or {})
        metadata["generateName"] = f"{self.name}-"
        metadata["ownerReferences"] = [
            {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "name": self.name,
                "uid": self.uid,
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ]
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": metadata,
            "spec": self.template["spec"],
        }
        created = await self.client.call("POST", PODS.prefix(self.namespace), pod)
        # Count it at once: the watch event may come after the next reconcile.
        self.pods.objects[self.namespace, created["metadata"]["name"]] = created
        self.created += 1


class Deployments(Controller):
    """Plays every apps/v1 Deployment with a ReplicaSet stand-in named `NAME-HASH` (the pod
    template's hash, also the pods' `pod-template-hash` label) that keeps `spec.replicas` pods of
    its template; a changed `replicas` is followed, a changed template is not (no rollouts), and
    a deleted Deployment's pods are deleted (the garbage collector). No status is written."""

    def __init__(self, client: Client) -> None:
        super().__init__(client)
        self.deployments = self._inform(Informer(client, DEPLOYMENTS, self._wake.set))
        self.replica_sets: dict[tuple[str | None, str], ReplicaSet] = {}

    async def stop(self) -> None:
        for replica_set in self.replica_sets.values():
            await replica_set.stop()
        await super().stop()

    async def _reconcile(self) -> None:
        for key, deployment in list(self.deployments.objects.items()):
            spec = deployment.get("spec") or {}
            replicas = int(spec.get("replicas", 1))
            played = self.replica_sets.get(key)
            if played is None:
                played = self.replica_sets[key] = self._replica_set(deployment, replicas)
                await played.start()
            elif played.replicas != replicas:
                played.replicas = replicas
                played._wake.set()
        for key in [k for k in self.replica_sets if k not in self.deployments.objects]:
            played = self.replica_sets.pop(key)
            await played.stop()
            for pod in played.owned():
                path = f"{PODS.prefix(played.namespace)}/{pod['metadata']['name']}"
                await self.client.request("DELETE", path)

    def _replica_set(self, deployment: JSON, replicas: int) -> ReplicaSet:
        template = deployment["spec"]["template"]
        digest = hashlib.sha256(repr(template).encode()).digest()
        alphabet = "bcdfghjklmnpqrstvwxz2456789"
        suffix = "".join(alphabet[b % len(alphabet)] for b in digest[:10])
        metadata = dict(template.get("metadata") or {})
        metadata["labels"] = {**(metadata.get("labels") or {}), "pod-template-hash": suffix}
        return ReplicaSet(
            self.client,
            f"{deployment['metadata']['name']}-{suffix}",
            deployment["metadata"]["namespace"],
            replicas,
            {**template, "metadata": metadata},
        )
