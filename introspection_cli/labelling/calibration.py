"""One judge's calibration file as read: each line's bytes and what the fixture rules say."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from introspection_cli.errors import DataError
from introspection_cli.fixture import (
    FixtureRow,
    Rejection,
    verify_calibration_content,
)
from introspection_cli.fixture import codes as fixture_codes
from introspection_cli.fixture.byterule import LineEdit, WrittenFile, file_identity, split_lines
from introspection_cli.localfiles import NotARegularFile, read_file

#: Codes that leave a row writable by the byte rule.
_WRITABLE = frozenset({fixture_codes.UNLABELLED})


@dataclass(frozen=True, slots=True)
class CalibrationLine:
    """One line: its bytes (without line ending), the trusted row, and every rejection."""

    number: int
    text: bytes
    row: FixtureRow | None
    rejections: tuple[Rejection, ...]

    @property
    def blocking(self) -> tuple[Rejection, ...]:
        """The rejections that make the row untrustworthy (all but "no label yet")."""
        return tuple(r for r in self.rejections if r.code not in _WRITABLE)

    @property
    def is_blank(self) -> bool:
        return all(r.code == fixture_codes.BLANK_LINE for r in self.rejections) \
            and bool(self.rejections)


@dataclass(frozen=True)
class CalibrationFile:
    """Every line of one calibration file, from one read of its bytes."""

    path: Path
    lines: tuple[CalibrationLine, ...]
    identity: tuple[int, int, int, int]
    content: bytes = field(default=b"", repr=False)  # the bytes the lines were read from

    def line(self, number: int) -> CalibrationLine:
        """Line ``number`` (1-based); :class:`DataError` when the file has no such line."""
        if not 1 <= number <= len(self.lines):
            raise DataError(f"{self.path} has no line {number} (it has {len(self.lines)} "
                            "lines)")
        return self.lines[number - 1]

    @property
    def rows(self) -> list[FixtureRow]:
        """The trusted rows (labelled or not), in file order."""
        return [line.row for line in self.lines if line.row is not None]

    @property
    def rejected(self) -> list[CalibrationLine]:
        """Lines that are neither trusted rows nor blank."""
        return [line for line in self.lines if line.row is None and not line.is_blank]

    def rejected_by_code(self) -> Mapping[str, int]:
        return Counter(r.code for line in self.rejected for r in line.blocking)

    def by_conversation(self) -> dict[str, CalibrationLine]:
        return {line.row.conversation_id: line for line in self.lines if line.row is not None}


def read_calibration(path: Path) -> CalibrationFile:
    """Read and verify ``path``; :class:`DataError` when it cannot be read."""
    try:
        identity = file_identity(path)
        content = read_file(path)
    except NotARegularFile as exc:
        raise DataError(f"{path} is {exc.kind}, not a calibration file") from None
    except OSError as exc:
        raise DataError(f"cannot read calibration file {path} ({exc.strerror})") from None
    return parse_calibration(path, content, identity)


def parse_calibration(path: Path, content: bytes,
                      identity: tuple[int, int, int, int]) -> CalibrationFile:
    """The :class:`CalibrationFile` of ``content`` (e.g. what a write just produced)."""
    texts = [text for text, _ in split_lines(content)]
    by_line = {result.line: result for result in verify_calibration_content(content)}
    lines: list[CalibrationLine] = []
    reported = 0  # the last line the verifier spoke for
    for number, text in enumerate(texts, start=1):
        result = by_line.get(number)
        if result is not None:
            reported = number
            lines.append(CalibrationLine(number, text, result.row, result.rejections))
        else:  # a line of a row spread over several lines, reported once on its first
            lines.append(CalibrationLine(number, text, None, (Rejection(
                number, fixture_codes.JSON, f"this line is part of the row spread over several "
                f"lines that starts on line {reported}; each row must be one line"),)))
    return CalibrationFile(path, tuple(lines), identity, content)


def after_write(path: Path, written: WrittenFile) -> CalibrationFile:
    """The file as a write left it, without reading it again."""
    return parse_calibration(path, written.content, written.identity)


def rejected_summary(calibration: CalibrationFile) -> str | None:
    """"3 rows rejected (fixture-hash-mismatch 2, fixture-json 1)", or None when there are none."""
    rejected = calibration.rejected
    if not rejected:
        return None
    counts = ", ".join(f"{code} {count}" for code, count
                       in sorted(calibration.rejected_by_code().items()))
    return (f"{calibration.path}: {len(rejected)} row(s) rejected ({counts}); they are left "
            f"unchanged: run `introspection check` to see why")



def after_edits(previous: CalibrationFile, written: WrittenFile,
                edits: Sequence[LineEdit]) -> CalibrationFile:
    """The file as a write left it: only the edited lines are verified again when the rest
    is still what ``previous`` read (the usual case); otherwise the whole file."""
    from introspection_cli.fixture import verify_fixture_line
    from introspection_cli.fixture.byterule import StaleLinesError, apply_edits

    try:
        unchanged_elsewhere = apply_edits(previous.content, edits) == written.content
    except StaleLinesError:
        unchanged_elsewhere = False
    if not unchanged_elsewhere:  # another writer changed the file too: verify it all
        return after_write(previous.path, written)
    lines = list(previous.lines)
    for edit in edits:
        result = verify_fixture_line(edit.new, edit.line)
        lines[edit.line - 1] = CalibrationLine(edit.line, edit.new, result.row,
                                               result.rejections)
    return CalibrationFile(previous.path, tuple(lines), written.identity, written.content)
