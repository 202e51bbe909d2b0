"""The README's and the manuals' commands that can run here: the set-up and test commands are the
ones CI runs, the run command does what the README says on the examples, and every relative link
in the README, the manuals (docs/) and the contributor pages leads to a file and heading that
exist."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from tests import readme

REPO = Path(__file__).resolve().parents[1]
README = "README.md"
PAGES = sorted(
    [REPO / "README.md", REPO / "CONTRIBUTING.md", REPO / "CHANGELOG.md", *REPO.glob("docs/*.md")]
)
FENCE = re.compile(r"^ *```.*?^ *```", re.DOTALL | re.MULTILINE)


def section(page: str, heading: str) -> str:
    """The text of `page` (a path from the repository's root) under `heading`, up to the next
    heading of level 2."""
    return (REPO / page).read_text().split(heading + "\n", 1)[1].split("\n## ", 1)[0]


def blocks(page: str, heading: str) -> list[str]:
    """The bash blocks of `page`'s section under `heading`, in order."""
    return [b.strip() for b in re.findall(r"```bash\n(.*?)```", section(page, heading), re.DOTALL)]


def ci_commands() -> list[str]:
    """What .ci/run runs, after its shell set-up: the set-up, the checks and the tests."""
    lines = (REPO / ".ci" / "run").read_text().strip().splitlines()
    return [line for line in lines if not line.startswith(("#", "set ", "cd "))]


def test_ci_runs_the_readme_set_up_checks_and_test_commands():
    set_up, _, test = blocks(README, "## Try it here, without a cluster")
    checks = blocks("docs/development.md", "## Checks")[0].splitlines()
    assert ci_commands() == [set_up, *checks, test]


def test_contributing_lists_what_ci_runs_in_its_order():
    (commands,) = blocks("CONTRIBUTING.md", "## The checks CI makes")
    assert commands.splitlines() == ci_commands()


def test_the_readme_run_command_simulates_the_example_organisation():
    _, run, _ = blocks(README, "## Try it here, without a cluster")
    executable, *args = run.split()
    done = subprocess.run([str(REPO / executable), *args], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    for team in ("engineering", "research", "platform", "ml", "web", "vision", "nlp"):
        assert re.search(rf"\b{team}\b", done.stdout), team
    assert "runtime" in done.stdout


def test_the_quick_start_applies_files_that_exist_and_names_the_chart():
    quick_start = blocks(README, "## Quick start in a cluster")
    plain = blocks("docs/settings.md", "## Upgrade, uninstall, plain manifests")
    commands = "\n".join(quick_start + plain)
    for path in re.findall(r"(?:-f|sed '[^']*') (\S+)", commands):
        assert path == "-" or (REPO / path).exists(), path
    assert "helm install elastic-quota manifests/elastic-quota" in "\n".join(quick_start)
    labelled = "-l quota.scheduling.koordinator.sh/capacity=over-quota"
    assert labelled in commands


def test_every_symbol_the_table_and_the_tree_print_is_explained():
    from eq_cli.output import SYMBOLS

    simulate = (REPO / "docs" / "simulate.md").read_text()
    explained = re.findall(r"^\| `(.)`", simulate, re.MULTILINE)
    assert sorted(explained) == sorted(SYMBOLS)


def anchors(page: Path) -> set[str]:
    """The anchors GitHub gives `page`'s headings: lower case, punctuation but `-` and `_`
    dropped, spaces as `-`, and `-1`, `-2`... after a repeated one."""
    found: set[str] = set()
    for heading in re.findall(r"^#{1,6} (.+)$", FENCE.sub("", page.read_text()), re.MULTILINE):
        anchor = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        repeated = 0
        while (anchor if not repeated else f"{anchor}-{repeated}") in found:
            repeated += 1
        found.add(anchor if not repeated else f"{anchor}-{repeated}")
    return found


def test_every_relative_link_leads_to_a_file_and_heading_that_exist():
    broken = []
    for page in PAGES:
        for target in re.findall(r"\]\(([^)\s]+)\)", FENCE.sub("", page.read_text())):
            if re.match(r"[a-z]+:", target):
                continue  # https:, mailto:
            path, _, anchor = target.partition("#")
            linked = (page.parent / path).resolve() if path else page
            if not linked.exists() or (anchor and anchor not in anchors(linked)):
                broken.append(f"{page.relative_to(REPO)}: {target}")
    assert not broken
    assert {p.name for p in PAGES} >= {"README.md", "operator.md", "simulate.md"}


NODE_POOLS = "## Node pools"
GPU = "nvidia.com/gpu"


def test_the_node_pools_simulate_plans_the_reclaim_offline() -> None:
    """The README's node-pools `simulate`: `team-a-v100`'s runtime is 5 cards while it uses
    10, and the plan takes 5 of its pods back."""
    (simulate,), _ = readme.blocks(NODE_POOLS)
    executable, *args = simulate.split()
    assert executable == ".venv/bin/elastic-quota", simulate
    done = subprocess.run(
        [str(REPO / executable), *args], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    header = lines[0].split()
    assert header == ["GROUP", "RESOURCE", "MIN", "MAX", "REQUEST", "RUNTIME", "USED"], lines[0]
    table = {
        (words[0], words[1]): dict(zip(header, words, strict=True))
        for words in (line.split() for line in lines)
        if len(words) == len(header) and words[0].endswith("v100")
    }
    team_a = table["team-a-v100", GPU]
    assert (team_a["RUNTIME"], team_a["USED"]) == ("5", "10"), done.stdout
    assert (table["team-b-v100", GPU]["RUNTIME"], table["team-b-v100", GPU]["USED"]) == ("5", "0")
    assert lines[1].startswith(f"Tree v100: cpu 128, memory 1006Gi, {GPU} 10,"), done.stdout
    plan = lines[lines.index("Reclaim (evicted in this order):") + 1 :]
    group, pods = plan[0].strip().split(": ", 1)
    assert group == "team-a-v100", done.stdout
    assert [pod.rstrip("0123456789") for pod in pods.split(", ")] == ["team-a/train-"] * 5
    assert not plan[1].startswith("  "), done.stdout  # no other group loses pods


ANY_POOL = "## Any of a team's pools"


def test_the_any_pool_simulate_sends_each_pod_where_the_gate_would() -> None:
    """The README's `simulate` of team A's Job over its two pools: the first five pods within
    team-a-v100's guarantee, five within team-a-a100's, the last five borrowing in team-a-v100."""
    (simulate,), _ = readme.blocks(ANY_POOL)
    executable, *args = simulate.split()
    done = subprocess.run(
        [str(REPO / executable), *args], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    chosen = lines[lines.index("Pools (where the gate lets the pods of several pools go now):") :]
    pods = {
        group.strip(): [int(p.rsplit("-", 1)[1]) for p in listed.split(", ")]
        for group, listed in (line.split(": ", 1) for line in chosen[1:3])
    }
    assert pods == {"team-a-a100": [5, 6, 7, 8, 9], "team-a-v100": [0, 1, 2, 3, 4, *range(10, 15)]}
