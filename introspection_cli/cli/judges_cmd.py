"""``introspection judges eval`` and ``introspection judges render``."""

from __future__ import annotations

import typer

app = typer.Typer(help="Run judges over their calibration data.", no_args_is_help=True)
