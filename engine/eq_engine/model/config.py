"""Settings that change what the engine computes (not how the edges run)."""

from __future__ import annotations

from dataclasses import dataclass, field

from .quantities import ResourceList


@dataclass(frozen=True, slots=True, kw_only=True)
class EngineConfig:
    """The built-in groups and the switches of the algorithm.

    The defaults are Koordinator's, so a cluster moving from Koordinator keeps its objects.
    """

    root_name: str = "koordinator-root-quota"
    """Name of the root group.

    The root is the parent of every top-level group; its total is the cluster's capacity."""

    system_name: str = "koordinator-system-quota"
    """Name of the system group.

    It holds the pods of the system namespaces; it is unlimited, and its used is taken off the
    total first."""

    default_name: str = "koordinator-default-quota"
    """Name of the default group.

    It holds the pods that belong to no group; its used is taken off the total first."""

    namespace: str = "koordinator-system"
    """Namespace of the built-in groups' objects."""

    system_namespaces: frozenset[str] = None  # type: ignore[assignment]  # resolved below
    """Every pod in these namespaces belongs to the system group, whatever its labels say.
    Default: `kube-system` and `namespace`, where the built-in groups and the product itself
    run: the product never gates, evicts or denies its own pods, whatever the tree says."""

    default_min: ResourceList = field(default_factory=dict)
    """Guarantee of the default group: its pods within it are labelled in-quota."""

    default_max: ResourceList | None = None
    """Ceiling of the default group; unset: unlimited.

    Unset, no resource is masked out."""

    min_scaling: bool = True
    """Scale the children's mins down when their parent's total cannot cover them.

    As Koordinator does; off, every min is kept as written."""

    reclaim_min_runtime: float = 0.0
    """Seconds a pod (or gang) must have run before reclaim or preemption takes it while an
    older candidate of its group is left (or at all, with `reclaim_min_runtime_hard`); 0: off.

    A job that has just started has the most to lose and the least done: protecting it for a
    while spreads the evictions over the pods that have had their run."""

    reclaim_min_runtime_hard: bool = False
    """Never take a pod (or gang) that has run for less than `reclaim_min_runtime`, by reclaim
    or by preemption, even when nothing else may go.

    What it costs: a group whose guarantee is taken by young pods waits up to
    `reclaim_min_runtime` to get it back, and a pod that would preempt them waits as long
    (KAI's min-runtime, Volcano's cdp)."""

    def __post_init__(self) -> None:
        if self.system_namespaces is None:
            object.__setattr__(
                self, "system_namespaces", frozenset({"kube-system", self.namespace})
            )

    @property
    def builtin_names(self) -> frozenset[str]:
        return frozenset({self.root_name, self.system_name, self.default_name})
