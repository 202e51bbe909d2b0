"""Pod groups (gangs): pods that are useless unless at least a minimum of them run together.

Read-only, in the forms users already write (docs/pod-groups.md cites each source):

- Koordinator's gang on the pod: the annotation `gang.scheduling.koordinator.sh/name` (or the
  label `pod-group.scheduling.sigs.k8s.io/name`), its minimum in the label
  `pod-group.scheduling.sigs.k8s.io/min-available` or else the annotation
  `gang.scheduling.koordinator.sh/min-available`. The first member (oldest) whose minimum reads
  sets the gang's, as in Koordinator.
- A PodGroup object named by the pod: the label `pod-group.scheduling.sigs.k8s.io` names a
  `scheduling.sigs.k8s.io/v1alpha1` PodGroup (Koordinator's), the label
  `scheduling.x-k8s.io/pod-group` a `scheduling.x-k8s.io/v1alpha1` one (scheduler-plugins),
  both with `spec.minMember`; `spec.schedulingGroup.podGroupName` a `scheduling.k8s.io/v1alpha2`
  PodGroup (Kubernetes 1.36) with `spec.schedulingPolicy.gang.minCount`. The minimum is the
  object's, once the watch has it.

A gang is named by its source and `namespace/name`: the same name in two forms is two gangs.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

KOORDINATOR: Final = "gang"
"""The source of a gang declared on its pods (Koordinator's annotations)."""
NAME: Final = "gang.scheduling.koordinator.sh/name"
MIN_AVAILABLE: Final = "gang.scheduling.koordinator.sh/min-available"
LIGHT_NAME: Final = "pod-group.scheduling.sigs.k8s.io/name"
LIGHT_MIN_AVAILABLE: Final = "pod-group.scheduling.sigs.k8s.io/min-available"


@dataclass(frozen=True, slots=True)
class PodGroupKind:
    """A PodGroup API: where its objects live, how a pod names one, where its minimum is."""

    group: str
    version: str
    label: str | None
    """The pod label naming the PodGroup; None: the pod's `spec.schedulingGroup`."""
    minimum: tuple[str, ...]
    """The path of the minimum in the object."""

    @property
    def source(self) -> str:
        return f"podgroups.{self.group}"

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}"


POD_GROUP_KINDS: Final = (
    PodGroupKind(
        "scheduling.sigs.k8s.io",
        "v1alpha1",
        "pod-group.scheduling.sigs.k8s.io",
        ("spec", "minMember"),
    ),
    PodGroupKind(
        "scheduling.x-k8s.io", "v1alpha1", "scheduling.x-k8s.io/pod-group", ("spec", "minMember")
    ),
    PodGroupKind(
        "scheduling.k8s.io", "v1alpha2", None, ("spec", "schedulingPolicy", "gang", "minCount")
    ),
)


@dataclass(frozen=True, slots=True)
class GangRef:
    """A pod's gang: which one, and the minimum the pod declares (Koordinator's form)."""

    key: str
    """`source:namespace/name`."""
    minimum: int | None = None
    """Declared on the pod; None: the gang's PodGroup object has it (or the pod declares none)."""
    problem: str | None = None
    """What is wrong with the minimum the pod declares (the field and what was expected)."""

    @property
    def name(self) -> str:
        """`namespace/name`, as users write it."""
        return self.key.partition(":")[2]


@dataclass(frozen=True, slots=True)
class PodGroup:
    """A PodGroup object: the minimum of the gang it names."""

    key: str
    minimum: int | None
    problem: str | None = None


_NAMING_LABELS: Final = frozenset([LIGHT_NAME, *(k.label for k in POD_GROUP_KINDS if k.label)])
"""The labels that can name a pod's gang: most pods carry none, and are done with at once."""


def gang_of(
    namespace: str,
    labels: Mapping[str, str],
    annotations: Mapping[str, str],
    scheduling_group: str = "",
) -> GangRef | None:
    """The gang a pod belongs to, if any: a PodGroup it names (Koordinator's label first, as
    Koordinator looks, then scheduler-plugins' and Kubernetes' `schedulingGroup`), else the
    gang its Koordinator annotations declare."""
    if not scheduling_group and NAME not in annotations and _NAMING_LABELS.isdisjoint(labels):
        return None
    for kind in POD_GROUP_KINDS:
        name = labels.get(kind.label) if kind.label else scheduling_group
        if name:
            return GangRef(_key(kind.source, namespace, name))
    name = labels.get(LIGHT_NAME) or annotations.get(NAME)
    if not name:
        return None
    field, text = (
        (f"metadata.labels[{LIGHT_MIN_AVAILABLE}]", labels[LIGHT_MIN_AVAILABLE])
        if labels.get(LIGHT_MIN_AVAILABLE)
        else (f"metadata.annotations[{MIN_AVAILABLE}]", annotations.get(MIN_AVAILABLE))
    )
    minimum, problem = _minimum(field, text)
    return GangRef(_key(KOORDINATOR, namespace, name), minimum, problem)


def parse_pod_group(kind: PodGroupKind, raw: Mapping[str, Any]) -> PodGroup:
    metadata = raw.get("metadata") or {}
    value: Any = raw
    for step in kind.minimum:
        value = value.get(step) if isinstance(value, Mapping) else None
    field = ".".join(kind.minimum)
    minimum, problem = _minimum(field, None if value is None else str(value))
    key = _key(kind.source, metadata.get("namespace", ""), metadata.get("name", ""))
    return PodGroup(key, minimum, problem)


def _key(source: str, namespace: str, name: str) -> str:
    return sys.intern(f"{source}:{namespace}/{name}")


_WHOLE = re.compile(r"[+-]?[0-9]+")


def _minimum(field: str, text: str | None) -> tuple[int | None, str | None]:
    """A minimum as Koordinator and the PodGroup APIs mean it: a whole number, at least 1."""
    if text is None or text == "":
        return None, f"{field}: missing; expected the gang's minimum number of pods"
    if not _WHOLE.fullmatch(text) or not -(2**31) <= int(text) < 2**31:  # Go's ParseInt(s, 10, 32)
        return None, f"{field}: {text!r} is not a whole number of pods"
    value = int(text)
    if value < 1:
        return None, f"{field}: {value}; expected at least 1 pod"
    return value, None


@dataclass(frozen=True, slots=True)
class Requeue:
    """A gang the operator evicted whole because its minimum did not start in time
    (`decisions.requeue`): how many times so far, and when the gate may admit it again."""

    gang: str
    """The gang's key (`GangRef.key`)."""
    times: int
    until: float
    """Seconds since the epoch."""

    @property
    def until_text(self) -> str:
        """`until` in RFC 3339, UTC, to the second, as the API server writes times."""
        return datetime.fromtimestamp(self.until, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
