"""How the webhook process runs.

Each field is a flag of `elastic-quota webhook` (and an `ELASTIC_QUOTA_*` variable): the CLI
takes the flag's default from the field and its help from the first paragraph of the field's
docstring.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from eq_engine import EngineConfig


@dataclass(frozen=True, kw_only=True)
class WebhookSettings:
    cert_file: str
    """PEM serving certificate (with its chain), re-read when it changes."""
    key_file: str
    """PEM private key of the certificate."""
    address: str = "0.0.0.0"
    """Address the HTTPS and the probe ports listen on."""
    port: int = 9443
    """HTTPS port of the admission endpoints (the Service's targetPort)."""
    probe_port: int = 8080
    """Plain HTTP port of /healthz, /readyz and /metrics, for kubelet and Prometheus."""
    cert_check_interval: float = 10.0
    """Seconds between checks of the certificate files for a rotation."""
    gate_pods: bool = True
    """Add the admission gate to new pods of limited groups at /mutate/pods (false: that
    endpoint lets every pod through unchanged)."""
    pool_affinity: bool = True
    """Add to new pods of a node pool's quota tree a required node affinity to that pool's
    nodes, from its ElasticQuotaProfile, at /mutate/pods (false: pods are placed anywhere;
    their quota still counts in their group's tree)."""
    engine: EngineConfig = field(default_factory=EngineConfig)
