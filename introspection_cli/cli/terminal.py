"""What the terminal around a command can show."""

from __future__ import annotations

import os


def stream_wants_color(stream: object) -> bool:
    """Colour only on a terminal, never with NO_COLOR set or TERM=dumb."""
    isatty = getattr(stream, "isatty", None)
    return (bool(isatty and isatty()) and "NO_COLOR" not in os.environ
            and os.environ.get("TERM") != "dumb")


def stream_redraws(stream: object) -> bool:
    """Whether a line can be redrawn in place on ``stream``: a terminal that is not TERM=dumb.

    Independent of NO_COLOR: redrawing uses no colour, only a carriage return and an
    erase-line sequence."""
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and os.environ.get("TERM") != "dumb"
