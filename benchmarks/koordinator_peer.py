"""koord-scheduler (Koordinator v1.8.0, tools/peers/koordinator) on a control plane of its own,
with its ElasticQuota plugin computing runtime, request and `status.used` for the pods that name
it, and its revoke controller on.

It waits at start-up for informers of all of Koordinator's CRDs (config/crd/bases of the pinned
module), which conflict with the product's own ElasticQuota CRD: hence a plane of its own. The
profile is Koordinator's shipped one reduced to the ElasticQuota plugin: in preFilter, postFilter
(its preemption inside a quota, and no other, so that no pod of another quota is preempted by
priority) and reserve. `monitorAllQuotas` turns revoke on (off by default); `delayEvictTime` is
how long a group must stay above its runtime before revoke.
"""

from __future__ import annotations

import subprocess
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field

import yaml

from scripts.control_plane.peers import BuiltPeer
from scripts.control_plane.plane import ControlPlane
from scripts.control_plane.processes import Component, ControlPlaneError, Ports, tail

SCHEDULER = "koord-scheduler"
SYSTEM_NAMESPACE = "koordinator-system"
FEATURE_GATES = "MultiQuotaTree=true"
"""Trees per node pool (`tree-id`), off by default in v1.8.0."""


@dataclass
class KoordScheduler:
    plane: ControlPlane
    peer: BuiltPeer
    delay_evict_seconds: int
    _ports: Ports = field(default_factory=Ports)
    _component: Component | None = None

    def install(self) -> None:
        """Koordinator's CRDs and its namespace, on the plane."""
        crds = self.peer.source() / "config" / "crd" / "bases"
        self._kubectl("apply", "--server-side", "-f", str(crds))
        self._kubectl("wait", "--for=condition=established", "crd", "--all")
        self._kubectl("create", "namespace", SYSTEM_NAMESPACE)

    def _kubectl(self, *arguments: str) -> None:
        subprocess.run(
            ["kubectl", f"--kubeconfig={self.plane.kubeconfig}", *arguments],
            check=True,
            capture_output=True,
            text=True,
        )

    def _configuration(self) -> dict[str, object]:
        plugin = [{"name": "ElasticQuota"}]
        arguments = {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "ElasticQuotaArgs",
            "quotaGroupNamespace": SYSTEM_NAMESPACE,
            "monitorAllQuotas": True,
            "delayEvictTime": f"{self.delay_evict_seconds}s",
        }
        return {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "clientConnection": {"kubeconfig": str(self.plane.kubeconfig)},
            "leaderElection": {"leaderElect": False},
            "profiles": [
                {
                    "schedulerName": SCHEDULER,
                    "plugins": {
                        "preFilter": {"enabled": plugin},
                        "postFilter": {"disabled": [{"name": "*"}], "enabled": plugin},
                        "reserve": {"enabled": plugin},
                    },
                    "pluginConfig": [{"name": "ElasticQuota", "args": arguments}],
                }
            ],
        }

    def start(self, timeout: float = 60.0) -> None:
        """Started, and healthy; it lists every quota and pod afresh."""
        directory = self.plane.directory
        config = directory / "koord-scheduler.yaml"
        config.write_text(yaml.safe_dump(self._configuration()))
        secure, health = self._ports.take(), self._ports.take()
        kubeconfig = self.plane.kubeconfig
        command = [
            str(self.peer.binary(SCHEDULER)),
            f"--config={config}",
            f"--authentication-kubeconfig={kubeconfig}",
            f"--authorization-kubeconfig={kubeconfig}",
            "--bind-address=127.0.0.1",
            f"--secure-port={secure}",
            "--address=127.0.0.1",  # its insecure port, on every address unless told
            f"--port={health}",
            f"--feature-gates={FEATURE_GATES}",
        ]
        probe = _probe(f"http://127.0.0.1:{health}/healthz")
        log = directory / "logs" / f"{SCHEDULER}.log"
        self._component = Component(SCHEDULER, lambda: command, probe, log)
        self._component.start()
        self.plane.wait_ready([self._component], timeout)

    def stop(self) -> None:
        if self._component is not None:
            self._component.stop()
            self._component = None

    def pid(self) -> int:
        assert self._component is not None and self._component.popen is not None
        return self._component.popen.pid

    def check(self) -> None:
        """Raises, with its log, if it exited."""
        if self._component is not None and (code := self._component.exited()) is not None:
            raise ControlPlaneError(f"{SCHEDULER} exited with {code}:\n{tail(self._component.log)}")


def _probe(url: str) -> Callable[[], str | None]:
    def probe() -> str | None:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                return None if response.status == 200 else f"/healthz {response.status}"
        except (urllib.error.URLError, OSError) as error:
            return f"/healthz: {error}"

    return probe
