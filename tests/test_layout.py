"""The architecture holds: a pure engine, public names guarded, no `operator` shadowing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import eq_engine

from tests.paths import PYTHONPATH, REPO


def test_import_operator_is_the_standard_library():
    result = subprocess.run(
        [sys.executable, "-c", "import operator; print(operator.__file__)"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    )
    assert "site-packages" not in result.stdout
    assert str(REPO) not in result.stdout


def test_engine_imports_no_io_library():
    """import-linter's contracts from pyproject.toml: the engine never imports an edge."""
    linter = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run(
        [str(linter), "--config", str(REPO / "pyproject.toml")],
        cwd=REPO,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": PYTHONPATH, "PATH": "/usr/bin:/bin"},
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_exported_names_are_the_public_ones():
    public = {
        name
        for name in dir(eq_engine)
        if not name.startswith("_") and not isinstance(getattr(eq_engine, name), type(eq_engine))
    }
    assert set(eq_engine.__all__) == public
