"""What the terminal around a command can show."""

from __future__ import annotations

import os


def stream_wants_color(stream: object) -> bool:
    """Colour only on a terminal, never with NO_COLOR set or TERM=dumb."""
    isatty = getattr(stream, "isatty", None)
    return (bool(isatty and isatty()) and "NO_COLOR" not in os.environ
            and os.environ.get("TERM") != "dumb")
