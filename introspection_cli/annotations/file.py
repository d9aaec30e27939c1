"""``judges/<name>.annotations.jsonl``: reading it, checking each line, writing changes.

One line per (conversation_id, snapshot_hash, rater). A rater who labels a row
again, or adds a note, *replaces* their line (the file holds each rater's
current label, not a history: version control keeps that); a new rater or
row is appended. Writes are made the way calibration rows are: under the lock
on ``judges/`` every writer of calibration files holds, by reading the file
again, refusing (:class:`StaleAnnotations`) when a line to change is no longer
the bytes that were read (never a lost update), and renaming a temporary file
with every other line byte for byte over it, keeping its mode and owner.

Every line is checked against ``schemas/annotation.schema.json``, and a key on
two lines is a problem too (``introspection check``: ``annotation-invalid``).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from introspection_cli.annotations.record import (
    SCHEMA_NAME,
    Annotation,
    Key,
    rater_problem,
)
from introspection_cli.errors import DataError, UsageError
from introspection_cli.recordfile import (
    LineProblem,
    RecordFileError,
    decode_line,
    read_bounded,
    schema_problem,
    split_records,
)

#: Far more than any team labels; a larger file is not read into memory.
MAX_ANNOTATIONS_BYTES = 64 << 20


class AnnotationsError(RecordFileError):
    """The annotations file cannot be read, or a line of it is not an annotation (exit 1)."""


class StaleAnnotations(DataError):
    """A line to change is no longer what was read; nothing was written."""


@dataclass(frozen=True)
class Annotations:
    """Every annotation of one file, from one read of its bytes (file order)."""

    path: Path
    annotations: tuple[Annotation, ...]
    #: key -> (line number, the line's bytes without its newline)
    lines: dict[Key, tuple[int, bytes]]
    content: bytes = b""
    by_key: dict[Key, Annotation] = field(default_factory=dict)

    def get(self, key: Key) -> Annotation | None:
        return self.by_key.get(key)

    def line_of(self, key: Key) -> bytes | None:
        """The bytes of ``key``'s line as read (what a change of it names as ``old``)."""
        found = self.lines.get(key)
        return None if found is None else found[1]


def parse_annotations(data: bytes) -> tuple[list[tuple[int, bytes, Annotation]],
                                            list[LineProblem]]:
    """Each annotation with its line number and bytes, and every line that is not one
    (a blank line, a key already on an earlier line, anything the schema refuses)."""
    found: list[tuple[int, bytes, Annotation]] = []
    problems: list[LineProblem] = []
    first_line: dict[Key, int] = {}
    for number, raw in enumerate(split_records(data), start=1):
        text = raw.rstrip(b"\r")
        if not text.strip():
            problems.append(LineProblem(number, "a blank line; every line is one annotation"))
            continue
        parsed = parse_line(text)
        if isinstance(parsed, str):
            problems.append(LineProblem(number, parsed))
            continue
        if parsed.key in first_line:
            problems.append(LineProblem(number, (
                f"rater {parsed.rater}'s label of conversation {parsed.conversation_id} (this "
                f"snapshot_hash) is also on line {first_line[parsed.key]}; the file holds one "
                "line per conversation, hash and rater")))
            continue
        first_line[parsed.key] = number
        found.append((number, text, parsed))
    return found, problems


def parse_line(line: bytes) -> Annotation | str:
    """The annotation on one line, or why it is not one."""
    data, problem = decode_line(line)
    if problem is not None:
        return problem
    if isinstance(data, dict) and isinstance(data.get("rater"), str):
        problem = rater_problem(data["rater"])  # in words, before the schema's pattern
        if problem is not None:
            return f"not an annotation: {problem}"
    problem = schema_problem(data, SCHEMA_NAME, "an annotation")
    return problem if problem is not None else Annotation.from_json(data)


def read_bytes(path: Path) -> bytes:
    """The file's bytes (b"" when there is none); bounded. Raises :class:`AnnotationsError`."""
    return read_bounded(path, MAX_ANNOTATIONS_BYTES, "an annotations file", AnnotationsError)


