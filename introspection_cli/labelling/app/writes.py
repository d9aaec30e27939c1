"""The writes a labelling page asks for, and what undo keeps of each (values, no I/O)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from introspection_cli.fixture.byterule import LineEdit
from introspection_cli.labelling.rating import RatingPlan


class WriteRefused(Exception):
    """A write was not made; ``item`` is the conversation as it is on disk now."""

    def __init__(self, message: str, item: dict[str, Any] | None) -> None:
        super().__init__(message)
        self.message = message
        self.item = item


@dataclass(frozen=True, slots=True)
class LabelWrite:
    """One write the page asks for: ``values`` (expected and/or split) on a judge's line,
    which the page showed as ``version``; with a rater, the note saved with the label
    (None: the rater's note as it is)."""

    judge: str
    line: int
    version: str
    values: Mapping[str, str | None]
    note: str | None = None


@dataclass(frozen=True, slots=True)
class NoteWrite:
    """The session's rater's note on a judge's line they labelled (shown as ``version``);
    an empty note removes it."""

    judge: str
    line: int
    version: str
    note: str


@dataclass(frozen=True, slots=True)
class Done:
    """A write of this session, as undo needs it."""

    judge: str
    what: str
    edits: tuple[LineEdit, ...]
    left_queue: tuple[int, ...] = ()  # the items the write took out of the queue
    #: A rater's write: both files (``edits`` is then empty), and the lines it labelled.
    plan: RatingPlan | None = None
    lines: tuple[int, ...] = ()
