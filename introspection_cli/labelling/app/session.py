"""One labelling session: the queue, each row as the page shows it, writes and undo.

No HTTP here: :mod:`.server` turns requests into these calls. Every write goes
through the byte rule (:func:`~introspection_cli.fixture.byterule.write_edits`)
at once, under the session's lock; a refused write (the line changed on disk)
raises :class:`WriteRefused` carrying the row as it is now.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from introspection_cli.errors import DataError
from introspection_cli.evaluation.gate import GateTimeout, evaluate_gate
from introspection_cli.fixture.byterule import (
    LineEdit,
    RowNotWritable,
    StaleLinesError,
    plan_edit,
    write_edits,
)
from introspection_cli.labelling.app.review import Review
from introspection_cli.labelling.calibration import (
    CalibrationFile,
    CalibrationLine,
    after_edits,
    read_calibration,
)
from introspection_cli.recipe.model import Judge

QueueMode = Literal["unlabelled", "all", "review"]
#: A rejected line is shown as raw text up to this many characters.
_RAW_LIMIT = 20_000


class WriteRefused(Exception):
    """A write was not made; ``row`` is the row as it is on disk now."""

    def __init__(self, message: str, row: dict[str, Any] | None) -> None:
        super().__init__(message)
        self.message = message
        self.row = row


@dataclass(frozen=True, slots=True)
class _GateView:
    applies: bool
    matches: tuple[int, ...]
    error: str | None


def row_version(text: bytes) -> str:
    """Names one state of a line; a write must name the state the page showed."""
    return hashlib.sha256(text).hexdigest()[:32]


class LabelSession:
    """The state behind the page. Thread-safe: every method takes the session's lock."""

    def __init__(self, judge: Judge, mode: QueueMode, review: Review | None = None) -> None:
        self.judge = judge
        self.mode = mode
        self.review = review
        self.writes = 0
        self._lock = threading.RLock()
        self._closed = False
        self._summary_of: CalibrationFile | None = None
        self._summary_value: tuple[dict[str, int], list[int] | None] = ({}, None)
        self._file = read_calibration(judge.calibration_path)
        self._undo: list[tuple[str, list[LineEdit]]] = []
        self._gates: dict[str, _GateView] = {}
        self.queue = self._initial_queue()

    def close(self) -> None:
        """Wait for a write in progress (every write holds the session lock); refuse new ones."""
        with self._lock:
            self._closed = True

    # -- reading -------------------------------------------------------------------------

    def _initial_queue(self) -> list[int]:
        if self.mode == "review":
            return list(self.review.lines) if self.review else []
        return [line.number for line in self._file.lines if not line.is_blank
                and (self.mode == "all" or line.row is None or line.row.expected is None)]

    def _current(self) -> CalibrationFile:
        """The file as it is now (read again when another program changed it)."""
        from introspection_cli.fixture.byterule import file_identity

        try:
            identity = file_identity(self._file.path)
        except OSError as exc:
            raise DataError(f"{self._file.path} cannot be read ({exc.strerror}); was it moved?"
                            ) from None
        if identity != self._file.identity:
            self._file = read_calibration(self._file.path)
        return self._file

    def overview(self) -> dict[str, Any]:
        """Everything the page needs once: the judge, the queue, notes, progress."""
        with self._lock:
            current = self._current()
            return {
                "judge": {"name": self.judge.name, "description": self.judge.description,
                          "instructions": self.judge.instructions,
                          "gated": self.judge.gate is not None},
                "mode": self.mode, "queue": self.queue, "path": str(current.path),
                "notes": list(self.review.notes) if self.review else [],
                "progress": self._progress(current),
                "gate_misses": (len(self._gate_misses(current))
                                if self.judge.gate is not None else None),
            }

    def _progress(self, current: CalibrationFile) -> dict[str, int]:
        return dict(self._summary(current)[0])

    def _summary(self, current: CalibrationFile) -> tuple[dict[str, int], list[int] | None]:
        """(progress, gate misses) of ``current``, worked out once per state of the file:
        every row shown asks for them, and a large file has many lines."""
        if self._summary_of is not current:
            rows = [current.lines[n - 1].row for n in self.queue if n <= len(current.lines)]
            trusted = [row for row in rows if row is not None]
            progress = {"labelled": sum(row.expected is not None for row in trusted),
                        "total": len(trusted)}
            misses = self._find_gate_misses(current) if self.judge.gate is not None else None
            self._summary_of, self._summary_value = current, (progress, misses)
        return self._summary_value

    def row(self, number: int) -> dict[str, Any]:
        """Line ``number`` as the page shows it."""
        with self._lock:
            return self._row(self._current(), number)

    def _row(self, current: CalibrationFile, number: int) -> dict[str, Any]:
        line = current.line(number)
        payload: dict[str, Any] = {
            "line": number, "version": row_version(line.text),
            "writable": line.row is not None,
            "rejections": [{"code": r.code, "message": r.message} for r in line.blocking],
            "progress": self._progress(current),
            "gate_misses": (len(self._gate_misses(current))
                            if self.judge.gate is not None else None),
            "review": (self.review.rows[number].as_json()
                       if self.review and number in self.review.rows else None),
        }
        if line.row is not None:
            source = line.row.record.get("source", {})
            payload.update(conversation_id=line.row.conversation_id,
                           exported_at=source.get("exported_at"), expected=line.row.expected,
                           split=line.row.split, events=line.row.judge_input.get("events"),
                           gate=self._gate_json(line))
        else:
            payload.update(_rejected_view(line))
        return payload

    def _gate_json(self, line: CalibrationLine) -> dict[str, Any] | None:
        if self.judge.gate is None or line.row is None:
            return None
        view = self._gate(line)
        return {"applies": view.applies, "matches": list(view.matches), "error": view.error}

    def _gate(self, line: CalibrationLine) -> _GateView:
        assert line.row is not None
        key = line.row.snapshot_hash  # the gate sees only judge_input, which this hashes
        view = self._gates.get(key)
        if view is None:
            events = line.row.judge_input.get("events")
            try:
                result = evaluate_gate(self.judge.gate, events if isinstance(events, list) else [])
                view = _GateView(result.applies,
                                 tuple(sorted({m.event_index for m in result.matches})), None)
            except GateTimeout as exc:
                view = _GateView(False, (), str(exc))
            self._gates[key] = view
        return view

    def _gate_misses(self, current: CalibrationFile) -> list[int]:
        return list(self._summary(current)[1] or [])

    def _find_gate_misses(self, current: CalibrationFile) -> list[int]:
        """Unlabelled trusted rows whose gate does not match (and did not time out)."""
        misses = []
        for line in current.lines:
            if line.row is None or line.row.expected is not None:
                continue
            view = self._gate(line)
            if not view.applies and view.error is None:
                misses.append(line.number)
        return misses

    # -- writing -------------------------------------------------------------------------

    def label(self, number: int, version: str, values: Mapping[str, str | None]) -> dict[str, Any]:
        """Write ``values`` to line ``number``, which the page showed as ``version``."""
        with self._lock:
            current = self._current()
            line = current.line(number)
            if row_version(line.text) != version:
                raise WriteRefused(_CHANGED.format(line=number), self._row(current, number))
            try:
                edit = plan_edit(number, line.text, values)
            except RowNotWritable as exc:
                raise WriteRefused(f"Nothing was saved: {exc}", self._row(current, number)) \
                    from None
            described = ", ".join(f"{k} {v or 'none'}" for k, v in values.items())
            if edit is None:
                return self._saved(current, number, f"Line {number} already has {described}.")
            self._write([edit], f"line {number}: {described}")
            return self._saved(self._file, number, f"Saved line {number}: {described}.")

    def label_gate_misses(self, expected_count: int) -> dict[str, Any]:
        """Label every unlabelled gate miss ``not_applicable`` in one write (one undo step)."""
        with self._lock:
            if self.judge.gate is None:
                raise WriteRefused("This judge has no gate.", None)
            current = self._current()
            edits = [edit for number in self._gate_misses(current)
                     if (edit := plan_edit(number, current.line(number).text,
                                           {"expected": "not_applicable"})) is not None]
            if len(edits) != expected_count:
                raise WriteRefused(f"The file changed: there are now {len(edits)} unlabelled "
                                   "gate misses. Nothing was saved; check the count and "
                                   "confirm again.", None)
            if edits:
                self._write(edits, f"{len(edits)} gate misses: expected not_applicable")
            return {"message": f"Saved: {len(edits)} gate misses labelled not_applicable "
                               "(u undoes this).", "lines": [e.line for e in edits],
                    "progress": self._progress(self._file),
                    "gate_misses": len(self._gate_misses(self._file))}

    def undo(self) -> dict[str, Any]:
        """Put back the lines the last write of this session changed, if still unchanged."""
        with self._lock:
            if not self._undo:
                raise WriteRefused("Nothing to undo in this session.", None)
            what, edits = self._undo[-1]
            reverse = [LineEdit(e.line, e.new, e.old) for e in edits]
            if self._closed:
                raise WriteRefused("The server is stopping; nothing was changed.", None)
            try:
                written = write_edits(self._file.path, reverse)
            except StaleLinesError as exc:
                self._current()
                raise WriteRefused(f"Cannot undo {what}: line(s) "
                                   f"{', '.join(map(str, exc.lines))} changed on disk since. "
                                   "Nothing was changed.", None) from None
            self._undo.pop()
            self.writes += 1
            self._file = after_edits(self._file, written, reverse)
            first = min(e.line for e in reverse)
            return self._saved(self._file, first, f"Undone: {what}.")

    def _write(self, edits: Sequence[LineEdit], what: str) -> None:
        if self._closed:
            raise WriteRefused("The server is stopping; nothing was saved.", None)
        try:
            written = write_edits(self._file.path, edits)
        except StaleLinesError:
            current = read_calibration(self._file.path)
            self._file = current
            number = edits[0].line
            row = self._row(current, number) if number <= len(current.lines) else None
            raise WriteRefused(_CHANGED.format(line=number), row) from None
        except RowNotWritable as exc:
            raise WriteRefused(f"Nothing was saved: {exc}", None) from None
        self._file = after_edits(self._file, written, edits)
        self._undo.append((what, list(edits)))
        self.writes += 1

    def _saved(self, current: CalibrationFile, number: int, message: str) -> dict[str, Any]:
        return {"message": message, "row": self._row(current, number)}


_CHANGED = ("Line {line} changed on disk since this page showed it (another program wrote "
            "the file). Nothing was saved; the row is shown again as it is now.")


def _rejected_view(line: CalibrationLine) -> dict[str, Any]:
    """What can be shown of a rejected line: its events if it parses, else its raw text."""
    view: dict[str, Any] = {"conversation_id": None, "exported_at": None, "expected": None,
                            "split": None, "events": None, "gate": None,
                            "raw": line.text[:_RAW_LIMIT].decode("utf-8", "replace")}
    try:
        parsed = json.loads(line.text)
    except (ValueError, RecursionError):
        return view
    if isinstance(parsed, dict):
        judge_input = parsed.get("judge_input")
        events = judge_input.get("events") if isinstance(judge_input, dict) else None
        if isinstance(events, list):
            view["events"] = events
        source = parsed.get("source")
        if isinstance(source, dict) and isinstance(source.get("conversation_id"), str):
            view["conversation_id"] = source["conversation_id"]
    return view
