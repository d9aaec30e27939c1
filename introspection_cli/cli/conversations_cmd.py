"""``introspection conversations get``."""

from __future__ import annotations

import typer

app = typer.Typer(help="Export conversations from the runtime.", no_args_is_help=True)
