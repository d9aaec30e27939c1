"""``introspection judges agree``: how much a judge's raters agree (the human ceiling).

Thin like every command module: :mod:`introspection_cli.workflows.agree` does the work,
imported inside the command (numpy is loaded only here, never by ``check``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from introspection_cli.cli.stdout import finish


def agree(
    recipe: Annotated[Path, typer.Argument(
        help="Recipe directory (the one containing SYSTEM.md). Default: the current "
             "directory.")] = Path("."),
    judge: Annotated[str | None, typer.Option(
        "--judge", metavar="NAME",
        help="The judge whose raters to compare. Default: the only judge with a calibration "
             "file.")] = None,
    fmt: Annotated[str, typer.Option("--format", help="text or json.")] = "text",
) -> None:
    """Compare the raters of a judge's rows (judges label --rater): Krippendorff's alpha
    with its bootstrap 95% interval, Cohen's kappa and applicable agreement per pair of
    raters, per-class agreement, and the rows in conflict (settle them with judges label
    --adjudicate).

    Exit codes: 0 done; 1 the labels cannot give the figures (fewer than two raters, no row
    labelled by two, a single label everywhere), or a file cannot be read; 2 usage error.
    """
    from introspection_cli.workflows.agree import agree_command

    finish(agree_command(recipe, judge, fmt), what="the agreement", quiet_epipe=fmt == "text")


def register(app: typer.Typer) -> None:
    """Add ``agree`` to the ``judges`` group."""
    app.command("agree")(agree)
