"""How the operator runs.

Each field is a flag of `elastic-quota operator` (and an `ELASTIC_QUOTA_*` variable): the CLI
takes the flag's default from the field and its help from the first paragraph of the field's
docstring; later paragraphs give the reason for the default.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from eq_engine import EngineConfig


@dataclass(frozen=True, kw_only=True)
class ReclaimSettings:
    enabled: bool = True
    """Evict borrowed pods when a group's used stays above its runtime."""
    interval: float = 1.0
    """Seconds between two looks at every group's used and runtime.

    Koordinator's default."""
    delay: float = 120.0
    """Seconds a group's used must stay above its runtime before a round of evictions; each
    round starts a new window, so a group loses at most `max_evictions` pods per delay.

    Koordinator's default: a short burst is not worth an eviction."""
    preemption: bool = True
    """Let a pod that waits behind the gate for room in its own group have strictly
    lower-priority, preemptible pods of that group evicted to make exactly its room.

    On by default, as Koordinator's quota preemption (`DisableDefaultQuotaPreemption` turns it
    off there) and Kueue's `withinClusterQueue: LowerPriority`: a group's guarantee goes to its
    most important work. A group's `koord-queue/enable-queueunit-preemption` annotation
    overrides it for that group."""
    max_evictions: int = 5
    """Pods evicted per group per round (one round per `delay`) at most.

    Small, so that one round cannot empty a group."""
    dry_run: bool = False
    """Only report (Events, logs, metrics) what would be evicted."""
    spare_jobs: bool = True
    """Take a Job's pod out of its Job's count before evicting it (its tracking finalizer off,
    as the Job controller does for pods it deletes), so that the Job neither counts it as a
    failure nor holds its replacement back; a Job annotated `spare-job: "false"`, or whose
    podFailurePolicy counts disruptions, is left as it is.

    Kubernetes counts an evicted pod as a failure of its Job: a Job with the default
    backoffLimit of 6 that loses 7 pods to reclaim fails, and each loss delays its replacements
    by a backoff that doubles."""


@dataclass(frozen=True, kw_only=True)
class OperatorSettings:
    engine: EngineConfig = field(default_factory=EngineConfig)
    reclaim: ReclaimSettings = field(default_factory=ReclaimSettings)
    namespaces: tuple[str, ...] = ()
    """Namespaces whose pods and ElasticQuotas are watched; empty: all of them."""
    admission_hold: float = 60.0
    """Seconds a pod whose gate was lifted holds its group's budget while the scheduler has not
    bound it; then it counts only once bound."""
    gang_start_timeout: float = 300.0
    """Seconds a gang whose gates were lifted has for its minimum of pods to be Ready; then it is
    evicted whole and waits behind the gate again, after a backoff; 0: never.

    Kueue's `waitForPodsReady.timeout` default. Shorter than Koordinator's 600 s gang wait: the
    gate has waited for quota already, so what can be missing now is nodes, and a gang placed
    in part holds its group's room for nothing."""
    gang_requeue_backoff: float = 60.0
    """Seconds a gang requeued once waits before the gate admits it again, doubling with each
    requeue of the same gang.

    Kueue's `requeuingStrategy.backoffBaseSeconds` default."""
    gang_requeue_max_backoff: float = 3600.0
    """Seconds a requeued gang waits at most before the gate admits it again.

    Kueue's `requeuingStrategy.backoffMaxSeconds` default."""
    batch_interval: float = 0.5
    """Seconds between recomputes: a burst of events costs one recompute, not one each."""
    probe_port: int = 8080
    """Plain HTTP port of /healthz, /readyz and /metrics."""
    lease_name: str = "elastic-quota-operator"
    """The Lease, in the built-in groups' namespace, that elects the one replica that writes."""
    lease_duration: float = 15.0
    """Seconds a stand-by waits after it last saw the Lease change before it takes over; the
    leader renews every 2/15 of it and gives up after 2/3 without renewal.

    client-go's LeaseDuration."""
    identity: str = ""
    """This replica's name in the Lease (the pod name); generated if empty."""
    api_qps: float = 50.0
    """Writes per second to the API server (patches, evictions, Events) after a burst, paced by
    a client-side token bucket as client-go's, and as many gate lifts in a bucket of their own;
    0: no limit.

    kube-scheduler's default: like the scheduler's bindings, the operator's label
    writes grow with the number of pods (client-go's own default, 5, would take 4 hours to
    label 75,000 running pods on a first install; kube-controller-manager's 20, an hour).
    API Priority and Fairness still protects the server. Reads (LIST, WATCH) are a few long
    requests and are not paced; nor are the Lease's renewals, so that a burst of writes
    cannot cost the leadership.

    The gate lifts have a bucket of their own: each is a step on a new pod's way to the
    scheduler, which binds at its own 50 a second after a burst of 100. Drawing on the labels'
    and the groups' budget, ahead of them but no faster than the bindings and with a burst the
    labels had spent, the lifts let the scheduler bind no faster than they went: gated pods
    were bound 2 s behind ungated ones from the start of a burst of 3,000 to its end, on the
    real control plane (docs/benchmarks.md, "The real control plane")."""
    api_burst: int = 100
    """Writes that may go at once before `api_qps` paces them (kube-scheduler's default)."""
    write_workers: int = 16
    """Writes in flight at once; all but one take ElasticQuota writes first, that one pod labels
    first.

    A round trip is mostly waiting, so a few overlap well."""
