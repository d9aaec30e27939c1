"""``judges label --to-csv`` and ``--from``: labelling in a spreadsheet.

The sheet has the columns ``line``, ``conversation_id``, ``split``,
``expected`` and ``transcript``. Reading one back matches rows by
``conversation_id`` (lines may have moved), and an empty cell changes nothing.
A label or split that differs from one the row already has is changed only
with ``overwrite``; otherwise it is reported, like an id not in the file.

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
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from introspection_cli.errors import DataError, UsageError
from introspection_cli.fixture import VERDICTS
from introspection_cli.fixture.byterule import LineEdit, RowNotWritable, plan_edit, write_edits
from introspection_cli.fsutil import atomic_write_text, check_output_target
from introspection_cli.labelling.calibration import CalibrationFile, CalibrationLine
from introspection_cli.labelling.result import CommandResult
from introspection_cli.labelling.setlabels import NO_SPLIT, parse_split
from introspection_cli.labelling.transcript import transcript_text
from introspection_cli.localfiles import FileTooLarge, NotARegularFile, read_file

COLUMNS = ("line", "conversation_id", "split", "expected", "transcript")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_ESCAPE = "'"
_SHEET_LIMIT = 64 * 1024 * 1024


def safe_cell(text: str) -> str:
    """``text`` as a spreadsheet will show it, never run it as a formula.

    A cell starting as a formula would, or with the escape itself, gets one more
    ``'`` in front: two texts never give the same cell, and :func:`read_cell` undoes it.
    """
    return _ESCAPE + text if text.startswith((*_FORMULA_START, _ESCAPE)) else text


def read_cell(text: str) -> str:
    """Undo :func:`safe_cell`: one leading ``'`` is removed."""
    return text.removeprefix(_ESCAPE)


def write_sheet(calibration: CalibrationFile, target: Path) -> CommandResult:
    """Write every trusted row of ``calibration`` to the CSV file ``target`` atomically."""
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
        writer.writerow([line.number, safe_cell(line.row.conversation_id),
                         line.row.split or "", line.row.expected or "",
                         safe_cell(transcript_text(line.row.judge_input.get("events") or []))])
        rows += 1
    try:
        atomic_write_text(target, buffer.getvalue())
    except OSError as exc:
        raise DataError(f"cannot write --to-csv {target} ({exc.strerror})") from None
    result = CommandResult(stdout=f"{rows} row(s) written to {target}: fill in the expected "
                                  f"column, then run `introspection judges label --from "
                                  f"{target}`\n")
    if calibration.rejected:
        result.problems.append(f"warning: {len(calibration.rejected)} rejected row(s) left out "
                               "of the sheet; `introspection check` says why")
    return result


@dataclass
class SheetPlan:
    """The edits a sheet asks for, and every sheet row that could not be used."""

    edits: list[LineEdit] = field(default_factory=list)
    reports: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class _SheetRow:
    number: int  # the record's row in a spreadsheet (the header is row 1)
    conversation_id: str
    expected: str | None
    split: str | None
    has_split: bool


def read_sheet(calibration: CalibrationFile, source: Path, *, overwrite: bool) -> SheetPlan:
    """Match the sheet's rows to ``calibration`` and plan the label and split changes."""
    plan = SheetPlan()
    by_id = {line.row.conversation_id: line for line in calibration.lines if line.row is not None}
    sheet_lines: dict[str, list[int]] = {}
    sheet_rows = list(_sheet_rows(source, plan, sheet_lines))
    for sheet_row in sheet_rows:
        where = f"{source} row {sheet_row.number}"
        others = [n for n in sheet_lines[sheet_row.conversation_id] if n != sheet_row.number]
        if others:  # which one is meant is anyone's guess
            plan.reports.append(f"{where}: conversation {sheet_row.conversation_id} is also on "
                                f"row(s) {', '.join(map(str, others))}; none of them "
                                "is used")
            continue
        line = by_id.get(sheet_row.conversation_id)
        if line is None:
            plan.reports.append(f"{where}: conversation {sheet_row.conversation_id} is not a "
                                f"usable row of {calibration.path}")
            continue
        values = _changes(line, sheet_row, overwrite, where, plan.reports)
        try:
            edit = plan_edit(line.number, line.text, values) if values else None
        except RowNotWritable as exc:
            plan.reports.append(f"{where}: {exc}")
            continue
        if edit is not None:
            plan.edits.append(edit)
    return plan


def _changes(line: CalibrationLine, sheet_row: _SheetRow, overwrite: bool, where: str,
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


def _sheet_rows(source: Path, plan: SheetPlan,
                sheet_lines: dict[str, list[int]]) -> Iterator[_SheetRow]:
    """The usable records of the sheet; every record's id goes into ``sheet_lines``."""
    for number, cells in _records(source):
        where = f"{source} row {number}"
        conversation_id = read_cell(cells.get("conversation_id", ""))
        if not conversation_id:
            if any(cells.values()):
                plan.reports.append(f"{where}: no conversation_id; the row is ignored")
            continue
        sheet_lines.setdefault(conversation_id, []).append(number)
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
        yield _SheetRow(number, conversation_id, expected, split, bool(split_text))


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


def apply_sheet(calibration: CalibrationFile, source: Path, *,
                overwrite: bool) -> CommandResult:
    """``--from``: write what the sheet asks for in one write; exit 1 if anything was reported."""
    plan = read_sheet(calibration, source, overwrite=overwrite)
    if plan.edits:
        write_edits(calibration.path, plan.edits)
    result = CommandResult(stdout=f"{len(plan.edits)} row(s) written to {calibration.path}\n",
                           problems=plan.reports)
    if plan.reports:
        result.problems.append(f"{len(plan.reports)} sheet row(s) reported above were not used")
        result.exit_code = 1
    return result
