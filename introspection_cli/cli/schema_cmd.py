"""``introspection schema NAME``: print a shipped JSON Schema."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Add ``schema`` to the root app."""
