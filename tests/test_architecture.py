"""The import contracts in pyproject.toml hold, and they would catch a broken layer.

The reporting package reads one way (report model at the bottom, comparisons on
it, independent renderers on top), the run pipeline never imports reporting or
the command line, and the core never imports Typer or Rich. ``import-linter``
checks the contracts; the second test proves they bite by breaking a copy of
the package.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from importlinter.cli import EXIT_STATUS_SUCCESS, lint_imports

ROOT = Path(__file__).resolve().parents[1]


def test_import_contracts_hold() -> None:
    assert lint_imports(config_filename=str(ROOT / "pyproject.toml"), no_cache=True,
                        no_logo=True) == EXIT_STATUS_SUCCESS


def _lint_a_copy(tmp_path: Path, module: str, line: str) -> subprocess.CompletedProcess[str]:
    """import-linter over a copy of the package with ``line`` appended to ``module``
    (created when it does not exist)."""
    copy = tmp_path / "introspection_cli"
    shutil.copytree(ROOT / "introspection_cli", copy,
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    with (copy / module).open("a", encoding="utf-8") as handle:
        handle.write(f"\n{line}  # noqa\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    return subprocess.run(
        [sys.executable, "-c", "import sys; from importlinter.cli import lint_imports; "
         "sys.exit(lint_imports(no_cache=True, no_logo=True))"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize(("module", "line"), [
    ("reporting/render_markdown.py", "from introspection_cli.reporting import render_text"),
    ("reporting/model.py", "from introspection_cli.reporting import render_json"),
    ("reporting/render_junit.py", "from introspection_cli.reporting import render_text"),
    ("reporting/render_text.py", "from introspection_cli.reporting import render_junit"),
    ("reporting/gates.py", "from introspection_cli.reporting import render_junit"),
    ("reporting/model.py", "from introspection_cli.reporting import model_comparison"),
    ("reporting/render_html.py", "from introspection_cli.reporting import render_markdown"),
    ("reporting/render_junit.py", "from introspection_cli.reporting import render_html"),
    ("reporting/model.py", "from introspection_cli.reporting import render_html"),
    ("reporting/model_comparison.py", "from introspection_cli.reporting import render_text"),
    ("reporting/metrics.py", "from introspection_cli.reporting import baseline"),
    ("evaluation/runner.py", "from introspection_cli.reporting import model"),
    ("reporting/gates.py", "import typer"),
])
def test_a_forbidden_import_breaks_a_contract(tmp_path: Path, module: str, line: str) -> None:
    result = _lint_a_copy(tmp_path, module, line)
    assert result.returncode != 0, result.stdout
    assert "BROKEN" in result.stdout


def test_a_new_reporting_module_must_take_a_place_in_the_layers(tmp_path: Path) -> None:
    """A module the layers do not list is bound by none of them: a new renderer
    importing another renderer would pass unnoticed. The contract is exhaustive."""
    result = _lint_a_copy(tmp_path, "reporting/render_pdf.py",
                          "from introspection_cli.reporting import render_text")
    assert result.returncode != 0, result.stdout
    assert "render_pdf" in result.stdout
