"""The chart and the code agree: every flag the Deployments set exists in the CLI, every CLI
flag is reachable from values.yaml, and every value there is documented."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from tests.chart.rendering import NAMESPACE, RELEASE, env, find, helm, render
from tests.paths import PYTHONPATH

FIXED = {  # set by the chart itself, not by a value
    "ELASTIC_QUOTA_IDENTITY",  # the pod's name
    "ELASTIC_QUOTA_CERT_FILE",  # the mounted Secret
    "ELASTIC_QUOTA_KEY_FILE",
}
NOT_IN_A_CLUSTER = {"ELASTIC_QUOTA_KUBECONFIG"}  # in a pod, the service account logs in
# A value for every setting that differs from its default.
CHANGED = (
    "quota.namespace=quotas",
    "quota.rootName=root",
    "quota.systemName=system",
    "quota.defaultName=default",
    "quota.systemNamespaces={kube-system,monitoring}",
    "quota.defaultMin.cpu=4",
    "quota.defaultMax.cpu=8",
    "quota.minScaling=false",
    "logging.level=debug",
    "logging.format=text",
    "operator.watchNamespaces={ml,web}",
    "operator.batchInterval=2",
    "operator.leaseName=writer",
    "operator.leaseDuration=30",
    "operator.probePort=9090",
    "operator.api.qps=0",
    "operator.api.burst=10",
    "operator.api.writeWorkers=4",
    "operator.reclaim.enabled=false",
    "operator.reclaim.interval=5",
    "operator.reclaim.delay=300",
    "operator.reclaim.minRuntime=600",
    "operator.reclaim.maxEvictions=1",
    "operator.reclaim.dryRun=true",
    "operator.reclaim.spareJobs=false",
    "operator.reclaim.minRuntimeHard=true",
    "operator.reclaim.preemption=false",
    "webhook.address=::",
    "webhook.port=8443",
    "webhook.probePort=9091",
    "webhook.certCheckInterval=60",
    "gating.enabled=false",
    "gating.admissionHold=10",
    "gating.gangStartTimeout=30",
    "gating.gangRequeueBackoff=5",
    "gating.gangRequeueMaxBackoff=50",
    "pools.nodeAffinity=false",
)


def cli_variables(command: str, environment: dict[str, str] | None = None) -> set[str]:
    """The environment variables `elastic-quota COMMAND --help` documents, read with
    `environment` set (the CLI refuses a value it cannot parse)."""
    done = subprocess.run(
        [sys.executable, "-m", "eq_cli.main", command, "--help"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": PYTHONPATH, **(environment or {})},
    )
    assert done.returncode == 0, done.stderr
    return set(re.findall(r"env\s+(ELASTIC_QUOTA_[A-Z_]+)", done.stdout))


@pytest.mark.parametrize("command", ["operator", "webhook"])
def test_the_deployment_sets_every_flag_of_its_command_and_no_other(command):
    deployment = find(render(), "Deployment", f"{RELEASE}-{command}")
    assert set(env(deployment)) == cli_variables(command) - NOT_IN_A_CLUSTER


@pytest.mark.parametrize("command", ["operator", "webhook"])
def test_every_flag_is_reachable_from_values_and_the_cli_accepts_what_they_render(command):
    default = env(find(render(), "Deployment", f"{RELEASE}-{command}"))
    changed = env(find(render(*CHANGED), "Deployment", f"{RELEASE}-{command}"))
    unchanged = {name for name in default if name not in FIXED and default[name] == changed[name]}
    assert unchanged == set()
    for variables in (default, changed):
        cli_variables(command, {k: v for k, v in variables.items() if isinstance(v, str)})


def test_the_rendered_values_are_what_the_cli_expects():
    variables = env(find(render(*CHANGED), "Deployment", f"{RELEASE}-operator"))
    # The release's and the built-in groups' namespaces are always system namespaces.
    assert (
        variables["ELASTIC_QUOTA_SYSTEM_NAMESPACES"] == f"kube-system,monitoring,{NAMESPACE},quotas"
    )
    assert variables["ELASTIC_QUOTA_DEFAULT_MIN"] == "cpu=4"
    assert variables["ELASTIC_QUOTA_RECLAIM"] == "false"
    assert variables["ELASTIC_QUOTA_NAMESPACE"] == "quotas"
    roles = [o for o in render(*CHANGED) if o["kind"] == "Role"]
    assert [r["metadata"]["namespace"] for r in roles] == ["quotas"]  # where the Lease lives


def test_every_value_in_values_yaml_is_documented():
    lines = (helm.CHART / "values.yaml").read_text().splitlines()
    undocumented = []
    documented_at: dict[int, bool] = {}  # indentation -> the enclosing key is documented
    for number, line in enumerate(lines):
        match = re.match(r"^( *)([A-Za-z][\w.-]*):", line)
        if not match:
            continue
        indent = len(match[1])
        above = lines[number - 1].strip() if number else ""
        inherited = any(d for i, d in documented_at.items() if i < indent)
        documented_at = {i: d for i, d in documented_at.items() if i < indent}
        documented_at[indent] = above.startswith("#")
        if not (documented_at[indent] or inherited):
            undocumented.append(match[2])
    assert undocumented == []
