"""The peers' binaries, built once from the Go modules in tools/peers/, for the benchmarks that
run them beside the product on the same control plane.

Each peer has a wrapper module (`tools/peers/<peer>/`) that pins it and lists the commands to
build as `tool` directives; go.sum is committed, nothing is vendored. The binaries go to a
cache beside the control plane's, keyed by the pinned version:

    ${XDG_CACHE_HOME:-~/.cache}/elastic-quota/peers/kueue-v0.17.0/bin/     runner minimalkueue
    ${XDG_CACHE_HOME:-~/.cache}/elastic-quota/peers/koordinator-v1.8.0/bin/ koord-scheduler
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from scripts.control_plane.build import (
    REPO,
    cache_root,
    go_binary,
    go_directive,
    go_env,
    local_go,
    locked,
    minutes,
    required,
)

PEERS = REPO / "tools" / "peers"
MODULES = {"kueue": "sigs.k8s.io/kueue", "koordinator": "github.com/koordinator-sh/koordinator"}
"""Each peer's folder in tools/peers/ and the module it pins."""


@dataclass(frozen=True)
class Peer:
    name: str  # its folder: kueue
    module: str  # the module it pins: sigs.k8s.io/kueue
    version: str  # v0.17.0
    tools: tuple[str, ...]  # the packages its go.mod lists as tools

    @property
    def folder(self) -> Path:
        return PEERS / self.name

    @property
    def key(self) -> str:
        return f"{self.name}-{self.version}"

    @property
    def commands(self) -> tuple[str, ...]:
        return tuple(tool.rsplit("/", 1)[-1] for tool in self.tools)


def peer(name: str) -> Peer:
    """The peer pinned in tools/peers/`name`/go.mod."""
    go_mod = PEERS / name / "go.mod"
    text = go_mod.read_text()
    block = re.search(r"^tool \(\n(.*?)^\)", text, re.M | re.S)
    tools = re.findall(r"^\s*(\S+)\s*$", block.group(1), re.M) if block else []
    tools += re.findall(r"^tool ([^\s(]\S*)$", text, re.M)
    if not tools:
        raise ValueError(f"{go_mod} lists no tool")
    return Peer(name, MODULES[name], required(go_mod, MODULES[name]), tuple(tools))


@dataclass(frozen=True)
class BuiltPeer:
    peer: Peer
    root: Path

    def binary(self, command: str) -> Path:
        return self.root / "bin" / command

    def complete(self) -> bool:
        return (self.root / "built.json").is_file() and all(
            self.binary(command).is_file() for command in self.peer.commands
        )

    def source(self, environ: Mapping[str, str] = os.environ) -> Path:
        """The pinned module's folder in the module cache (its CRDs, its configs)."""
        go = go_binary(go_directive(self.peer.folder / "go.mod"), environ)
        listed = subprocess.run(
            [go, "list", "-m", "-f", "{{.Dir}}", self.peer.module],
            cwd=self.peer.folder,
            env={**environ, "GOFLAGS": "-mod=readonly"},
            capture_output=True,
            text=True,
            check=True,
        )
        return Path(listed.stdout.strip())


def _say(message: str) -> None:
    print(f"peers: {message}", file=sys.stderr, flush=True)


def build_peer(name: str, environ: Mapping[str, str] = os.environ) -> BuiltPeer:
    """The peer's binaries: from the cache, or built into it first."""
    pinned = peer(name)
    root = cache_root(environ).parent / "peers"
    built = BuiltPeer(pinned, root / pinned.key)
    if built.complete():
        return built
    go = go_binary(go_directive(pinned.folder / "go.mod"), environ)
    with locked(root / f"{pinned.key}.lock"):
        if built.complete():
            return built
        partial = root / f"{pinned.key}.partial-{os.getpid()}"
        shutil.rmtree(partial, ignore_errors=True)
        (partial / "bin").mkdir(parents=True)
        env = go_env(environ, pinned.folder, local_go(go, environ))
        _say(f"building {', '.join(pinned.commands)} of {pinned.module} {pinned.version}")
        started = time.monotonic()
        done = subprocess.run(
            [go, "build", "-ldflags", "-s -w", "-o", str(partial / "bin") + "/", *pinned.tools],
            cwd=pinned.folder,
            env=env,
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            raise RuntimeError(f"go build failed in {pinned.folder}:\n{done.stderr}")
        total = round(time.monotonic() - started, 1)
        record = {"module": pinned.module, "version": pinned.version, "seconds": total}
        (partial / "built.json").write_text(json.dumps(record, indent=2) + "\n")
        shutil.rmtree(built.root, ignore_errors=True)
        partial.rename(built.root)
        _say(f"built in {total:.0f} s ({minutes(total)}): {built.root / 'bin'}")
    return built
