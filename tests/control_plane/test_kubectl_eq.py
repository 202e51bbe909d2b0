"""`kubectl eq` as kubectl users type it, through the real kubectl (which runs `kubectl-eq`,
and `kubectl_complete-eq` to complete it, from PATH) on the real control plane: `-n` for the
pod's namespace (the context's by default), the object's kubectl forms, options before or after
the words, `--context`, `--kubeconfig`, `--request-timeout`, `-o json|yaml|wide`, one-line
errors with exit code 1, completion of groups and pods from the cluster, and help with examples
to paste. kubectl eq reads the cluster and computes: it needs the product's CRDs, not the
product running."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from tests.control_plane.cluster import Cluster
from tests.control_plane.test_quickstart import RealKubectl
from tests.paths import REPO

CRDS = " ".join(
    f"-f {REPO / 'manifests' / 'elastic-quota' / 'files' / name}"
    for name in (
        "elasticquotas.scheduling.sigs.k8s.io.yaml",
        "elasticquotaprofiles.quota.koordinator.sh.yaml",
    )
)
BIN = str(Path(sys.executable).parent)  # where pip installed kubectl-eq and its completer


@dataclass
class Team:
    kubectl: RealKubectl
    namespace: str  # also its group's name
    pod: str


@pytest.fixture
async def team(cluster: Cluster) -> Team:
    """A namespace with its group (min 1 cpu, max 2) and one pod of it, on the shared plane."""
    kubectl = RealKubectl(cluster)
    kubectl.env = {**kubectl.env, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    await kubectl.run(f"kubectl apply --server-side --force-conflicts {CRDS}")  # tests race
    await kubectl.run(f"kubectl wait --for condition=established {CRDS}")
    namespace = await cluster.namespace("eq-cli")
    name = f"train-{namespace.removeprefix('eq-cli-')}"  # one of its name on the shared plane
    group = {
        "apiVersion": "scheduling.sigs.k8s.io/v1alpha1",
        "kind": "ElasticQuota",
        "metadata": {"name": namespace, "namespace": namespace},
        "spec": {"min": {"cpu": "1"}, "max": {"cpu": "2"}},
    }
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {"quota.scheduling.koordinator.sh/name": namespace},
        },
        "spec": {
            "containers": [
                {
                    "name": "work",
                    "image": "registry.k8s.io/pause:3.10",
                    "resources": {"requests": {"cpu": "500m"}},
                }
            ]
        },
    }
    listed = {"kind": "List", "apiVersion": "v1", "items": [group, pod]}
    await cluster.kubectl("kubectl apply -f -", stdin=json.dumps(listed))
    await cluster.kubectl(f"kubectl wait --for condition=PodScheduled pod/{name} -n {namespace}")
    return Team(kubectl, namespace, name)


async def test_explain_names_a_pod_every_way_kubectl_does(team: Team, tmp_path: Path) -> None:
    ns, pod = team.namespace, team.pod
    forms = [
        f"kubectl eq explain pod {pod} -n {ns}",
        f"kubectl eq explain pod/{pod} --namespace {ns}",
        f"kubectl eq -n {ns} explain pod {pod}",
        f"kubectl eq explain {ns}/{pod}",
        f"kubectl eq explain pod {ns}/{pod}",  # the form before kubectl's
        f"kubectl eq explain pods {pod} -A",
        f"kubectl eq explain pod {pod} -n {ns} --request-timeout 30s",
    ]
    answers = {form: (await team.kubectl.run(form)).out for form in forms}
    first = answers[forms[0]]
    assert first.splitlines()[0].startswith(f"pod {ns}/{pod}"), first
    assert f"group: {ns} (" in first, first
    assert all(text == first for text in answers.values()), answers
    # The kubeconfig's context names the namespace, as kubectl's -n defaults to it.
    config = tmp_path / "kubeconfig"
    config.write_text(Path(team.kubectl.env["KUBECONFIG"]).read_text())
    at = f"--kubeconfig {config}"
    await team.kubectl.run(f"kubectl config set-context --current --namespace {ns} {at}")
    assert (await team.kubectl.run(f"kubectl eq explain pod {pod} {at}")).out == first
    viewed = json.loads((await team.kubectl.run(f"kubectl config view --minify -o json {at}")).out)
    made = viewed["contexts"][0]["context"]
    await team.kubectl.run(
        f"kubectl config set-context other --cluster {made['cluster']} --user {made['user']} {at}"
    )

    await team.kubectl.run(f"kubectl config set-context other --namespace {ns} {at}")
    await team.kubectl.run(f"kubectl config set-context --current --namespace default {at}")
    chosen = await team.kubectl.run(f"kubectl eq explain pod {pod} {at} --context other")
    assert chosen.out == first


async def test_every_output_of_tree_and_explain(team: Team) -> None:
    ns = team.namespace
    as_json = json.loads((await team.kubectl.run(f"kubectl eq tree {ns} -o json")).out)
    as_yaml = yaml.safe_load((await team.kubectl.run(f"kubectl eq tree {ns} -o yaml")).out)
    assert as_json["groups"] == as_yaml["groups"]  # the cluster around it may change meanwhile
    assert as_json["groups"][ns]["used"] == {"cpu": "500m"}, as_json["groups"][ns]
    wide = (await team.kubectl.run(f"kubectl eq tree -n {ns} -o wide")).out.splitlines()
    assert wide[0].split()[:5] == ["NAMESPACE", "GROUP", "PARENT", "TREE", "RESOURCE"], wide
    assert [line.split()[:2] for line in wide[1:]] == [[ns, ns]], wide  # that namespace's only
    explained = await team.kubectl.run(f"kubectl eq explain group {ns} -o yaml")
    assert yaml.safe_load(explained.out)["subject"].startswith(f"group {ns}"), explained.out
    as_text = (await team.kubectl.run(f"kubectl eq explain group/{ns}")).out
    lines = [line.strip() for line in as_text.splitlines()[1:]]
    # the first lines are its own; the lenders and borrowers on the shared plane come and go
    assert lines[:4] == yaml.safe_load(explained.out)["lines"][:4], as_text


@pytest.mark.parametrize(
    ("words", "message"),
    [
        ("explain pod nope -n {ns}", "no pod {ns}/nope (or it has finished)"),
        ("explain pod nope -A", 'pods "nope" not found in any namespace'),
        ("explain group nope", "no group nope"),
        ("explain node x", 'unknown kind "node": expected pod or group'),
        ("tree --bogus", "unknown flag: --bogus (see 'kubectl eq tree --help')"),
        ("explain group {ns} -o wide", "-o wide: explain has no table; use -o json or -o yaml"),
        ("tree --context nope", 'context "nope" does not exist'),
        (
            "tree --request-timeout soon",
            "argument --request-timeout: 'soon': expected a duration such as 30s, 2m or 0"
            " (see 'kubectl eq tree --help')",
        ),
    ],
)
async def test_a_wrong_word_is_one_line_and_exit_code_1(
    team: Team, words: str, message: str
) -> None:
    done = await team.kubectl.run(f"kubectl eq {words.format(ns=team.namespace)}", ok=False)
    assert done.code == 1, str(done)
    assert done.out == "" and done.err == f"error: {message.format(ns=team.namespace)}\n"


async def test_kubectl_completes_the_plugin_from_the_cluster(team: Team) -> None:
    """kubectl's own completion (`kubectl __complete`, what its bash and zsh scripts call) runs
    kubectl_complete-eq for the words after `kubectl eq`."""

    async def completed(words: str) -> list[str]:
        done = await team.kubectl.run(f"kubectl __complete eq {words}")
        *candidates, directive = done.out.splitlines()
        assert directive.startswith(":"), done.out
        return candidates

    assert await completed("tr") == ["tree"]
    assert team.namespace in await completed("tree ''")
    assert await completed(f"explain pod -n {team.namespace} ''") == [team.pod]
    assert await completed(f"explain -n {team.namespace} pod/t") == [f"pod/{team.pod}"]
    assert team.namespace in await completed("explain group ''")
    assert team.namespace in await completed("explain pod -n ''")  # namespaces
    assert await completed("tree -o ''") == ["json", "yaml", "wide"]


async def test_the_bash_script_completes_kubectl_eq(team: Team) -> None:
    script = (await team.kubectl.run("kubectl eq completion bash")).out
    line = f"kubectl-eq explain pod -n {team.namespace} ''"
    words = shlex.split(line)
    program = "\n".join(
        [
            script,
            f"COMP_WORDS=({' '.join(shlex.quote(w) for w in words)}); COMP_CWORD={len(words) - 1}",
            "_kubectl_eq",
            'printf "%s\\n" "${COMPREPLY[@]}"',
        ]
    )
    done = subprocess.run(
        ["bash", "-c", program], env=team.kubectl.env, capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == [team.pod], done


@pytest.mark.parametrize("command", ["tree", "explain", "what-if", "completion"])
async def test_each_commands_help_shows_an_example_to_paste(team: Team, command: str) -> None:
    shown = (await team.kubectl.run(f"kubectl eq {command} --help")).out
    examples = shown.split("Examples:\n", 1)[1].splitlines()
    pasted = [line.strip() for line in examples if f"kubectl eq {command}" in line]
    assert pasted, shown
    if command == "explain":
        with_namespace = [line.replace("team-a", team.namespace) for line in pasted]
        for example in with_namespace[:3]:
            done = await team.kubectl.run(example.replace("train-x", team.pod))
            assert f"group: {team.namespace} (" in done.out
