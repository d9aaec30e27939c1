"""The cells of a labelling sheet: formula escaping that two texts never share, and a
sheet's row as read (:mod:`.sheet` writes and reads sheets, :mod:`.sheet_raters` the
raters' columns)."""

from __future__ import annotations

from dataclasses import dataclass

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_ESCAPE = "'"


def safe_cell(text: str) -> str:
    """``text`` as a spreadsheet will show it, never run it as a formula.

    A cell starting as a formula would, or with the escape itself, gets one more
    ``'`` in front: two texts never give the same cell, and :func:`read_cell` undoes it.
    """
    return _ESCAPE + text if text.startswith((*_FORMULA_START, _ESCAPE)) else text


def read_cell(text: str) -> str:
    """Undo :func:`safe_cell`: one leading ``'`` is removed."""
    return text.removeprefix(_ESCAPE)


@dataclass(frozen=True, slots=True)
class SheetRow:
    number: int  # the record's row in a spreadsheet (the header is row 1)
    conversation_id: str
    expected: str | None
    split: str | None
    has_split: bool
    rater: str | None = None
    note: str | None = None
