"""A generated cluster for the benchmarks: 3 levels, ~11,000 groups, 100,000 pods.

10 departments x 100 teams x 10 sub-teams (11,110 groups) of 4 resources; 10 pods per sub-team
and the nodes, shaped like `kubectl get -o json` output (owner references, images, conditions;
the nodes also report ephemeral storage and huge pages, 7 resources in all). Deterministic: the
same seed gives the same cluster.
"""

from __future__ import annotations

import functools
import random
import uuid
from typing import Any

import orjson

from tests import realistic

P = "quota.scheduling.koordinator.sh/"
DEPARTMENTS, TEAMS, SUBTEAMS, PODS_PER_SUBTEAM = 10, 100, 10, 10
NODES = 1500


def quota(
    name: str,
    parent: str | None,
    cpu: int,
    memory_gi: int,
    gpu: int,
    *,
    is_parent: bool,
    lend: bool = True,
) -> dict[str, Any]:
    labels = {P + "parent": parent} if parent else {}
    if is_parent:
        labels[P + "is-parent"] = "true"
    if not lend:
        labels[P + "allow-lent-resource"] = "false"
    return {
        "apiVersion": "scheduling.sigs.k8s.io/v1alpha1",
        "kind": "ElasticQuota",
        "metadata": {
            "name": name,
            "namespace": name if not is_parent else "quotas",
            "labels": labels,
            "uid": f"uid-{name}",
            "creationTimestamp": "2026-01-01T00:00:00Z",
        },
        "spec": {
            "min": {
                "cpu": str(cpu),
                "memory": f"{memory_gi}Gi",
                "nvidia.com/gpu": str(gpu),
                "pods": str(cpu * 4),
            },
            "max": {
                "cpu": str(cpu * 3),
                "memory": f"{memory_gi * 3}Gi",
                "nvidia.com/gpu": str(gpu * 2 + 1),
                "pods": str(cpu * 12),
            },
        },
    }


def quotas(
    departments: int = DEPARTMENTS, teams: int = TEAMS, subteams: int = SUBTEAMS
) -> list[dict[str, Any]]:
    objects = []
    for d in range(departments):
        dept = f"dept-{d}"
        objects.append(quota(dept, None, 8000, 32000, 1000, is_parent=True))
        for t in range(teams):
            team = f"{dept}-team-{t}"
            objects.append(quota(team, dept, 80, 320, 10, is_parent=True))
            for s in range(subteams):
                objects.append(
                    quota(f"{team}-sub-{s}", team, 8, 32, 1, is_parent=False, lend=(s % 7 != 0))
                )
    return objects


def pod(
    rng: random.Random, group: str, index: int, intensity: float, scheduled: bool
) -> dict[str, Any]:
    """A pod of `group`; `intensity` scales its requests (1.0: the sub-team's min, spread).

    Like the pods of a Deployment, a sub-team's pods come from a few templates: the even
    ones are workers, the odd ones are servers at half the size, and one in ten has a GPU.
    """
    size = 1.0 if index % 2 == 0 else 0.5
    cpu_milli = max(50, round(800 * intensity * size / 50) * 50)
    memory_mi = max(64, round(3200 * intensity * size / 64) * 64)
    requests = {"cpu": f"{cpu_milli}m", "memory": f"{memory_mi}Mi"}
    if index % 10 == 9:
        requests["nvidia.com/gpu"] = "1"
    name = f"{group}-worker-{index:03d}-{rng.randrange(16**5):05x}"
    status: dict[str, Any] = {
        "phase": "Running" if scheduled else "Pending",
        "qosClass": "Burstable",
    }
    spec: dict[str, Any] = {
        "containers": [
            {
                "name": "worker",
                "image": f"registry.example/{group}/worker:1.{index % 7}",
                "imagePullPolicy": "IfNotPresent",
                "ports": [{"containerPort": 8080, "protocol": "TCP"}],
                "resources": {"requests": requests, "limits": {"memory": f"{memory_mi}Mi"}},
                "terminationMessagePath": "/dev/termination-log",
            }
        ],
        "priority": rng.choice([0, 100, 1000]),
        "schedulerName": "default-scheduler",
        "restartPolicy": "Always",
        "serviceAccountName": "default",
        "tolerations": [
            {
                "key": "node.kubernetes.io/not-ready",
                "operator": "Exists",
                "effect": "NoExecute",
                "tolerationSeconds": 300,
            }
        ],
    }
    if scheduled:
        spec["nodeName"] = f"node-{rng.randrange(NODES):04d}"
        status["startTime"] = f"2026-01-0{1 + index % 9}T{index % 24:02d}:00:00Z"
        status["conditions"] = [
            {"type": "Ready", "status": "True", "lastTransitionTime": status["startTime"]}
        ]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": group,
            "uid": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
            "labels": {"app": "worker", "pod-template-hash": "5d8f7c9b6d"},
            "creationTimestamp": "2026-01-01T00:00:00Z",
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "ReplicaSet",
                    "name": f"{group}-worker-5d8f7c9b6d",
                    "uid": "rs",
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": spec,
        "status": status,
    }


def pods(
    seed: int = 1,
    *,
    departments: int = DEPARTMENTS,
    teams: int = TEAMS,
    subteams: int = SUBTEAMS,
    per_subteam: int = PODS_PER_SUBTEAM,
) -> list[dict[str, Any]]:
    """Sub-teams ask between 0.2x and 2.5x their min; about 3 in 4 pods are running, which
    keeps the running pods inside the nodes' capacity while the busiest teams borrow."""
    leaves = [
        f"dept-{d}-team-{t}-sub-{s}"
        for d in range(departments)
        for t in range(teams)
        for s in range(subteams)
    ]
    return leaf_pods(leaves, seed=seed, per_subteam=per_subteam)


def leaf_pods(
    leaves: list[str], *, seed: int = 1, per_subteam: int = PODS_PER_SUBTEAM
) -> list[dict[str, Any]]:
    """`per_subteam` pods in each of the sub-teams `leaves`, drawn as `pods` draws them."""
    rng = random.Random(seed)
    result = []
    for leaf in leaves:
        intensity = rng.uniform(0.2, 2.5)
        for i in range(per_subteam):
            result.append(pod(rng, leaf, i, intensity, scheduled=rng.random() < 0.75))
    return result


def nodes(count: int = NODES) -> list[dict[str, Any]]:
    """Ready kubeadm nodes of 62 CPUs, 250 GiB and 4 GPUs, as `kubectl get nodes -o json` prints
    them (conditions, capacity, ephemeral storage and huge pages, managed fields)."""
    nodes: list[dict[str, Any]] = orjson.loads(_nodes(count))
    return nodes


@functools.cache
def _nodes(count: int) -> bytes:
    """Made once (5,000 take seconds), as JSON: each caller gets objects of its own to change."""
    return orjson.dumps(
        [
            realistic.node(f"node-{i:04d}", cpu="62", memory_gi=250, extra={"nvidia.com/gpu": "4"})
            for i in range(count)
        ]
    )


def cluster() -> dict[str, Any]:
    """Everything as one `kind: List`, as `kubectl get eq,pods,nodes -A -o json` prints it."""
    return {"apiVersion": "v1", "kind": "List", "items": quotas() + pods() + nodes()}
