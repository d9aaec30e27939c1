"""The calibration rows as the raters see them: who said what, and which rows are in conflict.

A *unit* is one conversation text (``conversation_id``, ``snapshot_hash``) of the
calibration file. Its annotations are each rater's label and note; ``adjudicated``
is not a rater but the label an adjudication settled on. A unit is **in
conflict**, until it is adjudicated, when

* its raters gave different labels (``disagree``), or
* its raters agree on a label the row's ``expected`` is not (``expected``): a
  label given before or without raters, or by a rater who changed their mind
  after another had labelled the row.

An adjudicated unit is settled: later labels are recorded (and counted by
``judges agree``) but do not reopen it. Annotations of a conversation the
calibration file no longer holds with that hash are *orphans* (``check``:
``annotation-orphan``): they are left out of every figure.

Standard library only: ``check`` and the certificate rules use it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from introspection_cli.annotations.record import Annotation, Unit

Conflict = Literal["disagree", "expected"]


@dataclass(frozen=True)
class RatedUnit:
    """One calibration row and its annotations."""

    conversation_id: str
    snapshot_hash: str
    expected: str | None
    #: rater -> their annotation (``adjudicated`` is not among them)
    ratings: Mapping[str, Annotation] = field(default_factory=dict)
    adjudication: Annotation | None = None

    @property
    def unit(self) -> Unit:
        return self.conversation_id, self.snapshot_hash

    @property
    def labels(self) -> dict[str, str]:
        """rater -> label."""
        return {rater: annotation.label for rater, annotation in self.ratings.items()}

    @property
    def conflict(self) -> Conflict | None:
        """Why the unit needs adjudication, or None (see the module docstring)."""
        if self.adjudication is not None:
            return None
        given = set(self.labels.values())
        if len(given) > 1:
            return "disagree"
        if given and self.expected is not None and self.expected not in given:
            return "expected"
        return None

    @property
    def double_coded(self) -> bool:
        """Labelled by two raters or more."""
        return len(self.ratings) >= 2


@dataclass(frozen=True)
class RatedUnits:
    """Every calibration row some rater labelled, and the annotations of no row."""

    units: Mapping[Unit, RatedUnit]
    orphans: tuple[Annotation, ...] = ()

    @property
    def raters(self) -> list[str]:
        """Every rater of a row, sorted (``adjudicated`` is none)."""
        return sorted({rater for unit in self.units.values() for rater in unit.ratings})

    @property
    def conflicts(self) -> list[RatedUnit]:
        return [unit for unit in self.units.values() if unit.conflict is not None]

    def conflicting_ids(self) -> set[str]:
        """The conversation ids of the units in conflict."""
        return {unit.conversation_id for unit in self.conflicts}


#: (conversation_id, snapshot_hash, expected) of one trusted calibration row.
Row = tuple[str, str, "str | None"]


def rated_units(annotations: Iterable[Annotation], rows: Sequence[Row]) -> RatedUnits:
    """The units of ``rows`` (file order) that have annotations, and the orphans."""
    by_unit: dict[Unit, list[Annotation]] = {}
    for annotation in annotations:
        by_unit.setdefault(annotation.unit, []).append(annotation)
    units: dict[Unit, RatedUnit] = {}
    for conversation_id, snapshot_hash, expected in rows:
        found = by_unit.pop((conversation_id, snapshot_hash), None)
        if not found:
            continue
        units[(conversation_id, snapshot_hash)] = _unit(conversation_id, snapshot_hash,
                                                        expected, found)
    orphans = tuple(annotation for found in by_unit.values() for annotation in found)
    return RatedUnits(units, orphans)


def _unit(conversation_id: str, snapshot_hash: str, expected: str | None,
          annotations: Sequence[Annotation]) -> RatedUnit:
    ratings = {a.rater: a for a in annotations if not a.adjudicated}
    adjudication = next((a for a in annotations if a.adjudicated), None)
    return RatedUnit(conversation_id, snapshot_hash, expected, ratings, adjudication)


def excluded_ids(units: RatedUnits, conversation_ids: Iterable[str]) -> list[str]:
    """Of ``conversation_ids`` (in their order), those in conflict: rows a certificate
    does not score until they are adjudicated."""
    conflicting = units.conflicting_ids()
    return [cid for cid in conversation_ids if cid in conflicting]


def describe_conflict(unit: RatedUnit) -> str:
    """``Ana pass, Ben fail`` or ``expected pass; Ana fail``."""
    said = ", ".join(f"{rater} {label}" for rater, label in sorted(unit.labels.items()))
    if unit.conflict == "expected":
        return f"expected {unit.expected}; {said}"
    return said


def labels_of(units: Mapping[Unit, RatedUnit]) -> dict[Unit, dict[str, str]]:
    """unit -> rater -> label: what agreement is computed from."""
    return {key: unit.labels for key, unit in units.items()}
