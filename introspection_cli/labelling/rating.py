"""A rater's label: what it writes to the annotations file, and to ``expected``.

Every label given under ``--rater NAME`` (the browser app, a sheet with a
``rater`` column) is recorded as that rater's annotation of the row, with its
note. ``expected``, the label eval and certify use, follows these rules:

* a row without ``expected`` gets the rater's label (the first rater's label,
  as without raters);
* a rater relabelling a row nobody else labelled, whose ``expected`` is their
  own earlier label, changes it (a rater changing their mind);
* otherwise ``expected`` is left alone: raters who disagree, or a rater who
  disagrees with a label given before raters, put the row in conflict, and
  ``judges label --adjudicate`` settles it;
* an adjudication (rater ``adjudicated``) always writes ``expected``.

A row already adjudicated keeps its ``expected`` whatever later raters say.
Nothing here serves a page: :func:`plan_ratings` plans, :func:`apply_plan` writes
the calibration edits by the byte rule and then the annotations, putting the
calibration file back when the annotations cannot be written.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from introspection_cli.annotations.file import (
    AnnotationChange,
    Annotations,
    AnnotationsError,
    StaleAnnotations,
    write_changes,
)
from introspection_cli.annotations.record import (
    ADJUDICATED,
    Annotation,
    Key,
    clean_note,
    note_problem,
)
from introspection_cli.errors import DataError, UsageError
from introspection_cli.fixture.byterule import LineEdit, RowNotWritable, plan_edit
from introspection_cli.labelling.calibration import CalibrationFile


class RatingRefused(DataError):
    """A rating that cannot be made as asked (e.g. a note on a row the rater has not
    labelled); nothing was planned."""


@dataclass(frozen=True, slots=True)
class Rating:
    """``rater``'s label (None: keep it, change the note only) of calibration line ``line``,
    with its note when ``set_note``, and the row's split when ``set_split``."""

    rater: str
    line: int
    label: str | None
    note: str | None = None
    set_note: bool = False
    split: str | None = None
    set_split: bool = False


@dataclass(frozen=True)
class RatingPlan:
    """What a set of ratings writes: calibration edits (each line once) and annotation
    changes (each key once)."""

    edits: tuple[LineEdit, ...] = ()
    changes: tuple[AnnotationChange, ...] = ()
    #: line -> the values the calibration edit of that line sets (for messages)
    values: Mapping[int, Mapping[str, str | None]] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return not self.edits and not self.changes

    def reverse(self) -> RatingPlan:
        """The plan that puts back what this one wrote (undo)."""
        return RatingPlan(tuple(LineEdit(e.line, e.new, e.old) for e in self.edits),
                          tuple(change.reverse() for change in self.changes))


@dataclass
class _Working:
    """The state ratings are planned against, as each earlier rating of the set left it."""

    calibration: CalibrationFile
    annotations: dict[Key, Annotation]
    texts: dict[int, bytes] = field(default_factory=dict)
    values: dict[int, dict[str, str | None]] = field(default_factory=dict)


def plan_ratings(calibration: CalibrationFile, annotations: Annotations,
                 ratings: Sequence[Rating], at: str) -> RatingPlan:
    """The writes for ``ratings``, in order (a later rating of the same row sees the
    earlier ones). Raises :class:`RatingRefused` or
    :class:`~introspection_cli.fixture.byterule.RowNotWritable`."""
    working = _Working(calibration, dict(annotations.by_key))
    for rating in ratings:
        _plan_one(working, rating, at)
    edits = []
    for number, values in sorted(working.values.items()):
        edit = None if not values else plan_edit(number, calibration.line(number).text, values)
        if edit is not None:
            edits.append(edit)
    changes = tuple(AnnotationChange(key, annotations.line_of(key), annotation)
                    for key, annotation in working.annotations.items()
                    if annotations.get(key) != annotation)
    return RatingPlan(tuple(edits), changes, {e.line: working.values[e.line] for e in edits})


def _plan_one(working: _Working, rating: Rating, at: str) -> None:
    line = working.calibration.line(rating.line)
    row = line.row
    if row is None:
        reason = line.blocking[0].code if line.blocking else "not a row"
        raise RowNotWritable(f"line {rating.line} cannot be labelled: [{reason}]")
    values = working.values.setdefault(rating.line, {})
    if rating.set_split:
        values["split"] = rating.split
    if rating.label is None and not rating.set_note:  # the row's split alone
        return
    key = (row.conversation_id, row.snapshot_hash, rating.rater)
    previous = working.annotations.get(key)
    label = rating.label if rating.label is not None else (previous.label if previous else None)
    if label is None:
        raise RatingRefused(f"line {rating.line}: {rating.rater} has not labelled this row "
                            "yet; a note is saved with a label (p, f or n)")
    note = clean_note(rating.note) if rating.set_note else (previous.note if previous else None)
    problem = note_problem(note) if note is not None else None
    if problem is not None:
        raise RatingRefused(f"line {rating.line}: {problem}")
    expected = values.get("expected", row.expected)
    if rating.label is not None and _writes_expected(working, row.conversation_id,
                                                     row.snapshot_hash, rating.rater,
                                                     previous, expected):
        values["expected"] = rating.label
    unchanged = previous is not None and (previous.label, previous.note) == (label, note)
    if not unchanged:
        working.annotations[key] = Annotation(row.conversation_id, row.snapshot_hash,
                                              rating.rater, label, note, at)


def _writes_expected(working: _Working, conversation_id: str, snapshot_hash: str, rater: str,
                     previous: Annotation | None, expected: str | None) -> bool:
    """Whether this rater's label goes to ``expected`` too (the module docstring's rules)."""
    if rater == ADJUDICATED:
        return True
    unit = [a for (cid, snapshot, _), a in working.annotations.items()
            if (cid, snapshot) == (conversation_id, snapshot_hash)]
    if any(a.rater == ADJUDICATED for a in unit):
        return False
    if expected is None:
        return True
    others = [a for a in unit if a.rater != rater]
    return not others and previous is not None and previous.label == expected


def apply_plan(plan: RatingPlan, write_calibration: Callable[[Sequence[LineEdit]], None],
               annotations_path: Path) -> Annotations | None:
    """Write ``plan``: the calibration edits through ``write_calibration`` (the byte rule;
    it raises what the byte rule raises), then the annotation changes; the annotations
    as written (None when the plan changes none). When the annotations cannot be
    written, the calibration edits are put back and the error is raised."""
    if plan.edits:
        write_calibration(plan.edits)
    if not plan.changes:
        return None
    try:
        return write_changes(annotations_path, plan.changes)
    except (StaleAnnotations, AnnotationsError, UsageError) as exc:
        if plan.edits:
            try:
                write_calibration(plan.reverse().edits)
            except DataError as second:
                raise DataError(f"{exc}; and the label written to the calibration file could "
                                f"not be taken back ({second}): check both files") from None
        raise
