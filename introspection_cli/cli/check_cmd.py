"""``introspection check``: validate recipe packages."""

from __future__ import annotations

import math
import sys
from enum import StrEnum
from functools import partial
from typing import Annotated

import typer

from introspection_cli.cli.stdout import write_stdout
from introspection_cli.cli.terminal import stream_wants_color


class CheckFormat(StrEnum):
    text = "text"
    json = "json"
    github = "github"
    sarif = "sarif"


def check(
    paths: Annotated[list[str] | None, typer.Argument(
        metavar="[PATH]...",
        help="Recipe directories, files inside recipes, or directories holding recipes. "
             "Default: the recipe at '.', else every recipe below it.")] = None,
    output_format: Annotated[CheckFormat, typer.Option(
        "--format", help="Output format: text, json, github (workflow annotations) or sarif "
                         "(SARIF 2.1.0, for code scanning).")]
        = CheckFormat.text,
    strict: Annotated[bool, typer.Option(
        "--strict", help="Treat warnings as failures (exit 1).")] = False,
    require_certified: Annotated[bool, typer.Option(
        "--require-certified",
        help="Make a judge with calibration data but no valid certificate, one whose "
             "test rows' exposure is not clean and was not accepted, or one certified with "
             "a --max-error-rate above 0.05, an error (judge-not-certified), for CI.")] = False,
    min_bar: Annotated[float, typer.Option(
        "--min-bar", metavar="X",
        help="The bar a certificate must have been made at to be valid.")] = 0.8,
) -> None:
    """Validate recipe packages: SYSTEM.md, agents, skills, judges and calibration files.

    Prints every problem as path:line:col: severity[code] message. Exit 0 when
    clean, 1 when errors (or, with --strict, warnings) were found, 2 on a bad path.
    """
    from introspection_cli.certification.check_rules import certificate_diagnostics
    from introspection_cli.errors import UsageError
    from introspection_cli.recipe.checker import check_recipe
    from introspection_cli.recipe.discovery import discover
    from introspection_cli.reporters.check_report import REPORTERS

    found = discover(paths or [])
    for raw in found.outside:
        sys.stderr.write(f"introspection: note: {raw} is not inside a recipe; skipped\n")
    if not (math.isfinite(min_bar) and 0 < min_bar < 1):
        raise UsageError(f"--min-bar {min_bar} must be a number above 0 and below 1")
    certificates = partial(certificate_diagnostics, require_certified=require_certified,
                           min_bar=min_bar)
    results = [check_recipe(root, judges_rules=certificates) for root in found.recipes]
    for note in (note for result in results for note in result.notes):
        sys.stderr.write(f"introspection: note: {note}\n")
    if results or output_format is CheckFormat.json:
        # JSON is always the SPEC §3.1 object, even with nothing checked (empty lists,
        # zero counts), so a consumer can always parse stdout.
        render = REPORTERS[output_format.value]
        write_stdout(render(results, color=stream_wants_color(sys.stdout)),
                     what="the check report", quiet_epipe=output_format is CheckFormat.text)
    else:
        sys.stderr.write("introspection: note: no PATH is inside a recipe; nothing was checked\n")
    failing = sum(r.errors for r in results)
    if strict:
        failing += sum(len(r.diagnostics) - r.errors for r in results)
    raise typer.Exit(1 if failing else 0)


def register(app: typer.Typer) -> None:
    """Add ``check`` to the root app."""
    app.command("check")(check)
