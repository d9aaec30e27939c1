"""``judges label --set LINE=LABEL[:SPLIT]``: label rows from the command line."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from introspection_cli.errors import CommandResult, UsageError
from introspection_cli.fixture import SPLITS, VERDICTS
from introspection_cli.fixture.byterule import LineEdit, RowNotWritable, plan_edit, write_edits
from introspection_cli.labelling.calibration import CalibrationFile, read_calibration

#: How a split is cleared on the command line and in a sheet.
NO_SPLIT = "none"


@dataclass(frozen=True, slots=True)
class Assignment:
    """Set ``expected`` on line ``line``, and ``split`` too when ``set_split``."""

    line: int
    expected: str
    split: str | None = None
    set_split: bool = False

    def values(self) -> dict[str, str | None]:
        values: dict[str, str | None] = {"expected": self.expected}
        if self.set_split:
            values["split"] = self.split
        return values


def parse_split(text: str, *, where: str) -> str | None:
    """``train``/``dev``/``test``, or ``none`` for no split; :class:`UsageError` otherwise."""
    if text == NO_SPLIT:
        return None
    if text not in SPLITS:
        raise UsageError(f"{where}: unknown split {text!r}; use train, dev, test or {NO_SPLIT}")
    return text


def parse_assignment(text: str) -> Assignment:
    """``12=pass`` or ``12=fail:dev`` (``:none`` clears the split)."""
    where = f"--set {text}"
    line_text, equals, value = text.partition("=")
    if not equals or not line_text.strip().isdigit() or int(line_text) < 1:
        raise UsageError(f"{where}: write LINE=LABEL[:SPLIT], e.g. --set 12=pass:dev")
    label, colon, split = value.partition(":")
    if label not in VERDICTS:
        raise UsageError(f"{where}: unknown label {label!r}; use pass, fail or not_applicable")
    if not colon:
        return Assignment(int(line_text), label)
    return Assignment(int(line_text), label, parse_split(split, where=where), set_split=True)


def plan_assignments(calibration: CalibrationFile,
                     assignments: Sequence[Assignment]) -> list[LineEdit]:
    """The edits for ``assignments`` (a line named twice: the last one counts)."""
    last = {assignment.line: assignment for assignment in assignments}
    edits = []
    for number, assignment in sorted(last.items()):
        if number > len(calibration.lines):
            raise UsageError(f"--set {number}=...: {calibration.path} has only "
                             f"{len(calibration.lines)} line(s)")
        line = calibration.line(number)
        try:
            edit = plan_edit(number, line.text, assignment.values())
        except RowNotWritable as exc:
            raise RowNotWritable(f"{calibration.path}: {exc}; nothing was written") from None
        if edit is not None:
            edits.append(edit)
    return edits


def run_set(path: Path, assignments: Sequence[Assignment]) -> CommandResult:
    """Write every assignment to the calibration file at ``path`` in one write, or none."""
    calibration = read_calibration(path)
    edits = plan_assignments(calibration, assignments)
    if edits:
        write_edits(path, edits)
    changed = {edit.line for edit in edits}
    described = [f"line {a.line}: {_describe(a)}" for a in
                 {a.line: a for a in assignments}.values() if a.line in changed]
    unchanged = len({a.line for a in assignments}) - len(changed)
    summary = f"{len(edits)} row(s) written to {path}"
    if unchanged:
        summary += f"; {unchanged} already had those values"
    return CommandResult(stdout="\n".join([*described, summary]) + "\n")


def _describe(assignment: Assignment) -> str:
    split = f", split {assignment.split or NO_SPLIT}" if assignment.set_split else ""
    return f"expected {assignment.expected}{split}"
