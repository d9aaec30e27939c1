"""``introspection doctor``: what a run would use, and what to fix, without a model call."""

from __future__ import annotations

import os
from typing import Annotated

import typer


def doctor(
    fmt: Annotated[str, typer.Option("--format", help="text or json.")] = "text",
) -> None:
    """Show what a run would use and what is wrong with it; no model is called.

    Python and package versions, which provider API keys and base URLs are set
    (never their values), the runtime login and whether the runtime accepts it
    (one GET /v1/whoami), the cache, where test exposure is recorded, the price
    table, and the browser judges label would open. Exit codes: 0 nothing to fix; 1
    problems found (each with its fix); 2 usage error.
    """
    from introspection_cli.cli.stdout import finish
    from introspection_cli.workflows.doctor import doctor_command

    finish(doctor_command(os.environ, fmt), what=f"the {fmt} report", quiet_epipe=fmt == "text")


def register(app: typer.Typer) -> None:
    """Add ``doctor`` to the root app."""
    app.command("doctor")(doctor)
