"""How the webhook process runs; `elastic-quota webhook --help` documents each flag."""

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
    port: int = 9443
    """HTTPS port of the admission endpoints (the Service's targetPort)."""
    probe_port: int = 8080
    """Plain HTTP port of /healthz, /readyz and /metrics, for kubelet and Prometheus."""
    cert_check_interval: float = 10.0
    """Seconds between checks of the certificate files for a rotation."""
    gate_pods: bool = True
    """Add the admission gate to new pods of limited groups (`/mutate/pods`)."""
    engine: EngineConfig = field(default_factory=EngineConfig)
