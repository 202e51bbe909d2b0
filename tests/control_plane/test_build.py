"""The wrapper modules and the build command, without building anything."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from scripts.control_plane import build
from tests.paths import REPO

# k8s.io/kubernetes v1.36's go.mod requires these 31 modules at v0.0.0 (its ./staging): a
# module depending on it must replace every one with its published version.
STAGING = [
    "api",
    "apiextensions-apiserver",
    "apimachinery",
    "apiserver",
    "cli-runtime",
    "client-go",
    "cloud-provider",
    "cluster-bootstrap",
    "code-generator",
    "component-base",
    "component-helpers",
    "controller-manager",
    "cri-api",
    "cri-client",
    "cri-streaming",
    "csi-translation-lib",
    "dynamic-resource-allocation",
    "endpointslice",
    "externaljwt",
    "kms",
    "kube-aggregator",
    "kube-controller-manager",
    "kube-proxy",
    "kube-scheduler",
    "kubectl",
    "kubelet",
    "metrics",
    "mount-utils",
    "pod-security-admission",
    "sample-apiserver",
    "streaming",
]


def test_every_staging_module_is_replaced_at_the_release_of_kubernetes() -> None:
    pinned = build.versions({})
    major, minor, patch = pinned.kubernetes.removeprefix("v").split(".")
    assert major == "1"
    replaces = build.staging_replaces()
    assert replaces == {f"k8s.io/{module}": f"v0.{minor}.{patch}" for module in STAGING}


def test_the_newest_release_replaces_its_32_staging_modules_and_needs_go_1_27() -> None:
    environ = {build.KUBERNETES_CHOICE: "kubernetes-1.37"}
    module = build.kubernetes_module(environ)
    pinned = build.versions(environ)
    assert (pinned.kubernetes, pinned.go) == ("v1.37.2", "1.27.0")
    assert pinned.key == "v1.37.2-etcd3.6.13-kwok0.8.0"
    replaces = build.staging_replaces(module / "go.mod")
    assert replaces == {f"k8s.io/{m}": "v0.37.2" for m in [*STAGING, "ktesting"]}
    with pytest.raises(ValueError, match=r"no go\.mod"):
        build.kubernetes_module({build.KUBERNETES_CHOICE: "kubernetes-9.99"})


def test_the_versions_are_the_go_mod_files_and_key_the_cache() -> None:
    pinned = build.versions({})
    assert (pinned.kubernetes, pinned.etcd, pinned.kwok) == ("v1.36.3", "v3.6.13", "v0.8.0")
    root = build.cache_root({"XDG_CACHE_HOME": "/cache"})
    assert root / pinned.key == Path(
        "/cache/elastic-quota/control-plane/v1.36.3-etcd3.6.13-kwok0.8.0"
    )
    home = build.cache_root({})
    assert home == Path.home() / ".cache" / "elastic-quota" / "control-plane"


def test_each_wrapper_module_is_committed_whole_and_names_its_tools() -> None:
    tools = {
        "kubernetes": [
            "k8s.io/kubernetes/cmd/kube-apiserver",
            "k8s.io/kubernetes/cmd/kube-controller-manager",
            "k8s.io/kubernetes/cmd/kube-scheduler",
        ],
        "etcd": ["go.etcd.io/etcd/server/v3"],
        "kwok": ["sigs.k8s.io/kwok/cmd/kwok"],
    }
    for name, packages in tools.items():
        module = build.MODULES / name
        assert (module / "go.sum").stat().st_size > 0, f"{module}/go.sum"
        text = (module / "go.mod").read_text()
        for package in packages:
            assert f"\t{package}\n" in text or f"tool {package}\n" in text, (name, package)
        assert not (module / "vendor").exists()


def test_without_go_one_line_says_what_to_install(tmp_path: Path) -> None:
    with pytest.raises(build.GoMissing) as missing:
        build.go_binary("1.26.0", {"GO": str(tmp_path / "go"), "PATH": ""})
    assert str(missing.value).count("\n") == 0
    assert "Go 1.26 or newer is not installed: install it (https://go.dev/dl/)" in str(
        missing.value
    )


def test_a_go_too_old_is_no_go(tmp_path: Path) -> None:
    old = tmp_path / "go"
    old.write_text("#!/bin/sh\necho go1.22.2\n")
    old.chmod(0o755)
    with pytest.raises(build.GoMissing, match=r"Go 1\.26 or newer"):
        build.go_binary("1.26.0", {"GO": str(old), "PATH": ""})


def test_the_build_command_without_go_exits_with_that_line(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "scripts.control_plane", "build"],
        cwd=REPO,
        env={
            **{k: v for k, v in os.environ.items() if k != build.KUBERNETES_CHOICE},
            "GO": str(tmp_path / "no-go"),
            "XDG_CACHE_HOME": str(tmp_path / "empty-cache"),
        },
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1, done.stderr
    assert "Go 1.26 or newer is not installed" in done.stderr
