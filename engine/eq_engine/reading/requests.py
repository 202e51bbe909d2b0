"""A pod's resource request, counted the way Kubernetes counts it.

The rule of `k8s.io/component-helpers` `PodRequests`, which kube-scheduler and Koordinator
use: regular containers add up; sidecars (init containers with
`restartPolicy: Always`) run beside them and add up too; each ordinary init container runs alone
next to the sidecars started before it; the pod needs the larger of the two phases, plus its
overhead. A container with a limit but no request requests its limit, as the API server
defaults it. Pod-level resources (`spec.resources`, Kubernetes 1.32) replace that sum for the
resources they name among those Kubernetes supports there (cpu and memory); overhead comes on top.

    containers 1 + 2 cpu, init container 4 cpu            -> 4 cpu
    containers 1 + 2 cpu, sidecar 1 cpu, init 3 cpu       -> max(1+2+1, 1+3) = 4 cpu
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache

from ..model import ResourceList

POD_LEVEL_RESOURCES = frozenset({"cpu", "memory"})
"""What `spec.resources` may set (`IsSupportedPodLevelResource`, component-helpers 1.32)."""


@dataclass(frozen=True, slots=True)
class ContainerRequests:
    requests: ResourceList
    limits: ResourceList
    sidecar: bool = False

    @property
    def effective(self) -> ResourceList:
        """Requests, with a limit standing in for a missing request."""
        return {**self.limits, **self.requests}


def _add(total: dict[str, int], amounts: Mapping[str, int]) -> None:
    for name, amount in amounts.items():
        total[name] = total.get(name, 0) + amount


def _take_max(total: dict[str, int], amounts: Mapping[str, int]) -> None:
    for name, amount in amounts.items():
        total[name] = max(total.get(name, 0), amount)


def pod_request(
    *,
    containers: Iterable[ContainerRequests],
    init_containers: Iterable[ContainerRequests] = (),
    overhead: ResourceList | None = None,
    pod_level: ContainerRequests | None = None,
) -> dict[str, int]:
    """The pod's request per resource in canonical units."""
    running: dict[str, int] = {}
    for container in containers:
        _add(running, container.effective)
    sidecars: dict[str, int] = {}
    init_peak: dict[str, int] = {}
    for container in init_containers:
        if container.sidecar:
            _add(running, container.effective)
            _add(sidecars, container.effective)
            _take_max(init_peak, sidecars)
        else:
            alone = dict(sidecars)
            _add(alone, container.effective)
            _take_max(init_peak, alone)
    _take_max(running, init_peak)
    if pod_level is not None:
        running.update(
            (name, amount)
            for name, amount in pod_level.effective.items()
            if name in POD_LEVEL_RESOURCES
        )
    _add(running, overhead or {})
    return running


def shared(request: ResourceList) -> ResourceList:
    """One dict for every equal request (the pods of a workload are alike): an engine holds
    every pod's. Callers never change the dict."""
    return _shared_items(tuple(sorted(request.items())))


@lru_cache(maxsize=65536)
def _shared_items(items: tuple[tuple[str, int], ...]) -> ResourceList:
    return dict(items)
