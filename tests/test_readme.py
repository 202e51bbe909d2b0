"""The README's commands that can run here: the set-up and test commands are the ones CI runs,
and the run command does what the README says on the examples."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text()


def block_after(heading: str) -> list[str]:
    """The bash blocks of the README section under `heading`, in order."""
    section = README.split(heading, 1)[1].split("\n## ", 1)[0]
    return [b.strip() for b in re.findall(r"```bash\n(.*?)```", section, re.DOTALL)]


def test_ci_runs_the_readme_set_up_checks_and_test_commands():
    set_up, _, test = block_after("## Try it here, without a cluster")
    checks = block_after("## Development")[0].splitlines()
    ci = (REPO / ".ci" / "run").read_text().strip().splitlines()
    assert ci[-len(checks) - 2 :] == [set_up, *checks, test]


def test_the_readme_run_command_simulates_the_example_organisation():
    _, run, _ = block_after("## Try it here, without a cluster")
    executable, *args = run.split()
    done = subprocess.run([str(REPO / executable), *args], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    for team in ("engineering", "research", "platform", "ml", "web", "vision", "nlp"):
        assert re.search(rf"\b{team}\b", done.stdout), team
    assert "runtime" in done.stdout


def test_the_quick_start_applies_files_that_exist_and_names_the_chart():
    commands = "\n".join(block_after("## Quick start in a cluster"))
    for path in re.findall(r"(?:-f|sed '[^']*') (\S+)", commands):
        assert path == "-" or (REPO / path).exists(), path
    assert "helm install elastic-quota manifests/elastic-quota" in commands
    labelled = "-l quota.scheduling.koordinator.sh/capacity=over-quota"
    assert labelled in commands


def test_every_symbol_the_table_and_the_tree_print_is_explained():
    from eq_cli.output import SYMBOLS

    simulate = README.split("## `elastic-quota simulate`", 1)[1].split("\n## ", 1)[0]
    explained = re.findall(r"^\| `(.)`", simulate, re.MULTILINE)
    assert sorted(explained) == sorted(SYMBOLS)
