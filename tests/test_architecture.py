"""The import contracts in pyproject.toml hold, cover the whole package, and would
catch a broken layer.

One layers contract orders every package and top-level module of
``introspection_cli`` (command line, workflows, reports, the core, utilities),
an ``acyclic_siblings`` contract forbids a cycle between the packages or modules
of any package, and finer contracts order reporting, the labelling app,
estimation and align, keep the run pipeline from reports and the core from
Typer. ``import-linter`` checks them; the tests below prove the layers name every
module (computed from the files, not from the contract) and that they bite, by
breaking a copy of the package.
"""

from __future__ import annotations

import os
import pkgutil
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from importlinter.cli import EXIT_STATUS_SUCCESS, lint_imports

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "introspection_cli"
WHOLE = "the package reads one way: command line, workflows, reports, the core, utilities"
NO_TYPER = "the core never imports the command-line framework"
ACYCLIC = "no import cycle between the packages or modules of any package"


def _contract(name: str) -> dict[str, Any]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    (found,) = [c for c in config["tool"]["importlinter"]["contracts"] if c["name"] == name]
    return found


def _layered_names() -> list[str]:
    """Every name the whole-package layers list, as written (``a | b``, ``a : b`` split)."""
    return [name.strip() for layer in _contract(WHOLE)["layers"]
            for name in re.split(r"[|:]", layer)]


def _modules() -> list[str]:
    """Every module of the package, from its files (dotted, below ``introspection_cli``)."""
    return [info.name for info in pkgutil.walk_packages([str(PACKAGE)], "introspection_cli.")]


def _top_level_names() -> set[str]:
    """The first name below ``introspection_cli`` of every module of the package:
    ``cli`` for ``introspection_cli.cli.app``, ``errors`` for ``introspection_cli.errors``."""
    modules = _modules()
    assert len(modules) > 150 and "introspection_cli.cli.app" in modules  # the walk went deep
    return {module.split(".")[1] for module in modules}


def test_import_contracts_hold() -> None:
    assert lint_imports(config_filename=str(ROOT / "pyproject.toml"), no_cache=True,
                        no_logo=True) == EXIT_STATUS_SUCCESS


def test_the_layers_name_every_package_and_module_once() -> None:
    layered = _layered_names()
    assert sorted(set(layered)) == sorted(_top_level_names())
    assert len(layered) == len(set(layered))  # no name in two layers


def test_only_the_command_line_may_import_typer() -> None:
    sources = {name.removeprefix("introspection_cli.")
               for name in _contract(NO_TYPER)["source_modules"]}
    assert sources == _top_level_names() - {"cli", "__main__"}


def test_the_cycle_contract_covers_the_whole_package() -> None:
    contract = _contract(ACYCLIC)
    assert contract["ancestors"] == ["introspection_cli"]
    assert "skip_descendants" not in contract and "ignore_imports" not in contract
    # Its depth (10 by default) reaches the deepest package, with room to spare.
    deepest = max(module.count(".") for module in _modules())
    assert contract.get("depth", 10) > deepest


def _lint_a_copy(tmp_path: Path, module: str, line: str) -> subprocess.CompletedProcess[str]:
    """import-linter over a copy of the package with ``line`` appended to ``module``
    (created when it does not exist)."""
    copy = tmp_path / "introspection_cli"
    shutil.copytree(ROOT / "introspection_cli", copy,
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    with (copy / module).open("a", encoding="utf-8") as handle:
        handle.write(f"\n{line}  # noqa\n")
    # Wide enough that no contract's name and verdict are wrapped onto two lines.
    env = {**os.environ, "PYTHONPATH": str(tmp_path), "COLUMNS": "200"}
    return subprocess.run(
        [sys.executable, "-c", "import sys; from importlinter.cli import lint_imports; "
         "sys.exit(lint_imports(no_cache=True, no_logo=True))"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)


def _verdict(result: subprocess.CompletedProcess[str], contract: str) -> str:
    """``KEPT`` or ``BROKEN``: what the run said of ``contract``."""
    found = re.search(re.escape(contract) + r"\s*(KEPT|BROKEN)", result.stdout)
    assert found, result.stdout
    return found.group(1)


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
    ("reporting/render_check.py", "from introspection_cli.reporting import render_certify"),
    ("reporting/outputs.py", "from introspection_cli.reporting import render_certify"),
    ("reporting/render_estimate.py", "from introspection_cli.reporting import registry"),
])
def test_a_forbidden_import_breaks_a_contract(tmp_path: Path, module: str, line: str) -> None:
    result = _lint_a_copy(tmp_path, module, line)
    assert result.returncode != 0, result.stdout
    assert "BROKEN" in result.stdout


