"""Manifests the kubectl stories apply, as YAML text a user would write: a namespace with its
group, a bare pod, a Job and Koordinator's gang annotations.
`tests/manifests.py` builds the dicts the engine and the emulator are fed directly."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml


def write(tmp: Path, name: str, *documents: dict[str, Any]) -> Path:
    """The documents as one YAML file under `tmp`, for `kubectl apply -f`."""
    path = tmp / name
    path.write_text(yaml.safe_dump_all(documents, sort_keys=False))
    return path


def group(name: str, *, min_cpu: str, max_cpu: str, memory: str = "2Gi") -> list[dict[str, Any]]:
    """A namespace and its group, named like it (examples/pod-groups/group.yaml's shape)."""
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}},
        {
            "apiVersion": "scheduling.sigs.k8s.io/v1alpha1",
            "kind": "ElasticQuota",
            "metadata": {"name": name, "namespace": name},
            "spec": {
                "min": {"cpu": min_cpu, "memory": memory},
                "max": {"cpu": max_cpu, "memory": memory},
            },
        },
    ]


def container(cpu: str | None, command: list[str] | None = None) -> dict[str, Any]:
    found: dict[str, Any] = {"name": "work", "image": "busybox:1.36"}
    if command:
        found["command"] = command
    if cpu:
        found["resources"] = {"requests": {"cpu": cpu, "memory": "256Mi"}}
    return found


def pod(name: str, namespace: str, cpu: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"containers": [container(cpu, ["sleep", "3600"])]},
    }


def job(
    name: str,
    namespace: str,
    *,
    parallelism: int,
    completions: int,
    cpu: str | None = "500m",
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
) -> dict[str, Any]:
    """A batch/v1 Job whose pods' template carries `labels` and `annotations`."""
    template: dict[str, Any] = {}
    if labels:
        template["labels"] = labels
    if annotations:
        template["annotations"] = annotations
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "parallelism": parallelism,
            "completions": completions,
            "template": {
                "metadata": template,
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [container(cpu, ["sleep", "60"] if cpu else None)],
                },
            },
        },
    }


def gang(name: str, minimum: int) -> dict[str, str]:
    """Koordinator's gang annotations on a pod template."""
    return {
        "gang.scheduling.koordinator.sh/name": name,
        "gang.scheduling.koordinator.sh/min-available": str(minimum),
    }
