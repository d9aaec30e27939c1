"""``introspection check``."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Add ``check`` to the root app."""
