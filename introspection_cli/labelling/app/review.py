"""``judges label --review REPORT.json``: the rows an eval report disagrees with.

A row is in the review queue when the report's outcome for its conversation
disagrees with the row's *current* label (``gated`` agrees with
``not_applicable``; ``error`` outcomes say nothing and are left out). A row
whose ``snapshot_hash`` is not the one the report was made from is skipped
with a note: the report judged another conversation text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from introspection_cli import strictjson
from introspection_cli.errors import UsageError
from introspection_cli.labelling.calibration import CalibrationFile
from introspection_cli.localfiles import FileTooLarge, NotARegularFile, read_file

_REPORT_LIMIT = 1024 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class ReviewedRow:
    """What the report said about one row (shown beside it; never before ``--review``)."""

    outcome: str
    reasoning: str | None
    samples: tuple[str, ...]
    expected_then: str | None

    def as_json(self) -> dict[str, Any]:
        return {"outcome": self.outcome, "reasoning": self.reasoning,
                "samples": list(self.samples), "expected_then": self.expected_then}


@dataclass
class Review:
    """The review queue (file order), the report's view of each row, and the notes."""

    lines: list[int] = field(default_factory=list)
    rows: dict[int, ReviewedRow] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def load_report_rows(path: Path, judge: str) -> list[Mapping[str, Any]]:
    """The report's rows for ``judge``; :class:`UsageError` when it is not an eval report."""
    try:
        report = strictjson.loads(read_file(path, limit=_REPORT_LIMIT))
    except FileNotFoundError:
        raise UsageError(f"--review {path}: no such file") from None
    except (NotARegularFile, FileTooLarge, OSError, ValueError, RecursionError) as exc:
        raise UsageError(f"--review {path} cannot be read as an eval report ({exc}); pass a "
                         "file written by `introspection judges eval --output FILE`") from None
    judges = report.get("judges") if isinstance(report, dict) else None
    if not isinstance(judges, list):
        raise UsageError(f"--review {path} is not an eval report (no \"judges\" list); pass a "
                         "file written by `introspection judges eval --output FILE`")
    for entry in judges:
        if isinstance(entry, dict) and entry.get("name") == judge:
            rows = entry.get("rows")
            return [r for r in rows if isinstance(r, dict)] if isinstance(rows, list) else []
    raise UsageError(f"--review {path} has no results for judge {judge}")


def agrees(expected: str, outcome: str) -> bool:
    """Whether an outcome agrees with a label; ``gated`` agrees with ``not_applicable``."""
    return outcome == expected or (outcome == "gated" and expected == "not_applicable")


def build_review(report_rows: Sequence[Mapping[str, Any]],
                 calibration: CalibrationFile) -> Review:
    """Match report rows to the file's rows by conversation and keep the disagreements."""
    review = Review()
    by_id = calibration.by_conversation()
    stale: list[str] = []
    unhashed = missing = errors = 0
    for entry in report_rows:
        conversation_id, outcome = entry.get("conversation_id"), entry.get("outcome")
        line = by_id.get(conversation_id) if isinstance(conversation_id, str) else None
        if line is None or line.row is None:
            missing += 1
            continue
        recorded = entry.get("snapshot_hash")
        if not isinstance(recorded, str):
            unhashed += 1
            continue
        if recorded != line.row.snapshot_hash:
            stale.append(f"line {line.number}")
            continue
        if not isinstance(outcome, str) or outcome == "error":
            errors += 1
            continue
        if line.row.expected is None or agrees(line.row.expected, outcome):
            continue
        review.lines.append(line.number)
        review.rows[line.number] = ReviewedRow(
            outcome, entry.get("reasoning") if isinstance(entry.get("reasoning"), str) else None,
            tuple(s for s in entry.get("samples") or () if isinstance(s, str)),
            entry.get("expected") if isinstance(entry.get("expected"), str) else None)
    review.lines.sort()
    review.notes += _notes(stale, unhashed, missing, errors)
    return review


def _notes(stale: list[str], unhashed: int, missing: int, errors: int) -> list[str]:
    notes = []
    if stale:
        shown = ", ".join(stale[:10]) + (", ..." if len(stale) > 10 else "")
        notes.append(f"{len(stale)} row(s) skipped: the conversation changed since the report "
                     f"was made (snapshot_hash differs: {shown}); run eval again to review them")
    if unhashed:
        notes.append(f"{unhashed} report row(s) skipped: the report does not record which "
                     "conversation text it judged (no snapshot_hash); run eval again")
    if missing:
        notes.append(f"{missing} report row(s) skipped: their conversation is no longer a "
                     "usable row of the calibration file")
    if errors:
        notes.append(f"{errors} report row(s) with an error outcome left out (no verdict to "
                     "review)")
    return notes
