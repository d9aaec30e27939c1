"""One labelling session: the queue of conversations, each as the page shows it, writes, undo.

No HTTP here: :mod:`.server` turns requests into these calls. A session labels
one judge or several: each conversation (:mod:`.items`) is shown once with a
label row per judge, and every write goes to that judge's calibration file
through the byte rule (:func:`~introspection_cli.fixture.byterule.write_edits`)
at once, under the session's lock; a refused write (the line changed on disk)
raises :class:`WriteRefused` carrying the conversation as it is now.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from introspection_cli.annotations.file import AnnotationsError, StaleAnnotations
from introspection_cli.errors import DataError, UsageError
from introspection_cli.fixture.byterule import (
    LineEdit,
    RowNotWritable,
    StaleLinesError,
    plan_edit,
)
from introspection_cli.labelling.app import views
from introspection_cli.labelling.app.blinds import (
    NO_RATER,
    Blinds,
    gate_misses,
    is_done,
    plan_labels,
)
from introspection_cli.labelling.app.items import Item, match_items
from introspection_cli.labelling.app.judgefile import JudgeFile, identity_of, row_version
from introspection_cli.labelling.app.progress import Summary, summarize
from introspection_cli.labelling.app.review import Review
from introspection_cli.labelling.app.writes import Done, LabelWrite, NoteWrite, WriteRefused
from introspection_cli.labelling.calibration import CalibrationLine
from introspection_cli.labelling.rating import RatingPlan, RatingRefused
from introspection_cli.recipe.model import Judge

QueueMode = Literal["unlabelled", "all", "review", "adjudicate"]


class LabelSession:
    """The state behind the page. Thread-safe: every method takes the session's lock."""

    def __init__(self, judges: Sequence[Judge], mode: QueueMode,
                 reviews: Mapping[str, Review] | None = None,
                 blinds: Blinds = NO_RATER) -> None:
        self.mode = mode
        self.blinds = blinds
        self.reviews = dict(reviews or {})
        self.writes = 0
        self._lock = threading.RLock()
        self._closed = False
        self._files = {judge.name: JudgeFile(judge) for judge in judges}
        self.items = match_items([(name, jf.file) for name, jf in self._files.items()])
        self._key_of = {(name, number): item.key for item in self.items
                        for name, number in item.lines.items()}
        self._key_of_identity = {item.identity: item.key for item in self.items
                                 if item.identity is not None}
        self._undo: list[Done] = []
        self._summary_of: tuple[object, ...] | None = None  # the files it was worked out for
        self._summary_value = Summary()
        self.queue: list[int] = []
        self.start_queue()

    def start_queue(self) -> None:
        """The queue as the session starts it (again, once reviews are added)."""
        with self._lock:
            self._set_queue(self._initial_queue())

    @property
    def files(self) -> list[JudgeFile]:
        """One per judge, in the order the judges were named."""
        return list(self._files.values())

    @property
    def notes(self) -> list[str]:
        several = len(self._files) > 1
        return [f"judge {name}: {note}" if several else note
                for name, review in self.reviews.items() for note in review.notes]

    def close(self) -> None:
        """Wait for a write in progress (every write holds the session lock); refuse new ones."""
        with self._lock:
            self._closed = True

    # -- reading -------------------------------------------------------------------------

    def _initial_queue(self) -> list[int]:
        if self.mode == "review":
            return [item.key for item in self.items
                    if any(number in self.reviews[name].lines
                           for name, number in item.lines.items() if name in self.reviews)]
        if self.mode == "all":
            return [item.key for item in self.items]
        return [item.key for item in self.items if self._needs_work(item)]

    def _needs_work(self, item: Item) -> bool:
        """Some judge's row of it is unlabelled (by the rater, if any), in conflict when
        adjudicating, or rejected (shown, read-only; never a conflict)."""
        return any(self._left(jf, line) for jf in self.files
                   if (line := self._line_of(jf, item)) is not None)

    def _left(self, jf: JudgeFile, line: CalibrationLine) -> bool:
        if line.row is None:
            return not self.blinds.adjudicate
        return not is_done(jf, line, self.blinds)

    def _line_of(self, jf: JudgeFile, item: Item) -> CalibrationLine | None:
        """The line holding ``item`` in ``jf``'s file now; None when the file lacks it."""
        number = item.lines.get(jf.name)
        if number is None:
            return None
        if item.identity is not None:
            located = jf.locate(item.identity)
            if located is not None:
                return located
        current = jf.file  # rejected from the start, or edited on disk since: as it is
        if number <= len(current.lines) and current.lines[number - 1].row is None \
                and not current.lines[number - 1].is_blank:
            return current.lines[number - 1]
        return None

    def _refresh(self) -> None:
        """Every file as it is now: once per request, then looked up as it is."""
        for jf in self.files:
            jf.refresh()

    def overview(self) -> dict[str, Any]:
        """Everything the page needs once: the judges, the queue, notes, progress, what is left."""
        with self._lock:
            self._refresh()
            summary = self._summary()
            return {
                "judges": [views.judge_json(jf) for jf in self.files],
                "mode": self.mode, "queue": list(self.queue), "notes": self.notes,
                "rater": self.blinds.rater, "adjudicate": self.blinds.adjudicate,
                "progress": summary.progress, "gate_misses": self._gate_misses(),
                "remaining": views.remaining_json(summary.remaining),
            }

    def item(self, key: int) -> dict[str, Any]:
        """Conversation ``key`` (1-based) as the page shows it."""
        with self._lock:
            if not 1 <= key <= len(self.items):
                raise DataError(f"there is no conversation {key} in this session (it has "
                                f"{len(self.items)})")
            self._refresh()
            return self._item(self.items[key - 1])

    def _item(self, item: Item) -> dict[str, Any]:
        lines = {jf.name: self._line_of(jf, item) for jf in self.files}
        labels = [views.label_json(jf, item, lines[jf.name], self.reviews.get(jf.name),
                                   self.blinds) for jf in self.files]
        return {"item": item.key, **views.conversation_json(lines.values()), "labels": labels,
                "progress": self._summary().progress, "gate_misses": self._gate_misses()}

    def _gate_misses(self) -> dict[str, int | None]:
        return {jf.name: len(gate_misses(jf, self.blinds))
                if jf.gated and not self.blinds.adjudicate else None for jf in self.files}

    def _set_queue(self, keys: list[int]) -> None:
        self.queue = keys
        self._summary_of = None

    def _summary(self) -> Summary:
        """Progress per judge and the unlabelled rows of the queue, once per state of the
        files and the queue: every conversation shown asks for them."""
        files = tuple(state for jf in self.files for state in (jf.file, jf.annotations))
        if self._summary_of is None or any(
                now is not then for now, then in zip(files, self._summary_of, strict=True)):
            self._summary_value = self._summarize()
            self._summary_of = files
        return self._summary_value

    def _summarize(self) -> Summary:
        return summarize(self.files, [self.items[key - 1] for key in self.queue],
                         self._line_of, self._left,
                         lambda jf, line: is_done(jf, line, self.blinds))

    # -- writing -------------------------------------------------------------------------

    def label(self, write: LabelWrite) -> dict[str, Any]:
        """Write ``write.values`` to the judge's line, shown to the page as ``write.version``
        (a label under a rater or an adjudication: :meth:`_rate`)."""
        with self._lock:
            jf = self._file(write.judge)
            self._refresh()
            line = self._shown(jf, write.line, write.version)
            if self.blinds.rates and "expected" in write.values:
                if set(write.values) != {"expected"} or write.values["expected"] is None:
                    raise ValueError("a rater's label is pass, fail or not_applicable alone")
                return self._rate(jf, line, write.values["expected"], write.note)
            if write.note is not None:
                raise ValueError("a note is kept per rater: run with --rater NAME")
            where = self._where(jf, write.line)
            try:
                edit = plan_edit(write.line, line.text, write.values)
            except RowNotWritable as exc:
                raise WriteRefused(f"Nothing was saved: {exc}", self._item_at(jf, line)) \
                    from None
            described = ", ".join(f"{k} {v or 'none'}" for k, v in write.values.items())
            if edit is None:
                return self._saved(jf, line, f"{_capital(where)} already has {described}.")
            self._write(jf, (edit,))
            self._undo.append(Done(jf.name, f"{where}: {described}", (edit,)))
            return self._saved(jf, jf.file.line(write.line), f"Saved {where}: {described}.")

    def note(self, write: NoteWrite) -> dict[str, Any]:
        """Save the rater's (or the adjudication's) note on a line they labelled."""
        with self._lock:
            if not self.blinds.rates:
                raise ValueError("a note is kept per rater: run with --rater NAME")
            jf = self._file(write.judge)
            self._refresh()
            line = self._shown(jf, write.line, write.version)
            return self._rate(jf, line, None, write.note)

    def _shown(self, jf: JudgeFile, number: int, version: str) -> CalibrationLine:
        """Line ``number`` as it is now; :class:`WriteRefused` unless the page showed it so."""
        line = jf.file.line(number)
        if row_version(line.text) != version:
            raise WriteRefused(_CHANGED.format(where=_capital(self._where(jf, number))),
                               self._item_at(jf, line))
        return line

    def _rate(self, jf: JudgeFile, line: CalibrationLine, label: str | None,
              note: str | None) -> dict[str, Any]:
        """A label (or, with ``label`` None, a note) of the session's rater."""
        where = self._where(jf, line.number)
        try:
            plan = plan_labels(jf, self.blinds, [line.number], label, note, note is not None)
        except (RowNotWritable, RatingRefused) as exc:
            raise WriteRefused(f"Nothing was saved: {exc}", self._item_at(jf, line)) from None
        said = "the note" if label is None else (
            f"adjudicated {label}" if self.blinds.adjudicate else f"your label {label}") + (
            ", with the note" if label is not None and note else "")
        if plan.empty:
            return self._saved(jf, line, f"{_capital(where)} already has {said}.")
        self._write_rating(jf, plan)
        self._undo.append(Done(jf.name, f"{where}: {said}", (), plan=plan,
                                lines=(line.number,)))
        return self._saved(jf, jf.file.line(line.number), f"Saved {where}: {said}.")

    def label_gate_misses(self, judge: str, expected_count: int) -> dict[str, Any]:
        """Label every unlabelled gate miss of ``judge`` ``not_applicable`` in one write (one
        undo step); in the default queue, the conversations that leave nothing to label
        leave the queue."""
        with self._lock:
            jf = self._file(judge)
            if not jf.gated or self.blinds.adjudicate:
                raise WriteRefused(f"Judge {judge} has no gate." if not jf.gated else
                                   "Adjudication settles conflicts one at a time.", None)
            self._refresh()
            lines = gate_misses(jf, self.blinds)
            if len(lines) != expected_count:
                raise WriteRefused(f"The file changed: there are now {len(lines)} unlabelled "
                                   "gate misses. Nothing was saved; check the count and "
                                   "confirm again.", None)
            of = f" of {judge}" if len(self._files) > 1 else ""
            left: tuple[int, ...] = ()
            if lines:
                done = self._label_misses(jf, lines)
                left = self._leave_queue(jf, lines)
                self._undo.append(Done(jf.name, f"{len(lines)} gate misses{of}: expected "
                                        "not_applicable", done.edits, left, done.plan,
                                        tuple(lines)))
            gone = f"; {len(left)} left the queue" if left else ""
            return {"message": f"Saved: {len(lines)} gate misses{of} labelled not_applicable"
                               f"{gone} (u undoes this).", "lines": lines,
                    "queue": list(self.queue), "progress": self._summary().progress,
                    "gate_misses": self._gate_misses()}

    def _label_misses(self, jf: JudgeFile, lines: list[int]) -> Done:
        """Write ``not_applicable`` on ``lines``: what undo needs of it."""
        if self.blinds.rates:
            try:
                plan = plan_labels(jf, self.blinds, lines, "not_applicable")
            except (RowNotWritable, RatingRefused) as exc:
                raise WriteRefused(f"Nothing was saved: {exc}", None) from None
            self._write_rating(jf, plan)
            return Done(jf.name, "", (), plan=plan)
        current = jf.file
        edits = tuple(edit for number in lines
                      if (edit := plan_edit(number, current.line(number).text,
                                            {"expected": "not_applicable"})) is not None)
        self._write(jf, edits)
        return Done(jf.name, "", edits)

    def _leave_queue(self, jf: JudgeFile, lines: Sequence[int]) -> tuple[int, ...]:
        """Take out of the default queue the written conversations with nothing left to label."""
        if self.mode != "unlabelled":
            return ()
        touched = {self._key_at(jf, jf.file.line(number)) for number in lines}
        left = tuple(key for key in self.queue if key in touched
                     and not self._needs_work(self.items[key - 1]))
        self._set_queue([key for key in self.queue if key not in left])
        return left

    def undo(self) -> dict[str, Any]:
        """Put back the lines the last write of this session changed, if still unchanged."""
        with self._lock:
            if not self._undo:
                raise WriteRefused("Nothing to undo in this session.", None)
            done = self._undo[-1]
            jf = self._files[done.judge]
            self._refresh()
            if self._closed:
                raise WriteRefused("The server is stopping; nothing was changed.", None)
            try:
                if done.plan is not None:
                    jf.write_rating(done.plan.reverse())
                else:
                    jf.write(tuple(LineEdit(e.line, e.new, e.old) for e in done.edits))
            except (StaleLinesError, StaleAnnotations) as exc:
                jf.reread()
                lines = getattr(exc, "lines", done.lines)
                raise WriteRefused(f"Cannot undo {done.what}: line(s) "
                                   f"{', '.join(map(str, lines))} changed on disk since. "
                                   "Nothing was changed.", None) from None
            self._undo.pop()
            self.writes += 1
            if done.left_queue:
                back = set(self.queue) | set(done.left_queue)
                self._set_queue([item.key for item in self.items if item.key in back])
            first = jf.file.line(min([e.line for e in done.edits] + list(done.lines)))
            return {**self._saved(jf, first, f"Undone: {done.what}."), "queue": list(self.queue)}

    def _write_rating(self, jf: JudgeFile, plan: RatingPlan) -> None:
        """Write a rater's plan to both files; the caller records what undo needs."""
        if self._closed:
            raise WriteRefused("The server is stopping; nothing was saved.", None)
        try:
            jf.write_rating(plan)
        except StaleLinesError:
            jf.reread()
            number = plan.edits[0].line
            current = jf.file
            item = self._item_at(jf, current.lines[number - 1]) \
                if number <= len(current.lines) else None
            raise WriteRefused(_CHANGED.format(where=_capital(self._where(jf, number))),
                               item) from None
        except (StaleAnnotations, AnnotationsError, UsageError, RowNotWritable) as exc:
            raise WriteRefused(f"Nothing was saved: {exc}", None) from None
        self.writes += 1

    def _write(self, jf: JudgeFile, edits: Sequence[LineEdit]) -> None:
        """Write ``edits`` to ``jf``'s file; the caller records what undo needs."""
        if self._closed:
            raise WriteRefused("The server is stopping; nothing was saved.", None)
        try:
            jf.write(edits)
        except StaleLinesError:
            jf.reread()
            number = edits[0].line
            current = jf.file
            item = self._item_at(jf, current.lines[number - 1]) \
                if number <= len(current.lines) else None
            raise WriteRefused(_CHANGED.format(where=_capital(self._where(jf, number))),
                               item) from None
        except RowNotWritable as exc:
            raise WriteRefused(f"Nothing was saved: {exc}", None) from None
        self.writes += 1

    def _file(self, judge: str) -> JudgeFile:
        jf = self._files.get(judge)
        if jf is None:
            raise DataError(f"judge {judge} is not labelled in this session")
        return jf

    def _where(self, jf: JudgeFile, number: int) -> str:
        return f"line {number}" + (f" of {jf.name}" if len(self._files) > 1 else "")

    def _key_at(self, jf: JudgeFile, line: CalibrationLine) -> int | None:
        identity = identity_of(line)
        if identity is not None and identity in self._key_of_identity:
            return self._key_of_identity[identity]
        return self._key_of.get((jf.name, line.number))

    def _item_at(self, jf: JudgeFile, line: CalibrationLine) -> dict[str, Any] | None:
        key = self._key_at(jf, line)
        return self._item(self.items[key - 1]) if key is not None else None

    def _saved(self, jf: JudgeFile, line: CalibrationLine, message: str) -> dict[str, Any]:
        return {"message": message, "item": self._item_at(jf, line)}


_CHANGED = ("{where} changed on disk since this page showed it (another program wrote "
            "the file). Nothing was saved; the row is shown again as it is now.")


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]
