"""Appending rows to a calibration file without ever touching the rows already in it.

The new file is the old bytes, unchanged, followed by the new rows (in the
file's own line ending), written to a temp file and renamed over the old one:
a crash at any point leaves either the old file or the new one, never a mix.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from introspection_cli.errors import DataError, UsageError
from introspection_cli.fixture import line_conversation_id, parse_fixture_line, verify_fixture
from introspection_cli.fixture.target import (
    CALIBRATION_SUFFIX,
    NotWritable,
    locked_target,
    replace_file,
    writable_target,
)
from introspection_cli.localfiles import NotARegularFile, read_file

_IGNORED_ON_EXPORT = frozenset({"fixture-unlabelled"})


@dataclass(frozen=True, slots=True)
class ExistingFile:
    """A calibration file as read before exporting (``content`` is empty when it is new)."""

    path: Path
    exists: bool
    content: bytes
    conversation_ids: frozenset[str]
    row_count: int
    newline: bytes = b"\n"
    warnings: list[str] = field(default_factory=list)


def read_existing(path: Path) -> ExistingFile:
    """Read the file to append to (a missing file is fine: it will be created).

    Rows the fixture module rejects are kept as they are and reported as warnings.
    """
    if not path.name.endswith(CALIBRATION_SUFFIX):
        raise UsageError(
            f"--append-to {path}: a calibration file's name ends in {CALIBRATION_SUFFIX} "
            "(judges/<judge>.calibration.jsonl); use --output for other files"
        )
    try:
        target = writable_target(path)  # append to what a symlink points at, keeping the link
    except NotWritable as exc:
        raise UsageError(f"--append-to {exc.problem}; nothing was requested") from None
    try:
        content = read_file(target)
    except FileNotFoundError:
        return ExistingFile(path=target, exists=False, content=b"",
                            conversation_ids=frozenset(), row_count=0)
    except NotARegularFile as exc:
        raise UsageError(f"--append-to {path} is {exc.kind}, not a regular file; pass a "
                         f"calibration file (judges/<judge>{CALIBRATION_SUFFIX})") from None
    except OSError as exc:
        raise UsageError(f"--append-to {path}: cannot read it ({exc.strerror})") from None
    return _scan(target, content)


def _scan(path: Path, content: bytes) -> ExistingFile:
    ids: set[str] = set()
    warnings: list[str] = []
    rows = 0
    lines = content.split(b"\n")
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        rows += 1
        row, rejections = parse_fixture_line(line, number)
        if row is not None:
            rejections = rejections + verify_fixture(row, number)
        for conversation_id in _conversation_ids(line, row):
            if conversation_id in ids:
                warnings.append(f"{path}:{number}: conversation {conversation_id} "
                                "appears on more than one line")
            ids.add(conversation_id)
        for rejection in rejections:
            if rejection.code not in _IGNORED_ON_EXPORT:
                warnings.append(f"{path}:{number}: [{rejection.code}] {rejection.message} "
                                "(left unchanged; fix or remove it by hand)")
    newline = b"\r\n" if len(lines) > 1 and lines[0].endswith(b"\r") else b"\n"
    return ExistingFile(path=path, exists=True, content=content, conversation_ids=frozenset(ids),
                        row_count=rows, newline=newline, warnings=warnings)


def _conversation_ids(line: bytes, row: dict[str, object] | None) -> set[str]:
    """Every conversation a line names; each one counts as already present.

    The id ``check`` gives the line (:func:`line_conversation_id`, which also
    reads a line that does not parse, such as one with a repeated key), plus
    both ids of a row that parses. Re-exporting a conversation whose row is
    broken would make ``check`` report both lines as duplicates.
    """
    found: set[str] = set()
    named = line_conversation_id(line.rstrip(b"\r"))
    if named is not None:
        found.add(named)
    if row is not None:
        for section in ("source", "judge_input"):
            value = row.get(section)
            if isinstance(value, dict) and isinstance(value.get("conversation_id"), str):
                found.add(value["conversation_id"])
    return found


def appended_content(existing: ExistingFile, rows: list[bytes]) -> bytes:
    """The old bytes unchanged, a line break if the last line lacked one, then ``rows``."""
    if not rows:
        return existing.content
    newline = existing.newline
    prefix = existing.content
    if prefix and not prefix.endswith(b"\n"):
        prefix += newline
    return prefix + b"".join(row + newline for row in rows)


def write_appended(existing: ExistingFile, rows: list[bytes]) -> list[bytes]:
    """Atomically replace the file with its current bytes followed by ``rows``; returns
    the rows written.

    The re-read and the rename happen under an exclusive lock on the file's
    directory (the lock every writer of calibration rows holds), so nothing
    another writer did is lost: when the file changed since it was read (labels
    saved meanwhile, another export's rows), the rows are appended to what it
    holds now, byte for byte, and a row whose conversation is in it by now is
    left out. A file removed meanwhile is not recreated.
    """
    with locked_target(existing.path):
        return _compare_and_write(existing, rows)


def _compare_and_write(existing: ExistingFile, rows: list[bytes]) -> list[bytes]:
    try:
        current: bytes | None = read_file(existing.path)
    except FileNotFoundError:
        current = None
    except NotARegularFile as exc:
        raise DataError(f"{existing.path} changed while exporting (it is now {exc.kind}); "
                        "nothing was written") from None
    except OSError as exc:
        raise DataError(f"cannot re-read {existing.path} before writing ({exc.strerror})") from None
    if current is None and existing.exists:
        raise DataError(f"{existing.path} was removed while exporting; nothing was written. "
                        "Run the export again")
    if current is not None and current != existing.content:
        existing = _scan(existing.path, current)
        rows = [row for row in rows
                if line_conversation_id(row) not in existing.conversation_ids]
    replace_file(existing.path, appended_content(existing, rows))
    return rows
