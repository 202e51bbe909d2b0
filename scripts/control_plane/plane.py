"""A real control plane as local processes, started the way envtest starts one, plus the rest.

etcd on a directory of its own (no fsync), kube-apiserver serving TLS on 127.0.0.1 with a
client-certificate admin, a ServiceAccount issuer and keys (TokenRequest works), Node and RBAC
authorization and its default admission plugins; kube-controller-manager with every controller
that is on by default (`--controllers=*`), each under its own ServiceAccount as kubeadm runs
them; kube-scheduler; kwok, which keeps the Nodes created here Ready and does to bound pods what
a kubelet would. Every port is free when taken; every process logs into `logs/` of the run's
directory; `start` returns once `/readyz` and every component are ready and every Node is Ready
and untainted, or raises saying which is not, with the logs' last lines.
"""

from __future__ import annotations

import ssl
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from scripts.control_plane.audit import AUDIT_POLICY
from scripts.control_plane.build import Built
from scripts.control_plane.certs import (
    SERVING_IPS,
    SERVING_NAMES,
    Authority,
    Pair,
    service_account_keys,
)
from scripts.control_plane.client import Client
from scripts.control_plane.processes import Component, ControlPlaneError, Ports, tail

STAGES = Path(__file__).resolve().parent / "stages"
COMPONENTS = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok")
SERVICE_CIDR = "10.0.0.0/24"
POD_CIDR = "10.244.0.0/16"
ISSUER = "https://kubernetes.default.svc.cluster.local"
NODE_CAPACITY = {"cpu": "32", "memory": "256Gi", "pods": "110"}
NOT_READY_TAINT = "node.kubernetes.io/not-ready"
_POLL = 0.1


