"""`elastic-quota simulate` runs without the cyclic garbage collector, and gives it back as it
found it (`main._collector_paused`): what it builds lives until it prints, so on 100,000 pods
the collections were a third of the run for nothing to collect. The servers start with what
their imports made out of the collector's sight (`gc.freeze`), which it would otherwise walk,
all of it, in the first collections of every start."""

from __future__ import annotations

import gc
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import eq_cli.main
import pytest

from tests.realistic import deployment_pod, elastic_quota, kubectl_list, node
from tests.webhook.conftest import Certificates


@pytest.fixture
def collections(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The collections that start while simulate runs (after the arguments are read), with
    a threshold that makes one start every few allocations while the collector is on."""
    started: list[str] = []
    running = False
    simulate = eq_cli.main._simulate

    def observed(args: Any) -> int:
        nonlocal running
        running = True
        try:
            return simulate(args)
        finally:
            running = False

    def record(phase: str, info: dict[str, Any]) -> None:
        if phase == "start" and running:
            started.append(f"generation {info['generation']}")

    monkeypatch.setattr(eq_cli.main, "_simulate", observed)

    thresholds = gc.get_threshold()
    gc.set_threshold(10)
    gc.callbacks.append(record)
    try:
        yield started
    finally:
        gc.callbacks.remove(record)
        gc.set_threshold(*thresholds)


@pytest.fixture
def cluster(tmp_path: Path) -> str:
    pods = [deployment_pod("team-a", "web", i, requests={"cpu": "500m"}) for i in range(20)]
    objects = [elastic_quota("team-a", "team-a", min={"cpu": "4"}), *pods, node("worker-1")]
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps(kubectl_list(*objects)))
    return str(path)


@pytest.mark.parametrize("enabled", [True, False])
def test_simulate_collects_no_cycles_and_leaves_the_collector_as_it_was(
    cluster: str, collections: list[str], capsys: pytest.CaptureFixture[str], enabled: bool
) -> None:
    (gc.enable if enabled else gc.disable)()
    try:
        assert eq_cli.main.main(["simulate", "-f", cluster, "-o", "json"]) == 0
        assert gc.isenabled() is enabled
    finally:
        gc.enable()
    assert collections == []
    report = json.loads(capsys.readouterr().out)
    assert len(report["pods"]) == 20


@pytest.fixture
def serving(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[bool, int]]]:
    """Whether the collector runs, and how many objects it no longer sees, as a server would
    start serving (after its imports); the process's frozen objects are given back after."""
    seen: list[tuple[bool, int]] = []
    monkeypatch.setattr(
        eq_cli.main, "_serve", lambda *_: seen.append((gc.isenabled(), gc.get_freeze_count()))
    )
    # what else the commands do before serving, kept from this test process
    monkeypatch.setattr(eq_cli.main.logs, "configure", lambda *_: None)
    monkeypatch.setenv("KUBECONFIG", "")
    gc.unfreeze()
    try:
        yield seen
    finally:
        gc.unfreeze()


def test_the_operator_serves_with_its_libraries_frozen(
    serving: list[tuple[bool, int]], tmp_path: Path
) -> None:
    assert eq_cli.main.main(["operator", "--kubeconfig", str(tmp_path / "kubeconfig")]) == 0
    [(enabled, frozen)] = serving
    assert enabled and frozen > 0


def test_the_webhook_serves_with_its_libraries_frozen(
    serving: list[tuple[bool, int]], tmp_path: Path
) -> None:
    tls = Certificates.issue(tmp_path)
    args = ["webhook", "--cert-file", str(tls.cert_file), "--key-file", str(tls.key_file)]
    assert eq_cli.main.main(args) == 0
    [(enabled, frozen)] = serving
    assert enabled and frozen > 0
