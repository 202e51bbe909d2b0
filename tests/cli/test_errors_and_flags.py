"""What a newcomer meets first: each mistake is one line on standard error naming what is
missing and how to give it; `--version`; boolean flags with or without a value."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from eq_cli.main import operator_settings, parser

from tests.cli.running import cli
from tests.manifests import pod, quota
from tests.webhook.conftest import Certificates

NOWHERE = {"HOME": "/nonexistent"}  # no ~/.kube/config, no KUBECONFIG, not in a cluster


def one_line(text: str) -> str:
    lines = text.strip().splitlines()
    assert len(lines) == 1, text
    return lines[0]


def test_the_operator_without_credentials_says_how_to_give_them():
    done = cli("operator", env=NOWHERE)
    assert done.returncode == 1
    line = one_line(done.stderr)
    assert line.startswith("elastic-quota operator: error: no Kubernetes credentials")
    assert "KUBERNETES_SERVICE_HOST is unset" in line and "/nonexistent/.kube/config" in line
    assert "--kubeconfig" in line


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (None, "no such file"),
        ("", "empty, or not a mapping"),
        ("kind: Config\n", "Expected key current-context"),
    ],
)
def test_the_operator_names_the_kubeconfig_it_cannot_use(tmp_path, content, says):
    kubeconfig = tmp_path / "kubeconfig"
    if content is not None:
        kubeconfig.write_text(content)
    done = cli("operator", "--kubeconfig", str(kubeconfig), env=NOWHERE)
    assert done.returncode == 1
    line = one_line(done.stderr)
    assert str(kubeconfig) in line and says in line


def webhook(cert_file: Path, key_file: Path, env: dict[str, str] | None = None) -> Any:
    return cli("webhook", "--cert-file", str(cert_file), "--key-file", str(key_file), env=env)


def test_the_webhook_names_the_missing_certificate_file(tmp_path):
    certificates = Certificates.issue(tmp_path)
    missing = tmp_path / "gone.crt"
    done = webhook(missing, certificates.key_file)
    assert done.returncode == 1
    line = one_line(done.stderr)
    assert line.startswith(f"elastic-quota webhook: error: --cert-file {missing}: no such file")


def test_the_webhook_names_a_certificate_it_cannot_read(tmp_path):
    certificates = Certificates.issue(tmp_path)
    certificates.cert_file.write_text("not a certificate\n")
    done = webhook(certificates.cert_file, certificates.key_file)
    assert done.returncode == 1
    line = one_line(done.stderr)
    assert f"--cert-file {certificates.cert_file}" in line
    assert "not a PEM certificate and its private key" in line


def test_simulate_without_nodes_or_capacity_warns_on_standard_error(tmp_path):
    objects = tmp_path / "objects.yaml"
    objects.write_text(
        yaml.safe_dump_all([quota("team", max={"cpu": 4}), pod("p", quota="team", cpu="1")])
    )
    done = cli("simulate", "-f", str(objects))
    assert done.returncode == 0
    line = one_line(done.stderr)
    assert line.startswith("elastic-quota: warning: no Nodes and no --capacity")
    assert "team" in done.stdout  # the report itself is still on standard output
    given = cli("simulate", "-f", str(objects), "--capacity", "cpu=8")
    assert given.returncode == 0 and given.stderr == ""


def test_version():
    done = cli("--version")
    assert done.returncode == 0
    assert done.stdout.strip() == "elastic-quota 0.1.0"


@pytest.mark.parametrize(
    ("args", "env", "expected"),
    [
        ([], {}, False),
        (["--dry-run"], {}, True),
        (["--dry-run=true"], {}, True),
        (["--dry-run", "false"], {}, False),
        ([], {"ELASTIC_QUOTA_DRY_RUN": "true"}, True),
        (["--dry-run=false"], {"ELASTIC_QUOTA_DRY_RUN": "true"}, False),
        (["--no-dry-run"], {"ELASTIC_QUOTA_DRY_RUN": "true"}, False),
    ],
)
def test_boolean_flags_take_a_value_or_none(monkeypatch, args, env, expected):
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    settings = operator_settings(parser().parse_args(["operator", *args]))
    assert settings.reclaim.dry_run is expected


def test_help_says_the_webhook_mutates_and_the_operator_lifts_gates():
    webhook = " ".join(cli("webhook", "--help").stdout.split())
    assert "Validate ElasticQuota and Pod admissions" in webhook
    assert "mutate new pods of limited groups" in webhook
    operator = " ".join(cli("operator", "--help").stdout.split())
    assert "lift the admission gate of waiting pods" in operator


def test_the_webhook_without_credentials_says_how_to_give_them(tmp_path):
    """The webhook checks its certificate first, then the credentials: both before serving."""
    certificates = Certificates.issue(tmp_path)
    done = webhook(certificates.cert_file, certificates.key_file, env=NOWHERE)
    assert done.returncode == 1
    assert one_line(done.stderr).startswith(
        "elastic-quota webhook: error: no Kubernetes credentials"
    )


def test_the_in_cluster_login_is_looked_for_where_the_client_library_looks():
    from eq_cli import preflight
    from kubernetes_asyncio.config import incluster_config

    assert preflight.SERVICE_HOST == incluster_config.SERVICE_HOST_ENV_NAME
    assert preflight.SERVICE_TOKEN == incluster_config.SERVICE_TOKEN_FILENAME
