"""The control plane's binaries, built once from the Go modules in tools/control-plane/.

Each tool has its own wrapper module (`tools/control-plane/{kubernetes,etcd,kwok}`): go.mod
pins it and lists it as a `tool`, go.sum is committed, nothing is vendored. The versions are
read from those go.mod files, the one place they are written; the binaries go to a cache
outside the checkout keyed by them, so that every clone and every worktree reuses one build:

    ${XDG_CACHE_HOME:-~/.cache}/elastic-quota/control-plane/v1.36.3-etcd3.6.13-kwok0.8.0/
        bin/       etcd kube-apiserver kube-controller-manager kube-scheduler kwok
        stages/    the kwok stages taken from the kwok module (see plane.py for the others)
        built.json what was built, with which Go, and how long it took
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
MODULES = REPO / "tools" / "control-plane"
KUBERNETES_MODULE, ETCD_MODULE, KWOK_MODULE = (
    MODULES / "kubernetes",
    MODULES / "etcd",
    MODULES / "kwok",
)
# Another Kubernetes module instead of `kubernetes/` (a folder of tools/control-plane/):
# `kubernetes-1.37`, the newest release served, which needs Go 1.27 (GOTOOLCHAIN=go1.27.3).
KUBERNETES_CHOICE = "ELASTIC_QUOTA_KUBERNETES_MODULE"
# The Kubernetes binaries of the kubernetes module; etcd and kwok are one each.
KUBERNETES_COMMANDS = ("kube-apiserver", "kube-controller-manager", "kube-scheduler")
BINARIES = ("etcd", *KUBERNETES_COMMANDS, "kwok")
# The kwok stages taken as they are: nodes made Ready and kept so, bound pods made Running.
KWOK_STAGES = (
    "node/fast/node-initialize.yaml",
    "node/heartbeat-with-lease/node-heartbeat-with-lease.yaml",
    "pod/fast/pod-ready.yaml",
)
INSTALL_GO = (
    "the real control plane is built from Go modules and Go {need} or newer is not installed: "
    "install it (https://go.dev/dl/) and put `go` on PATH, or set GO to its path"
)


class GoMissing(RuntimeError):
    """No usable Go: the message is the one line that says what to install."""


@dataclass(frozen=True)
class Versions:
    kubernetes: str  # v1.36.3
    etcd: str  # v3.6.13
    kwok: str  # v0.8.0
    go: str  # the go directive the modules declare: 1.26.0

    @property
    def key(self) -> str:
        return f"{self.kubernetes}-etcd{self.etcd.lstrip('v')}-kwok{self.kwok.lstrip('v')}"


def required(go_mod: Path, module: str) -> str:
    found = re.search(rf"^\s*(?:require\s+)?{re.escape(module)} (v\S+)", go_mod.read_text(), re.M)
    if found is None:
        raise ValueError(f"{go_mod} does not require {module}")
    return found.group(1)


def go_directive(go_mod: Path) -> str:
    found = re.search(r"^go (\S+)$", go_mod.read_text(), re.M)
    assert found is not None, f"{go_mod} has no go directive"
    return found.group(1)


def kubernetes_module(environ: Mapping[str, str] = os.environ) -> Path:
    """The Kubernetes wrapper module: `kubernetes/` unless $ELASTIC_QUOTA_KUBERNETES_MODULE
    names another folder of tools/control-plane/."""
    chosen = environ.get(KUBERNETES_CHOICE)
    if not chosen:
        return KUBERNETES_MODULE
    module = MODULES / chosen
    if not (module / "go.mod").is_file():
        raise ValueError(f"{KUBERNETES_CHOICE}={chosen}: no go.mod in {module}")
    return module


def versions(environ: Mapping[str, str] = os.environ) -> Versions:
    """The pinned versions, as the wrapper modules' go.mod files require them."""
    kubernetes = kubernetes_module(environ)
    return Versions(
        kubernetes=required(kubernetes / "go.mod", "k8s.io/kubernetes"),
        etcd=required(ETCD_MODULE / "go.mod", "go.etcd.io/etcd/server/v3"),
        kwok=required(KWOK_MODULE / "go.mod", "sigs.k8s.io/kwok"),
        go=max(
            (go_directive(m / "go.mod") for m in (kubernetes, ETCD_MODULE, KWOK_MODULE)),
            key=version_tuple,
        ),
    )