# An import against the order of the whole package: each one of the three cycles
# there were (fixture <-> runtime, recipe <-> certification, the check and doctor
# renderers <-> workflows) and a crossing of every other layer boundary.
@pytest.mark.parametrize(("module", "line"), [
    ("cli/app.py", "import introspection_cli.__main__"),
    ("reporting/render_check.py", "from introspection_cli.cli import stdout"),
    ("reporting/render_doctor.py", "from introspection_cli.workflows import doctor"),
    ("reporting/registry.py", "from introspection_cli.workflows import status"),
    ("reporting/model.py", "from introspection_cli.workflows import status"),
    ("certification/state.py", "from introspection_cli.reporting import model"),
    ("certification/state.py", "from introspection_cli.labelling import sheet"),
    ("certification/power.py", "from introspection_cli.alignment import leakage"),
    ("alignment/leakage.py", "from introspection_cli.labelling import sheet"),
    ("labelling/sheet.py", "from introspection_cli.alignment import leakage"),
    ("evaluation/plan.py", "from introspection_cli.certification import power"),
    ("recipe/checker.py", "from introspection_cli.certification import check_rules"),
    ("recipe/model.py", "from introspection_cli.evaluation import fingerprint"),
    ("runtime/ids.py", "from introspection_cli.recipe import model"),
    ("recipe/source.py", "from introspection_cli.runtime import ids"),
    ("fixture/byterule.py", "from introspection_cli.runtime import appendfile"),
    ("fixture/codes.py", "from introspection_cli.estimation import counts"),
    ("estimation/counts.py", "from introspection_cli.fixture import codes"),
    ("localfiles.py", "from introspection_cli.fixture import byterule"),
    ("statistics.py", "from introspection_cli.estimation import counts"),
    ("errors.py", "from introspection_cli import fsutil"),
])
def test_an_upward_import_breaks_the_layers(tmp_path: Path, module: str, line: str) -> None:
    result = _lint_a_copy(tmp_path, module, line)
    assert result.returncode != 0, result.stdout
    assert _verdict(result, WHOLE) == "BROKEN", result.stdout


@pytest.mark.parametrize(("module", "line"), [
    ("cli/status_line.py", "from introspection_cli.cli import progress"),
    ("workflows/status.py", "from introspection_cli.workflows import status_command"),
    ("fsutil.py", "from introspection_cli import localfiles"),
    ("reporting/metrics.py", "from introspection_cli.reporting import report"),
    ("fixture/byterule.py", "from introspection_cli.runtime import appendfile"),
])
def test_an_import_cycle_breaks_the_cycle_contract(tmp_path: Path, module: str,
                                                    line: str) -> None:
    result = _lint_a_copy(tmp_path, module, line)
    assert result.returncode != 0, result.stdout
    assert _verdict(result, ACYCLIC) == "BROKEN", result.stdout


def test_a_new_top_level_module_must_take_a_place_in_the_layers(tmp_path: Path) -> None:
    result = _lint_a_copy(tmp_path, "plugins.py", "import json")
    assert result.returncode != 0, result.stdout
    assert "introspection_cli.plugins" in result.stdout


def test_a_new_reporting_module_must_take_a_place_in_the_layers(tmp_path: Path) -> None:
    """A module the layers do not list is bound by none of them: a new renderer
    importing another renderer would pass unnoticed. The contract is exhaustive."""
    result = _lint_a_copy(tmp_path, "reporting/render_pdf.py",
                          "from introspection_cli.reporting import render_text")
    assert result.returncode != 0, result.stdout
    assert "render_pdf" in result.stdout


def test_a_command_exits_through_finish_or_the_error_mapping_only() -> None:
    """Every command hands a CommandResult to ``cli.stdout.finish``; only ``cli/app.py``
    (``--version``, and the errors mapped to their exit codes) exits otherwise."""
    exits = {path.name for path in (PACKAGE / "cli").glob("*.py")
             if re.search(r"typer\.Exit\(|SystemExit\(", path.read_text(encoding="utf-8"))}
    assert exits == {"stdout.py", "app.py"}
    result_types = [path.relative_to(PACKAGE) for path in PACKAGE.rglob("*.py")
                    if re.search(r"^class \w*CommandResult\b|^class \w+Result:\n    stdout",
                                 path.read_text(encoding="utf-8"), re.MULTILINE)]
    assert result_types == [Path("errors.py")]
