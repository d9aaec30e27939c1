"""``judges label --to-csv`` and ``--from``: labelling in a spreadsheet.

The sheet has the columns ``line``, ``conversation_id``, ``split``,
``expected``, ``rater``, ``note`` and ``transcript``. Reading one back matches
rows by ``conversation_id`` (lines may have moved), and an empty cell changes
nothing. A label or split that differs from one the row already has is changed
only with ``overwrite``; otherwise it is reported, like an id not in the file.

A sheet row with a ``rater`` (its cell, else ``--rater NAME``) is that rater's
label and note (:mod:`.sheet_raters`): written to the annotations file, and to
``expected`` by :mod:`.rating`'s rules. Written with ``--rater NAME``, the sheet
is blind: its ``expected`` column is that rater's own labels, and its ``note``
column their notes; without, the row's ``expected`` and empty rater and note.
One sheet may hold several raters' rows for a conversation (one each).

Conversation text is untrusted: a cell that a spreadsheet would run as a
formula (starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return)
is written with a leading ``'``, and so is a cell that already starts with
``'``, so the escaping is injective; reading the sheet back removes one
leading ``'``.

A sheet is read within bounds: at most 64 MiB, no cell over the csv module's
limit (131,072 characters), each header name once; anything else is a
:class:`UsageError` naming the file (and row).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from introspection_cli.errors import CommandResult, DataError, UsageError, exit_code_for
from introspection_cli.fixture import VERDICTS
from introspection_cli.fixture.byterule import LineEdit, RowNotWritable, plan_edit, write_edits
from introspection_cli.fsutil import atomic_write_text, check_output_target
from introspection_cli.labelling.calibration import CalibrationFile, CalibrationLine
from introspection_cli.labelling.cells import SheetRow, read_cell, safe_cell
from introspection_cli.labelling.rating import RatingPlan, apply_plan
from introspection_cli.labelling.setlabels import NO_SPLIT, parse_split
from introspection_cli.labelling.transcript import transcript_text
from introspection_cli.localfiles import FileTooLarge, NotARegularFile, read_file

if TYPE_CHECKING:
    from introspection_cli.labelling.sheet_raters import SheetRaters

COLUMNS = ("line", "conversation_id", "split", "expected", "rater", "note", "transcript")
_SHEET_LIMIT = 64 * 1024 * 1024




def write_sheet(calibration: CalibrationFile, target: Path,
                raters: SheetRaters | None = None) -> CommandResult:
    """Write every trusted row of ``calibration`` to the CSV file ``target`` atomically
    (for ``raters.default``, with that rater's labels and notes only)."""
    check_output_target(target, flag="--to-csv")
    if target.resolve() == calibration.path.resolve():
        raise UsageError(f"--to-csv {target} is the calibration file itself; pass another "
                         "file name, such as labels.csv")
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")  # RFC 4180, what spreadsheets expect
    writer.writerow(COLUMNS)
    rows = 0
    for line in calibration.lines:
        if line.row is None:
            continue
        rater = raters.default if raters is not None else None
        mine = raters.own(line.row, rater) if raters is not None and rater else None
        label = (mine.label if mine else "") if rater else line.row.expected or ""
        writer.writerow([line.number, safe_cell(line.row.conversation_id),
                         line.row.split or "", label, safe_cell(rater or ""),
                         safe_cell(mine.note or "") if mine else "",
                         safe_cell(transcript_text(line.row.judge_input.get("events") or []))])
        rows += 1
    try:
        atomic_write_text(target, buffer.getvalue())
    except OSError as exc:
        raise DataError(f"cannot write --to-csv {target} ({exc.strerror})") from None
    left_out = (f"warning: {len(calibration.rejected)} rejected row(s) left out of the "
                "sheet; `introspection check` says why",) if calibration.rejected else ()
    return CommandResult(stdout=f"{rows} row(s) written to {target}: fill in the expected "
                                f"column, then run `introspection judges label --from "
                                f"{target}`\n", problems=left_out)


@dataclass
class SheetPlan:
    """The edits a sheet asks for, and every sheet row that could not be used."""

    edits: list[LineEdit] = field(default_factory=list)
    reports: list[str] = field(default_factory=list)
    #: The raters' rows: their annotations, and what they write to ``expected``.
    ratings: RatingPlan | None = None




def read_sheet(calibration: CalibrationFile, source: Path, *, overwrite: bool,
               raters: SheetRaters | None = None) -> SheetPlan:
    """Match the sheet's rows to ``calibration`` and plan the label and split changes."""
    plan = SheetPlan()
    by_id = {line.row.conversation_id: line for line in calibration.lines if line.row is not None}
    sheet_lines: dict[str, dict[int, str | None]] = {}
    rated: list[tuple[SheetRow, CalibrationLine]] = []
    default = raters.default if raters is not None else None
    for sheet_row in list(_sheet_rows(source, plan, sheet_lines, default)):
        where = f"{source} row {sheet_row.number}"
        clash = _clash(sheet_row, sheet_lines[sheet_row.conversation_id])
        if clash:  # which one is meant is anyone's guess
            plan.reports.append(f"{where}: conversation {sheet_row.conversation_id} is also on "
                                f"row(s) {', '.join(map(str, clash))}{_for(sheet_row)}; none "
                                "of them is used")
            continue
        line = by_id.get(sheet_row.conversation_id)
        if line is None:
            plan.reports.append(f"{where}: conversation {sheet_row.conversation_id} is not a "
                                f"usable row of {calibration.path}")
            continue
        if sheet_row.rater is not None:
            rated.append((sheet_row, line))
            continue
        values = _changes(line, sheet_row, overwrite, where, plan.reports)
        try:
            edit = plan_edit(line.number, line.text, values) if values else None
        except RowNotWritable as exc:
            plan.reports.append(f"{where}: {exc}")
            continue
        if edit is not None:
            plan.edits.append(edit)
    if rated:
        from introspection_cli.labelling.sheet_raters import plan_sheet_ratings

        assert raters is not None  # a rater column is read only with the raters' file
        plan.ratings = plan_sheet_ratings(calibration, raters, rated, source,
                                          overwrite=overwrite, reports=plan.reports)
    return plan


def _clash(sheet_row: SheetRow, rows: dict[int, str | None]) -> list[int]:
    """The other sheet rows of this conversation it cannot stand beside: the same rater's
    (or, without a rater, any other)."""
    return [number for number, rater in rows.items() if number != sheet_row.number
            and (sheet_row.rater is None or rater is None or rater == sheet_row.rater)]


def _for(sheet_row: SheetRow) -> str:
    return f" for rater {sheet_row.rater}" if sheet_row.rater is not None else ""


def _changes(line: CalibrationLine, sheet_row: SheetRow, overwrite: bool, where: str,
             reports: list[str]) -> dict[str, str | None]:
    assert line.row is not None
    values: dict[str, str | None] = {}
    for name, current, wanted, given in (
            ("expected", line.row.expected, sheet_row.expected, sheet_row.expected is not None),
            ("split", line.row.split, sheet_row.split, sheet_row.has_split)):
        if not given or wanted == current:
            continue
        if current is not None and not overwrite:
            reports.append(f"{where}: line {line.number} already has {name} "
                           f"{current}, the sheet says {wanted or NO_SPLIT}; pass --overwrite "
                           "to change it")
            continue
        values[name] = wanted
    return values


def _sheet_rows(source: Path, plan: SheetPlan, sheet_lines: dict[str, dict[int, str | None]],
                default_rater: str | None) -> Iterator[SheetRow]:
    """The usable records of the sheet; every record's id (and rater) goes into
    ``sheet_lines``."""
    from introspection_cli.labelling.sheet_raters import rater_cells

    for number, cells in _records(source):
        where = f"{source} row {number}"
        conversation_id = read_cell(cells.get("conversation_id", ""))
        if not conversation_id:
            if any(cells.values()):
                plan.reports.append(f"{where}: no conversation_id; the row is ignored")
            continue
        try:
            rater, note = rater_cells(cells, default_rater, where)
        except UsageError as exc:
            plan.reports.append(str(exc))
            continue
        sheet_lines.setdefault(conversation_id, {})[number] = rater
        expected = cells.get("expected", "").lower() or None
        if expected is not None and expected not in VERDICTS:
            plan.reports.append(f"{where}: unknown label {expected!r}; use pass, fail or "
                                "not_applicable")
            continue
        split_text = cells.get("split", "").lower()
        try:
            split = parse_split(split_text, where=where) if split_text else None
        except UsageError as exc:
            plan.reports.append(str(exc))
            continue
        yield SheetRow(number, conversation_id, expected, split, bool(split_text), rater, note)


def _records(source: Path) -> Iterator[tuple[int, Mapping[str, str]]]:
    """Each record of the sheet as (its row as a spreadsheet numbers it, cells by column).

    The one reader of sheets: bounded in bytes (:func:`_read_text`) and per cell (the
    csv module's limit, a :class:`UsageError` naming the row), header names once each.
    """
    reader = csv.reader(io.StringIO(_read_text(source), newline=""))
    # Numbered as a spreadsheet shows them (the header is row 1); a CSV line number would
    # drift past every multi-line transcript cell.
    row = 1  # the row being read, named when the csv module refuses it
    try:
        header = [name.strip() for name in next(reader, [])]
        _check_header(source, header)
        row = 2
        for record in reader:
            yield row, {name: cell.strip() for name, cell in zip(header, record, strict=False)
                        if name}
            row += 1
    except csv.Error as exc:
        raise UsageError(_csv_problem(source, row, exc)) from None


def _check_header(source: Path, header: list[str]) -> None:
    missing = [name for name in ("conversation_id", "expected") if name not in header]
    if missing:
        raise UsageError(f"--from {source}: the first row must name the columns; "
                         f"{' and '.join(missing)} missing (found: {', '.join(header) or 'none'})")
    repeated = sorted({name for name in header if name and header.count(name) > 1},
                      key=header.index)
    if repeated:
        raise UsageError(f"--from {source}: the column {repeated[0]} appears more than once in "
                         "the first row; keep one column of each name (which one is meant is "
                         "anyone's guess)")


def _csv_problem(source: Path, row: int, exc: csv.Error) -> str:
    if "field larger than field limit" in str(exc):
        return (f"--from {source} row {row}: a cell holds more than "
                f"{csv.field_size_limit():,} characters, more than a sheet cell can; is it "
                "the right file?")
    return f"--from {source} row {row}: not readable as CSV ({exc}); save the sheet as CSV"


def _write(path: Path, edits: Sequence[LineEdit]) -> None:
    write_edits(path, edits)


def _read_text(source: Path) -> str:
    try:
        data = read_file(source, limit=_SHEET_LIMIT)
    except FileNotFoundError:
        raise UsageError(f"--from {source}: no such file") from None
    except NotARegularFile as exc:
        raise UsageError(f"--from {source} is {exc.kind}, not a CSV file") from None
    except FileTooLarge:
        raise UsageError(f"--from {source} is larger than {_SHEET_LIMIT >> 20} MiB; is it the "
                         "right file?") from None
    except OSError as exc:
        raise UsageError(f"--from {source}: cannot read it ({exc.strerror})") from None
    try:
        return data.decode("utf-8-sig")  # spreadsheets often save UTF-8 with a BOM
    except UnicodeDecodeError as exc:
        raise UsageError(f"--from {source}: byte {exc.start + 1} is not UTF-8; save the sheet "
                         "as CSV UTF-8") from None


def apply_sheet(calibration: CalibrationFile, source: Path, *, overwrite: bool,
                raters: SheetRaters | None = None) -> CommandResult:
    """``--from``: write what the sheet asks for in one write (and the raters' annotations
    in one more); exit 1 if anything was reported."""
    plan = read_sheet(calibration, source, overwrite=overwrite, raters=raters)
    ratings = plan.ratings or RatingPlan()
    edits = sorted([*plan.edits, *ratings.edits], key=lambda edit: edit.line)
    if ratings.changes:
        assert raters is not None
        apply_plan(RatingPlan(tuple(edits), ratings.changes),
                   lambda written: _write(calibration.path, written), raters.path)
    elif edits:
        write_edits(calibration.path, edits)
    stdout = f"{len(edits)} row(s) written to {calibration.path}\n"
    if ratings.changes:
        assert raters is not None
        stdout += f"{len(ratings.changes)} rater label(s) or note(s) written to {raters.path}\n"
    if not plan.reports:
        return CommandResult(stdout=stdout)
    return CommandResult(stdout=stdout, problems=(
        *plan.reports, f"{len(plan.reports)} sheet row(s) reported above were not used"),
        exit_code=exit_code_for(problems=True))
