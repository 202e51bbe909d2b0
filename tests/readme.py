"""README.md's walkthroughs as the tests that play them read them: the commands of a section's
bash blocks, taken out of the page so that the test and the page cannot drift."""

from __future__ import annotations

import re

from tests.paths import REPO


def blocks(heading: str) -> list[list[str]]:
    """The commands of each bash block under README.md's `heading` (up to the next heading of
    level 2 or 3), in order: continuation lines joined, runs of blanks made one, comments kept."""
    readme = (REPO / "README.md").read_text()
    section = readme.split(heading, 1)[1].split("\n## ", 1)[0].split("\n### ", 1)[0]
    return [
        [" ".join(line.split()) for line in block.replace("\\\n", " ").splitlines() if line.strip()]
        for block in re.findall(r"```bash\n(.*?)```", section, re.DOTALL)
    ]


def commands(heading: str) -> list[str]:
    """The commands of every bash block under `heading`, one list."""
    return [command for block in blocks(heading) for command in block]