def staging_replaces(go_mod: Path = KUBERNETES_MODULE / "go.mod") -> dict[str, str]:
    """The kubernetes module's `k8s.io/X => k8s.io/X vY` replaces: module -> version."""
    return dict(
        re.findall(r"^\s*(k8s\.io/[\w.-]+) => \1 (v\S+)$", go_mod.read_text(), re.M),
    )


def cache_root(environ: Mapping[str, str] = os.environ) -> Path:
    base = environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "elastic-quota" / "control-plane"


def version_tuple(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", version)[:3])


def go_binary(need: str, environ: Mapping[str, str] = os.environ) -> str:
    """The `go` to build with: $GO if set, else `go` on PATH or in Go's default place."""
    given = environ.get("GO")
    path = environ.get("PATH", os.defpath)
    candidates = [given] if given else [shutil.which("go", path=path), "/usr/local/go/bin/go"]
    for candidate in candidates:
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            done = subprocess.run(
                [candidate, "env", "GOVERSION"],
                capture_output=True,
                text=True,
                env={**environ, "GOTOOLCHAIN": environ.get("GOTOOLCHAIN", "local")},
            )
            have = done.stdout.strip().removeprefix("go")
            if done.returncode == 0 and version_tuple(have) >= version_tuple(need):
                return candidate
    raise GoMissing(INSTALL_GO.format(need=need.removesuffix(".0")))


@dataclass(frozen=True)
class Built:
    """A complete build in the cache."""

    root: Path

    @property
    def bin(self) -> Path:
        return self.root / "bin"

    @property
    def stages(self) -> Path:
        return self.root / "stages"

    def binary(self, name: str) -> Path:
        return self.bin / name

    def complete(self) -> bool:
        return (self.root / "built.json").is_file() and all(
            self.binary(name).is_file() for name in BINARIES
        )


@contextmanager
def locked(path: Path) -> Iterator[None]:
    """An exclusive lock on `path` across processes: one build at a time, others wait."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _kubernetes_ldflags(version: str) -> str:
    major, minor = version.lstrip("v").split(".")[:2]
    stamp = {
        "gitVersion": version,
        "gitMajor": major,
        "gitMinor": minor,
        "gitTreeState": "clean",
        "buildDate": "1970-01-01T00:00:00Z",
    }
    return " ".join(
        ["-s", "-w", *(f"-X k8s.io/component-base/version.{k}={v}" for k, v in stamp.items())]
    )


def go_env(environ: Mapping[str, str], module: Path, local: str) -> dict[str, str]:
    """The build's environment for `module`. Go as installed (`local`) builds every module
    whose go directive it meets; $GOTOOLCHAIN (a newer Go from the module proxy) only those
    it does not: etcd v3.6.13's grpc does not compile with Go 1.27, Kubernetes 1.37 needs it."""
    needs = go_directive(module / "go.mod")
    toolchain = (
        "local"
        if version_tuple(needs) <= version_tuple(local)
        else environ.get("GOTOOLCHAIN", "local")  # never fetch a toolchain unasked
    )
    return {
        **environ,
        "CGO_ENABLED": "0",  # static, as Kubernetes' own releases of these binaries
        "GOTOOLCHAIN": toolchain,
        "GOFLAGS": "-mod=readonly -trimpath -buildvcs=false",  # go.sum as committed
    }


def local_go(go: str, environ: Mapping[str, str]) -> str:
    done = subprocess.run(
        [go, "env", "GOVERSION"],
        capture_output=True,
        text=True,
        env={**environ, "GOTOOLCHAIN": "local"},
        check=True,
    )
    return done.stdout.strip().removeprefix("go")


def _say(message: str) -> None:
    print(f"control plane: {message}", file=sys.stderr, flush=True)


def build(environ: Mapping[str, str] = os.environ, *, quiet: bool = False) -> Built:
    """The binaries for the pinned versions: from the cache, or built into it first."""
    pinned = versions(environ)
    kubernetes = kubernetes_module(environ)
    root = cache_root(environ)
    built = Built(root / pinned.key)
    if built.complete():
        return built
    go = go_binary(pinned.go, environ)
    say = (lambda _: None) if quiet else _say
    with locked(root / f"{pinned.key}.lock"):
        if built.complete():  # another process built it while this one waited
            return built
        partial = root / f"{pinned.key}.partial-{os.getpid()}"
        shutil.rmtree(partial, ignore_errors=True)
        (partial / "bin").mkdir(parents=True)
        local = local_go(go, environ)
        say(f"building {', '.join(BINARIES)} into {built.root} (the first time takes minutes)")
        started = time.monotonic()
        seconds: dict[str, float] = {}
        jobs: list[tuple[str, Path, str, str]] = [
            ("etcd", ETCD_MODULE, "go.etcd.io/etcd/server/v3", "-s -w"),
            *(
                (
                    name,
                    kubernetes,
                    f"k8s.io/kubernetes/cmd/{name}",
                    _kubernetes_ldflags(pinned.kubernetes),
                )
                for name in KUBERNETES_COMMANDS
            ),
            ("kwok", KWOK_MODULE, "sigs.k8s.io/kwok/cmd/kwok", "-s -w"),
        ]
        for name, module, package, ldflags in jobs:
            say(f"building {name} ({package})")
            began = time.monotonic()
            done = subprocess.run(
                [go, "build", "-ldflags", ldflags, "-o", str(partial / "bin" / name), package],
                cwd=module,
                env=go_env(environ, module, local),
                capture_output=True,
                text=True,
            )
            if done.returncode != 0:
                raise RuntimeError(f"go build {package} failed in {module}:\n{done.stderr}")
            seconds[name] = round(time.monotonic() - began, 1)
            say(f"built {name} in {seconds[name]:.0f} s")
        _copy_stages(go, go_env(environ, KWOK_MODULE, local), partial / "stages")
        total = round(time.monotonic() - started, 1)
        go_version = ", ".join(
            sorted(
                {
                    subprocess.run(
                        [go, "env", "GOVERSION"],
                        cwd=module,
                        env=go_env(environ, module, local),
                        capture_output=True,
                        text=True,
                        check=True,
                    ).stdout.strip()
                    for module in {module for _, module, _, _ in jobs}
                }
            )
        )
        record = {
            "kubernetes": pinned.kubernetes,
            "etcd": pinned.etcd,
            "kwok": pinned.kwok,
            "go": go_version,
            "seconds": seconds,
            "total_seconds": total,
        }
        (partial / "built.json").write_text(json.dumps(record, indent=2) + "\n")
        shutil.rmtree(built.root, ignore_errors=True)
        partial.rename(built.root)
        say(f"built all in {total:.0f} s ({minutes(total)}): {built.bin}")
    return built


def _copy_stages(go: str, env: Mapping[str, str], into: Path) -> None:
    listed = subprocess.run(
        [go, "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/kwok"],
        cwd=KWOK_MODULE,
        env=dict(env),
        capture_output=True,
        text=True,
        check=True,
    )
    stages = Path(listed.stdout.strip()) / "kustomize" / "stage"
    into.mkdir(parents=True)
    for stage in KWOK_STAGES:
        shutil.copyfile(stages / stage, into / Path(stage).name)


def minutes(seconds: float) -> str:
    whole = round(seconds)
    return f"{whole // 60} min {whole % 60:02d} s"
