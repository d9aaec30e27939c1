"""Who a session labels for, and what that changes: its queue, its progress, its writes.

* Without ``--rater``: the row's ``expected``, as always.
* ``--rater NAME``: the rater's own label (their annotation). The queue holds the
  rows they have not labelled, progress counts their labels, and the page is
  sent only their own label and note (:func:`.views.label_json`): blind to
  every other rater and to ``expected`` (which may be another rater's).
* ``--adjudicate``: the rows in conflict (:mod:`introspection_cli.annotations.units`);
  a label is the adjudicated one, written to ``expected`` and recorded as rater
  ``adjudicated``.
"""

from __future__ import annotations

from dataclasses import dataclass

from introspection_cli.annotations.record import ADJUDICATED
from introspection_cli.labelling.app.judgefile import JudgeFile
from introspection_cli.labelling.calibration import CalibrationLine
from introspection_cli.labelling.rating import Rating, RatingPlan, plan_ratings
from introspection_cli.provenance import utc_now


@dataclass(frozen=True, slots=True)
class Blinds:
    """A rater (blind to every other label and note), an adjudication (every rater's
    label and note), or neither (the row's ``expected``)."""

    rater: str | None = None
    adjudicate: bool = False

    @property
    def rates(self) -> bool:
        """Labels are annotations of someone (a rater, or the adjudication)."""
        return self.rater is not None or self.adjudicate

    @property
    def writer(self) -> str:
        """The rater name a label is recorded under."""
        assert self.rates
        return self.rater if self.rater is not None else ADJUDICATED


#: A session without --rater or --adjudicate.
NO_RATER = Blinds()


def is_done(jf: JudgeFile, line: CalibrationLine, blinds: Blinds) -> bool:
    """Whether a trusted line needs nothing more in this session: labelled (by the
    rater, when there is one), or no longer in conflict (adjudicating)."""
    assert line.row is not None
    if blinds.adjudicate:
        unit = jf.rated(line)
        return unit is None or unit.conflict is None
    if blinds.rater is not None:
        unit = jf.rated(line)
        return unit is not None and blinds.rater in unit.ratings
    return line.row.expected is not None


def gate_misses(jf: JudgeFile, blinds: Blinds) -> list[int]:
    """The lines the one-step action labels ``not_applicable``: gate misses not yet labelled
    (by the rater, when there is one). None of it when adjudicating."""
    if blinds.adjudicate:
        return []
    if blinds.rater is None:
        return jf.gate_misses()
    return [line.number for line in jf.file.lines if line.row is not None
            and (view := jf.gate(line)) is not None and view.is_miss
            and not is_done(jf, line, blinds)]


def plan_labels(jf: JudgeFile, blinds: Blinds, lines: list[int], label: str | None,
                note: str | None = None, set_note: bool = False) -> RatingPlan:
    """The writes of one label (or note) on ``lines`` for the session's rater."""
    ratings = [Rating(blinds.writer, number, label, note, set_note) for number in lines]
    return plan_ratings(jf.file, jf.annotations, ratings, utc_now())
