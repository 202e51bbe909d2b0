"""Where the project's sources are, for tests that start its commands as subprocesses."""

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SOURCE_ROOTS = ("engine", "kit", "cli", "webhook", "operator")  # as in pyproject.toml
PYTHONPATH = os.pathsep.join(str(REPO / root) for root in SOURCE_ROOTS)
