"""The ``rater`` and ``note`` columns of a labelling sheet (``--to-csv`` / ``--from``).

A sheet row with a rater is that rater's label (the ``expected`` cell) and note:
planned with every other rater row of the sheet by :func:`.rating.plan_ratings`,
so ``expected`` follows the raters' rules. As for ``expected`` without raters, a
label that differs from the one this rater already gave is changed only with
``--overwrite``, and an empty cell changes nothing (an empty note keeps the note).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from introspection_cli.annotations.file import Annotations, read_annotations
from introspection_cli.annotations.record import (
    ADJUDICATED,
    Annotation,
    clean_note,
    note_problem,
    rater_problem,
)
from introspection_cli.errors import UsageError
from introspection_cli.fixture import FixtureRow
from introspection_cli.fixture.byterule import RowNotWritable
from introspection_cli.labelling.calibration import CalibrationFile, CalibrationLine
from introspection_cli.labelling.cells import SheetRow, read_cell
from introspection_cli.labelling.rating import Rating, RatingPlan, RatingRefused, plan_ratings
from introspection_cli.provenance import utc_now


@dataclass(frozen=True)
class SheetRaters:
    """The judge's annotations file, and the rater ``--rater`` names (the sheet's default).
    The file is read when a sheet row needs it: a sheet without raters never does."""

    default: str | None
    path: Path

    @functools.cached_property
    def annotations(self) -> Annotations:
        return read_annotations(self.path)

    def own(self, row: FixtureRow, rater: str) -> Annotation | None:
        """``rater``'s annotation of the row as it is now."""
        return self.annotations.get((row.conversation_id, row.snapshot_hash, rater))


def rater_cells(cells: Mapping[str, str], default: str | None,
                where: str) -> tuple[str | None, str | None]:
    """(rater, note) of one sheet record; :class:`UsageError` naming it when they cannot
    be used."""

    rater = read_cell(cells.get("rater", "")) or default
    note = clean_note(read_cell(cells.get("note", "")))
    if rater is not None:
        problem = rater_problem(rater) or (
            f"{ADJUDICATED} is not a rater (judges label --adjudicate records it)"
            if rater == ADJUDICATED else None)
        if problem is not None:
            raise UsageError(f"{where}: {problem}")
    if note is not None:
        if rater is None:
            raise UsageError(f"{where}: a note is kept per rater: fill the rater column, or "
                             "pass --rater NAME")
        problem = note_problem(note)
        if problem is not None:
            raise UsageError(f"{where}: {problem}")
    return rater, note


def plan_sheet_ratings(calibration: CalibrationFile, raters: SheetRaters,
                       rated: Sequence[tuple[SheetRow, CalibrationLine]], source: Path, *,
                       overwrite: bool, reports: list[str]) -> RatingPlan:
    """The raters' rows of a sheet as one plan; what cannot be used goes to ``reports``."""
    ratings = []
    for sheet_row, line in rated:
        rating = _rating(sheet_row, line, raters, f"{source} row {sheet_row.number}",
                         overwrite, reports)
        if rating is not None:
            ratings.append(rating)
    try:
        return plan_ratings(calibration, raters.annotations, ratings, utc_now())
    except (RowNotWritable, RatingRefused) as exc:
        reports.append(f"{source}: {exc}; no rater row was used")
        return RatingPlan()


def _rating(sheet_row: SheetRow, line: CalibrationLine, raters: SheetRaters, where: str,
            overwrite: bool, reports: list[str]) -> Rating | None:
    row, rater = line.row, sheet_row.rater
    assert row is not None and rater is not None
    mine = raters.own(row, rater)
    label: str | None = sheet_row.expected
    if label is not None and mine is not None and mine.label != label and not overwrite:
        reports.append(f"{where}: rater {rater} already labelled line {line.number} "
                       f"{mine.label}, the sheet says {label}; pass --overwrite to change it")
        return None
    if label is None and sheet_row.note is not None and mine is None:
        reports.append(f"{where}: rater {rater} has no label on line {line.number} to note; "
                       "fill the expected column too")
        return None
    set_split = _split_change(sheet_row, line, overwrite, where, reports)
    if label is None and sheet_row.note is None and not set_split:
        return None
    return Rating(rater, line.number, label, sheet_row.note, sheet_row.note is not None,
                  sheet_row.split, set_split)


def _split_change(sheet_row: SheetRow, line: CalibrationLine, overwrite: bool, where: str,
                  reports: list[str]) -> bool:
    """Whether the row's split is to be set (as for a row without a rater)."""
    assert line.row is not None
    current = line.row.split
    if not sheet_row.has_split or sheet_row.split == current:
        return False
    if current is not None and not overwrite:
        reports.append(f"{where}: line {line.number} already has split {current}, the sheet "
                       f"says {sheet_row.split or 'none'}; pass --overwrite to change it")
        return False
    return True
