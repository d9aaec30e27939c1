"""``introspection check``: validate recipe packages."""

from __future__ import annotations

import sys
from enum import StrEnum
from typing import Annotated

import typer

from introspection_cli.cli.stdout import finish
from introspection_cli.cli.terminal import stream_wants_color
from introspection_cli.formats import CHECK_FORMATS, Format

#: ``--format``'s choices as Typer offers them: check's formats, named by :class:`Format`.
_Choice = StrEnum("_Choice", {fmt.value: fmt.value for fmt in CHECK_FORMATS})  # type: ignore[misc]
_TEXT = _Choice(Format.TEXT.value)


def check(
    paths: Annotated[list[str] | None, typer.Argument(
        metavar="[PATH]...",
        help="Recipe directories, files inside recipes, or directories holding recipes. "
             "Default: the recipe at '.', else every recipe below it.")] = None,
    output_format: Annotated[_Choice, typer.Option(
        "--format", help="Output format: text, json, github (workflow annotations) or sarif "
                         "(SARIF 2.1.0, for code scanning).")] = _TEXT,
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
    from introspection_cli.workflows.check import check_command

    finish(check_command(paths or [], output_format.value, strict=strict,
                         require_certified=require_certified, min_bar=min_bar,
                         color=stream_wants_color(sys.stdout)),
           what="the check report", quiet_epipe=output_format.value == Format.TEXT)


def register(app: typer.Typer) -> None:
    """Add ``check`` to the root app."""
    app.command("check")(check)