@dataclass
class ControlPlane:
    """The processes and their files under `directory`; `start`, then `stop` (or `with`)."""

    directory: Path
    built: Built
    nodes: int = 4
    components: tuple[str, ...] = COMPONENTS
    node_capacity: dict[str, str] = field(default_factory=lambda: dict(NODE_CAPACITY))
    audit_policy: dict[str, Any] = field(default_factory=lambda: AUDIT_POLICY)
    """What the API server's audit log records (a benchmark's trace asks for more)."""
    _running: list[Component] = field(default_factory=list)

    def __post_init__(self) -> None:
        unknown = set(self.components) - set(COMPONENTS)
        assert not unknown, f"no such components: {sorted(unknown)}"
        assert {"etcd", "kube-apiserver"} <= set(self.components), "etcd and the API server"
        self.directory.mkdir(parents=True, exist_ok=True)
        self.logs = self.directory / "logs"
        self._ports = Ports()
        self.etcd_port, self.peer_port, self.apiserver_port = (self._ports.take() for _ in "eap")
        self.controller_manager_port, self.scheduler_port, self.kwok_port = (
            self._ports.take() for _ in "csk"
        )

    # -- files -------------------------------------------------------------------------------

    @property
    def server(self) -> str:
        return f"https://127.0.0.1:{self.apiserver_port}"

    @property
    def kubeconfig(self) -> Path:
        """The admin's kubeconfig (system:masters)."""
        return self.directory / "admin.kubeconfig"

    @property
    def audit_log(self) -> Path:
        """The API server's audit log (`audit_policy`), one JSON event a line."""
        return self.directory / "audit.jsonl"

    @property
    def ca(self) -> Path:
        return self.directory / "pki" / "ca.crt"

    def _write_files(self) -> None:
        pki = self.directory / "pki"
        authority = Authority(pki)
        self._authority = authority
        self._serving = authority.serving("apiserver", SERVING_NAMES, SERVING_IPS)
        self._sa = service_account_keys(pki)
        # The front proxy's CA, as kubeadm makes one: the API server's requests to aggregated
        # servers, and what the components read from extension-apiserver-authentication.
        self._proxy = Authority(pki / "front-proxy").client(
            "front-proxy-client", "front-proxy-client"
        )
        users = {
            "admin": ("admin", ("system:masters",)),
            "kube-controller-manager": ("system:kube-controller-manager", ()),
            "kube-scheduler": ("system:kube-scheduler", ()),
            # kwok writes node and pod status, leases and deletes pods: a kubelet's work for
            # every node at once, which the Node authorizer would confine to one.
            "kwok": ("kwok", ("system:masters",)),
        }
        for stem, (user, groups) in users.items():
            self._kubeconfig(stem, authority.client(stem, user, groups))
        (self.directory / "kube-scheduler.yaml").write_text(
            yaml.safe_dump(
                {
                    "apiVersion": "kubescheduler.config.k8s.io/v1",
                    "kind": "KubeSchedulerConfiguration",
                    "clientConnection": {
                        "kubeconfig": str(self.directory / "kube-scheduler.kubeconfig")
                    },
                    "leaderElection": {"leaderElect": False},
                }
            )
        )
        (self.directory / "audit-policy.yaml").write_text(yaml.safe_dump(self.audit_policy))
        stages = [
            *sorted(self.built.stages.glob("*.yaml")),
            *sorted(STAGES.glob("*.yaml")),
        ]
        (self.directory / "kwok-stages.yaml").write_text(
            "".join(f"---\n{path.read_text()}" for path in stages)
        )

    def _kubeconfig(self, stem: str, client: Pair) -> Path:
        path = self.directory / f"{stem}.kubeconfig"
        path.write_text(
            yaml.safe_dump(
                {
                    "apiVersion": "v1",
                    "kind": "Config",
                    "clusters": [
                        {
                            "name": "control-plane",
                            "cluster": {
                                "server": self.server,
                                "certificate-authority": str(self._authority.pair.cert),
                            },
                        }
                    ],
                    "users": [
                        {
                            "name": stem,
                            "user": {
                                "client-certificate": str(client.cert),
                                "client-key": str(client.key),
                            },
                        }
                    ],
                    "contexts": [
                        {"name": stem, "context": {"cluster": "control-plane", "user": stem}}
                    ],
                    "current-context": stem,
                }
            )
        )
        path.chmod(0o600)
        return path

    # -- talking to the API server -----------------------------------------------------------

    @property
    def client(self) -> Client:
        return Client(self.server, self.directory / "pki")

    def _context(self) -> ssl.SSLContext:
        return self.client.context()

    def request(
        self, method: str, path: str, body: object = None, *, timeout: float = 10.0
    ) -> tuple[int, Any]:
        return self.client.request(method, path, body, timeout=timeout)

    # -- probes ------------------------------------------------------------------------------

    @staticmethod
    def _get(url: str, context: ssl.SSLContext | None = None) -> tuple[int, str] | None:
        try:
            with urllib.request.urlopen(url, context=context, timeout=2) as response:
                return response.status, response.read().decode(errors="replace")
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode(errors="replace")
        except (OSError, ssl.SSLError):
            return None

    def _probe_etcd(self) -> str | None:
        got = self._get(f"http://127.0.0.1:{self.etcd_port}/health")
        return None if got and '"health":"true"' in got[1] else f"etcd /health: {got}"

    def _probe_apiserver(self) -> str | None:
        try:
            got = self._get(self.server + "/readyz", self._context())
        except FileNotFoundError:
            got = None
        return None if got == (200, "ok") else f"kube-apiserver /readyz: {got}"

    def _probe_serving(self, name: str, port: int, path: str) -> str | None:
        # Their serving certificates are self-signed: only whether they answer matters.
        unverified = ssl._create_unverified_context()
        got = self._get(f"https://127.0.0.1:{port}{path}", unverified)
        return None if got and got[0] == 200 else f"{name} {path}: {got}"

    def _probe_controller_manager(self) -> str | None:
        answered = self._probe_serving(
            "kube-controller-manager", self.controller_manager_port, "/healthz"
        )
        if answered:
            return answered
        # Its controllers run: the ServiceAccount controller made `default`, which every pod
        # needs (the ServiceAccount admission plugin is on).
        status, _ = self.request("GET", "/api/v1/namespaces/default/serviceaccounts/default")
        return None if status == 200 else "no ServiceAccount default/default yet"

    def _probe_scheduler(self) -> str | None:
        return self._probe_serving("kube-scheduler", self.scheduler_port, "/readyz")

    def _probe_kwok(self) -> str | None:
        got = self._get(f"http://127.0.0.1:{self.kwok_port}/readyz")
        return None if got and got[0] == 200 else f"kwok /readyz: {got}"

    def nodes_not_ready(self) -> list[str]:
        """The created Nodes that are not Ready, or still tainted not-ready: what and why."""
        status, listed = self.request("GET", "/api/v1/nodes?labelSelector=type%3Dkwok")
        if status != 200:
            return [f"listing nodes: {status} {listed}"]
        problems = []
        for node in listed["items"]:
            name = node["metadata"]["name"]
            ready = [c for c in node["status"].get("conditions", []) if c["type"] == "Ready"]
            if not ready or ready[0]["status"] != "True":
                problems.append(f"{name} not Ready")
            taints = [t["key"] for t in node["spec"].get("taints", [])]
            if NOT_READY_TAINT in taints:
                problems.append(f"{name} tainted {NOT_READY_TAINT}")
        if len(listed["items"]) < self.nodes:
            problems.append(f"{len(listed['items'])} of {self.nodes} nodes")
        return problems

    # -- components --------------------------------------------------------------------------

    def _component(self, name: str) -> Component:
        binary = str(self.built.binary(name))
        directory = self.directory
        pki = directory / "pki"
        log = self.logs / f"{name}.log"

        def renew(*attributes: str) -> Callable[[], None]:
            def take() -> None:
                for attribute in attributes:
                    setattr(self, attribute, self._ports.take())

            return take

        if name == "etcd":
            return Component(
                name,
                lambda: [
                    binary,
                    "--name=etcd",
                    f"--data-dir={directory / 'etcd'}",
                    f"--listen-client-urls=http://127.0.0.1:{self.etcd_port}",
                    f"--advertise-client-urls=http://127.0.0.1:{self.etcd_port}",
                    f"--listen-peer-urls=http://127.0.0.1:{self.peer_port}",
                    f"--initial-advertise-peer-urls=http://127.0.0.1:{self.peer_port}",
                    f"--initial-cluster=etcd=http://127.0.0.1:{self.peer_port}",
                    "--unsafe-no-fsync=true",
                    "--log-level=warn",
                ],
                self._probe_etcd,
                log,
                renew("etcd_port", "peer_port"),
            )
        if name == "kube-apiserver":
            return Component(
                name,
                lambda: [
                    binary,
                    f"--etcd-servers=http://127.0.0.1:{self.etcd_port}",
                    "--bind-address=127.0.0.1",
                    f"--secure-port={self.apiserver_port}",
                    f"--cert-dir={directory / 'kube-apiserver'}",
                    f"--tls-cert-file={self._serving.cert}",
                    f"--tls-private-key-file={self._serving.key}",
                    f"--client-ca-file={pki / 'ca.crt'}",
                    "--authorization-mode=Node,RBAC",
                    f"--service-account-issuer={ISSUER}",
                    f"--service-account-key-file={self._sa.cert}",
                    f"--service-account-signing-key-file={self._sa.key}",
                    f"--service-cluster-ip-range={SERVICE_CIDR}",
                    # Its address is loopback, which the Endpoints of `kubernetes` may not hold.
                    "--endpoint-reconciler-type=none",
                    "--allow-privileged=true",
                    "--profiling=false",
                    f"--requestheader-client-ca-file={pki / 'front-proxy' / 'ca.crt'}",
                    "--requestheader-allowed-names=front-proxy-client",
                    "--requestheader-username-headers=X-Remote-User",
                    "--requestheader-group-headers=X-Remote-Group",
                    "--requestheader-extra-headers-prefix=X-Remote-Extra-",
                    f"--proxy-client-cert-file={self._proxy.cert}",
                    f"--proxy-client-key-file={self._proxy.key}",
                    f"--audit-policy-file={directory / 'audit-policy.yaml'}",
                    f"--audit-log-path={self.audit_log}",
                    "--audit-log-format=json",
                    "--audit-log-mode=blocking",  # written before the response: counted at once
                ],
                self._probe_apiserver,
                log,
                renew("apiserver_port"),
            )
        if name == "kube-controller-manager":
            kubeconfig = directory / "kube-controller-manager.kubeconfig"
            return Component(
                name,
                lambda: [
                    binary,
                    f"--kubeconfig={kubeconfig}",
                    f"--authentication-kubeconfig={kubeconfig}",
                    f"--authorization-kubeconfig={kubeconfig}",
                    "--bind-address=127.0.0.1",
                    f"--secure-port={self.controller_manager_port}",
                    f"--cert-dir={directory / 'kube-controller-manager'}",
                    "--controllers=*",
                    "--leader-elect=false",
                    "--use-service-account-credentials=true",
                    f"--service-account-private-key-file={self._sa.key}",
                    f"--root-ca-file={pki / 'ca.crt'}",
                    f"--cluster-signing-cert-file={pki / 'ca.crt'}",
                    f"--cluster-signing-key-file={pki / 'ca.key'}",
                    f"--service-cluster-ip-range={SERVICE_CIDR}",
                    "--profiling=false",
                ],
                self._probe_controller_manager,
                log,
                renew("controller_manager_port"),
            )
        if name == "kube-scheduler":
            kubeconfig = directory / "kube-scheduler.kubeconfig"
            return Component(
                name,
                lambda: [
                    binary,
                    f"--config={directory / 'kube-scheduler.yaml'}",
                    f"--authentication-kubeconfig={kubeconfig}",
                    f"--authorization-kubeconfig={kubeconfig}",
                    "--bind-address=127.0.0.1",
                    f"--secure-port={self.scheduler_port}",
                    f"--cert-dir={directory / 'kube-scheduler'}",
                    "--profiling=false",
                ],
                self._probe_scheduler,
                log,
                renew("scheduler_port"),
            )
        assert name == "kwok"
        return Component(
            name,
            lambda: [
                binary,
                f"--kubeconfig={directory / 'kwok.kubeconfig'}",
                f"--config={directory / 'kwok-stages.yaml'}",
                "--manage-all-nodes=true",
                f"--cidr={POD_CIDR}",
                "--node-lease-duration-seconds=40",
                f"--server-address=127.0.0.1:{self.kwok_port}",
            ],
            self._probe_kwok,
            log,
            renew("kwok_port"),
        )

    def wait_ready(self, components: Iterable[Component], timeout: float) -> None:
        """Until every probe passes; a component that exits is restarted once if its port was
        taken meanwhile, else the wait fails at once with its log."""
        waiting = list(components)
        deadline = time.monotonic() + timeout
        while True:
            problems: dict[str, str] = {}
            for component in waiting:
                code = component.exited()
                if code is not None:
                    text = component.log.read_text(errors="replace")
                    if "address already in use" in text and component.restarts < 3:
                        component.restarts += 1
                        component.ports()
                        component.start()
                        problems[component.name] = "restarted on new ports"
                        continue
                    raise ControlPlaneError(
                        f"{component.name} exited with {code} while starting; the last lines "
                        f"of {component.log}:\n{tail(component.log)}"
                    )
                problem = component.probe()
                if problem is not None:
                    problems[component.name] = problem
            if not problems:
                return
            if time.monotonic() > deadline:
                raise ControlPlaneError(
                    f"not ready after {timeout:.0f} s: {problems}\n{self.report()}"
                )
            time.sleep(_POLL)

    def start(self, timeout: float = 120.0) -> None:
        """Everything started and ready, or everything stopped again and an error raised."""
        started = time.monotonic()
        try:
            self._write_files()
            for stage in (("etcd",), ("kube-apiserver",)):
                self._start(stage, timeout - (time.monotonic() - started))
            self._create_nodes()
            rest = [n for n in COMPONENTS[2:] if n in self.components]
            self._start(tuple(rest), timeout - (time.monotonic() - started))
            if "kwok" in self.components and "kube-controller-manager" in self.components:
                self._wait_nodes(timeout - (time.monotonic() - started))
        except BaseException:
            self.stop()
            raise
        self.startup_seconds = time.monotonic() - started

    def _start(self, names: tuple[str, ...], timeout: float) -> None:
        components = [self._component(n) for n in names]
        for component in components:
            component.start()
            self._running.append(component)
        self.wait_ready(components, timeout)

    def _create_nodes(self) -> None:
        for index in range(self.nodes):
            name = f"kwok-node-{index}"
            status, body = self.request(
                "POST",
                "/api/v1/nodes",
                {
                    "apiVersion": "v1",
                    "kind": "Node",
                    "metadata": {
                        "name": name,
                        "annotations": {
                            "kwok.x-k8s.io/node": "fake",
                            "node.alpha.kubernetes.io/ttl": "0",
                        },
                        "labels": {
                            "type": "kwok",
                            "kubernetes.io/hostname": name,
                            "kubernetes.io/os": "linux",
                            "kubernetes.io/arch": "amd64",
                        },
                    },
                    "status": {
                        "capacity": self.node_capacity,
                        "allocatable": self.node_capacity,
                    },
                },
            )
            if status != 201:
                raise ControlPlaneError(f"creating node {name}: {status} {body}")

    def _wait_nodes(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while problems := self.nodes_not_ready():
            for component in self._running:
                if component.exited() is not None:
                    raise ControlPlaneError(self.report())
            if time.monotonic() > deadline:
                raise ControlPlaneError(
                    f"nodes not ready after {timeout:.0f} s: {problems}\n{self.report()}"
                )
            time.sleep(_POLL)

    def running(self) -> dict[str, int | None]:
        """Each started component: None while it runs, else its exit code."""
        return {c.name: c.exited() for c in self._running}

    def component(self, name: str) -> Component:
        (found,) = [c for c in self._running if c.name == name]
        return found

    def report(self) -> str:
        """Each process's state and its log's last lines: what a failed test shows."""
        parts = []
        for component in self._running:
            code = component.exited()
            state = "running" if code is None else f"exited with {code}"
            parts.append(f"--- {component.name} ({state}), {component.log}:\n{tail(component.log)}")
        return "\n".join(parts)

    def stop(self) -> None:
        """Every process stopped, the last started first."""
        for component in reversed(self._running):
            component.stop()

    def __enter__(self) -> ControlPlane:
        self.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()