def annotations_of(path: Path, content: bytes) -> Annotations:
    """The :class:`Annotations` of ``content``; :class:`AnnotationsError` naming the first
    line that is not an annotation: nothing is decided on a file nobody can read whole."""
    found, problems = parse_annotations(content)
    if problems:
        raise AnnotationsError(path, problems[0].message + " (`introspection check` lists "
                               "every such line; fix or remove it)", problems[0].line)
    return Annotations(path, tuple(annotation for _, _, annotation in found),
                       {annotation.key: (number, text) for number, text, annotation in found},
                       content, {annotation.key: annotation for _, _, annotation in found})


def read_annotations(path: Path) -> Annotations:
    """Every annotation of the file (none when there is no file)."""
    return annotations_of(path, read_bytes(path))


@dataclass(frozen=True, slots=True)
class AnnotationChange:
    """Set ``key``'s line: from ``old`` (its bytes as read; None: no line) to ``new``
    (None: remove the line, as undo does for a first label)."""

    key: Key
    old: bytes | None
    new: Annotation | None

    def reverse(self) -> AnnotationChange:
        """The change that puts ``old`` back (undo); only for a change that was written."""
        restored = None if self.old is None else parse_line(self.old)
        assert not isinstance(restored, str)  # it was read as an annotation
        return AnnotationChange(self.key, None if self.new is None else self.new.line(),
                                restored)


def write_changes(path: Path, changes: Sequence[AnnotationChange]) -> Annotations:
    """Apply ``changes`` all together, or none of them; the file as written.

    Raises :class:`StaleAnnotations` when a line is no longer what was read,
    :class:`AnnotationsError` when the file holds a line that is not an annotation or
    cannot be written, :class:`UsageError` when it is not writable (mode 0444).
    """
    from introspection_cli.fsutil import atomic_write_bytes, directory_lock

    _check_writable(path)
    with directory_lock(path):
        content = read_bytes(path)
        current = annotations_of(path, content)
        new_content = _applied(current, changes)
        written = annotations_of(path, new_content)  # every line it would hold is one
        try:
            atomic_write_bytes(path, new_content, keep_owner=True)
        except OSError as exc:
            raise AnnotationsError(path, f"cannot write it ({exc.strerror or exc}); nothing "
                                   "was written") from None
    return written


def _applied(current: Annotations, changes: Sequence[AnnotationChange]) -> bytes:
    pieces = current.content.split(b"\n")
    ends_with_newline = pieces[-1] == b""
    if ends_with_newline:
        pieces.pop()
    if len({change.key for change in changes}) != len(changes):
        raise ValueError("two changes of one annotation in one write")
    stale = [change for change in changes
             if current.line_of(change.key) != change.old]
    if stale:
        conversation, _, rater = stale[0].key
        raise StaleAnnotations(f"{current.path}: rater {rater}'s line for conversation "
                               f"{conversation} changed on disk since it was read (another "
                               "program wrote the file); nothing was written")
    removed: set[int] = set()
    appended: list[bytes] = []
    for change in changes:
        found = current.lines.get(change.key)
        if found is None:
            if change.new is not None:
                appended.append(change.new.line())
            continue
        number = found[0]
        if change.new is None:
            removed.add(number)
        else:
            piece = pieces[number - 1]
            pieces[number - 1] = change.new.line() + piece[len(piece.rstrip(b"\r")):]
    kept = [piece for number, piece in enumerate(pieces, start=1) if number not in removed]
    lines = kept + appended
    return b"".join(line + b"\n" for line in lines) if (ends_with_newline or appended
                                                       or not current.content) \
        else b"\n".join(lines)


def _check_writable(path: Path) -> None:
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        if not os.access(path.parent, os.W_OK | os.X_OK):
            raise UsageError(f"{path}: the directory {path.parent} is not writable; nothing "
                             "was written") from None
        return
    except OSError as exc:
        raise UsageError(f"{path} cannot be used ({exc.strerror}); nothing was written") \
            from None
    if not stat.S_ISREG(mode):
        raise UsageError(f"{path} is not a regular file; nothing was written")
    if not os.access(path, os.W_OK):
        raise UsageError(f"{path} is not writable (mode {stat.S_IMODE(mode):04o}); nothing "
                         "was written. Make it writable (chmod u+w) to record labels in it")
