"""The bottom line of a terminal, redrawn in place and shared by the progress reporters.

The row progress (:mod:`~introspection_cli.cli.progress`) and ``--batch``'s batch
progress (:mod:`~introspection_cli.cli.batch_progress`) each own a part of it, so they
never overwrite each other; the line is cut to the terminal's width, so a redraw
never wraps onto a second line.
"""

from __future__ import annotations

import os
import shutil
from typing import TextIO


class StatusLine:
    """The bottom line of a terminal, shared: each reporter sets its own part of it."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._parts: dict[str, str] = {}
        self._drawn = False

    def show(self, part: str, text: str) -> None:
        """Set ``part``'s text (parts keep the order they were first shown in) and redraw."""
        self._parts[part] = text
        line = " | ".join(text for text in self._parts.values() if text)
        width = self._columns() - 1
        if len(line) > width:
            line = line[: max(width - 1, 0)] + "…"
        self._stream.write("\r\033[K" + line)
        self._stream.flush()
        self._drawn = True

    def _columns(self) -> int:
        """The width of the terminal the line is drawn on (stderr's, not stdout's)."""
        try:
            columns = os.get_terminal_size(self._stream.fileno()).columns
        except (AttributeError, OSError, ValueError):  # not a real terminal (a test's buffer)
            columns = 0
        # A terminal that does not know its size says 0 columns.
        return columns or shutil.get_terminal_size(fallback=(80, 24)).columns

    def clear(self) -> None:
        """Erase the line (before a message is printed, and at the end of the run)."""
        if self._drawn:
            self._stream.write("\r\033[K")
            self._stream.flush()
            self._drawn = False
