"""``introspection init``: start a recipe."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def init(
    directory: Annotated[Path, typer.Argument(
        metavar="[DIR]",
        help="Where to write the recipe; created if missing. It may already hold other "
             "files, but none of those init writes. Default: the current directory.")
    ] = Path("."),
) -> None:
    """Write a minimal recipe that `introspection check` passes, and say what to do next.

    Writes SYSTEM.md, a gated and an ungated judge with an empty calibration file
    each, and a .pre-commit-config.yaml running check. Never overwrites: when any
    of these files exists, nothing is written. Exit codes: 0 written; 2 a file
    exists or a path cannot be used.
    """
    from introspection_cli.cli.stdout import finish
    from introspection_cli.workflows.init_recipe import init_recipe

    finish(init_recipe(directory), what="the summary")


def register(app: typer.Typer) -> None:
    """Add ``init`` to the root app."""
    app.command("init")(init)
