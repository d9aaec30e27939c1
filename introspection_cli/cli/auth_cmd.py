"""``introspection login`` and ``introspection logout``."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Add ``login`` and ``logout`` to the root app."""
