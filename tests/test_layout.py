"""The architecture holds: a pure engine whose sub-packages show faces, public names guarded, no
`operator` shadowing."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import eq_engine
import pytest

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


ENGINE = REPO / "engine" / "eq_engine"
FACES = sorted(path.parent.name for path in ENGINE.glob("*/__init__.py"))
# The engine's callers: the servers, the CLI, the benchmarks and the scripts (tests may open a
# module to test it).
EDGES = ("operator", "webhook", "cli", "kit", "benchmarks", "scripts")


def _engine_imports(path: Path) -> Iterator[tuple[int, str, list[str]]]:
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.split(".")[0] == "eq_engine":
                yield node.lineno, node.module, [alias.name for alias in node.names]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "eq_engine":
                    yield node.lineno, alias.name, []


def test_edges_import_the_engine_only_through_its_faces():
    faces = {"eq_engine": set(eq_engine.__all__)} | {
        f"eq_engine.{face}": set(importlib.import_module(f"eq_engine.{face}").__all__)
        for face in FACES
    }
    strays = [
        f"{path.relative_to(REPO)}:{line}: {module} {names}"
        for root in EDGES
        for path in sorted((REPO / root).rglob("*.py"))
        for line, module, names in _engine_imports(path)
        if module not in faces or not names or not set(names) <= faces[module]
    ]
    assert strays == []


@pytest.mark.parametrize("face", FACES)
def test_each_sub_package_says_what_it_must_not_do_and_exports_what_it_imports(face: str):
    source = ast.parse((ENGINE / face / "__init__.py").read_text())
    docstring = ast.get_docstring(source) or ""
    assert "Must not" in docstring
    bound = {
        alias.asname or alias.name
        for node in source.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    assert set(importlib.import_module(f"eq_engine.{face}").__all__) == bound


def test_the_engines_sub_packages_import_one_another_only_through_their_faces():
    strays = []
    for face in FACES:
        for path in sorted((ENGINE / face).glob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if not isinstance(node, ast.ImportFrom) or node.level != 2:
                    continue
                target = node.module or ""
                exported = (
                    set(importlib.import_module(f"eq_engine.{target}").__all__)
                    if target in FACES
                    else set()
                )
                names = {alias.name for alias in node.names}
                if not names <= exported:
                    strays.append(f"{path.relative_to(REPO)}:{node.lineno}: ..{target} {names}")
    assert strays == []
