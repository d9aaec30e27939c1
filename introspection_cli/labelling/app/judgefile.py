"""One judge's calibration file as a labelling session sees it: now, its gate, its writes.

A session holds one :class:`JudgeFile` per judge it labels. Each reads its file
(and the judge's annotations file, for raters) again when another program changed
it, knows which rows its judge's gate does not match, and writes by the byte
rule (raising what the byte rule raises; the session turns that into what the
page shows).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from introspection_cli.annotations.file import Annotations, read_annotations
from introspection_cli.annotations.location import annotations_path
from introspection_cli.annotations.units import RatedUnit, rated_units
from introspection_cli.errors import DataError
from introspection_cli.evaluation.gate import GateTimeout, evaluate_gate
from introspection_cli.fixture.byterule import LineEdit, file_identity, write_edits
from introspection_cli.gcpause import collector_paused
from introspection_cli.labelling.calibration import (
    CalibrationFile,
    CalibrationLine,
    after_edits,
    read_calibration,
)
from introspection_cli.labelling.rating import RatingPlan, apply_plan
from introspection_cli.recipe.model import Judge

#: A conversation as the fixture rules name it: (conversation_id, snapshot_hash).
Identity = tuple[str, str]


@dataclass(frozen=True, slots=True)
class GateView:
    """Whether the judge's gate matches a conversation, and which events matched."""

    applies: bool
    matches: tuple[int, ...]
    error: str | None

    @property
    def is_miss(self) -> bool:
        """The gate was decided and does not match: the judge would never run on it."""
        return not self.applies and self.error is None

    def as_json(self) -> dict[str, Any]:
        return {"applies": self.applies, "matches": list(self.matches), "error": self.error}


def row_version(text: bytes) -> str:
    """Names one state of a line; a write must name the state the page showed."""
    return hashlib.sha256(text).hexdigest()[:32]


def identity_of(line: CalibrationLine) -> Identity | None:
    """The conversation a trusted line holds; None for a rejected or blank line."""
    return (line.row.conversation_id, line.row.snapshot_hash) if line.row is not None else None


class JudgeFile:
    """One judge's calibration file in a session. Not thread-safe: the session locks.

    :attr:`file` is the file as last seen; :meth:`refresh` (once per request) reads it
    again when another program changed it. Lookups use :attr:`file` as it is.
    """

    def __init__(self, judge: Judge) -> None:
        self.judge = judge
        self.file = _read(judge.calibration_path)
        self._gates: dict[str, GateView] = {}
        self._misses_of: CalibrationFile | None = None
        self._misses: list[int] = []
        self._index_of: CalibrationFile | None = None
        self._index: dict[Identity, int] = {}
        self.annotations_path = annotations_path(judge.path.parent, judge.name)
        self.annotations = read_annotations(self.annotations_path)
        self._annotations_identity = _identity_or_none(self.annotations_path)
        self._units_of: tuple[CalibrationFile, Annotations] | None = None
        self._units: dict[Identity, RatedUnit] = {}

    @property
    def name(self) -> str:
        return self.judge.name

    @property
    def gated(self) -> bool:
        return self.judge.gate is not None

    def refresh(self) -> CalibrationFile:
        """The file as it is now (read again when another program changed it)."""
        try:
            identity = file_identity(self.file.path)
        except OSError as exc:
            raise DataError(f"{self.file.path} cannot be read ({exc.strerror}); was it moved?"
                            ) from None
        if identity != self.file.identity:
            self.reread()
        if _identity_or_none(self.annotations_path) != self._annotations_identity:
            self._reread_annotations()
        return self.file

    def _reread_annotations(self) -> None:
        self._annotations_identity = _identity_or_none(self.annotations_path)
        self.annotations = read_annotations(self.annotations_path)

    def rated(self, line: CalibrationLine) -> RatedUnit | None:
        """What the raters said of a trusted line (None: nobody, or a rejected line)."""
        identity = identity_of(line)
        if identity is None:
            return None
        if self._units_of is None or self._units_of[0] is not self.file \
                or self._units_of[1] is not self.annotations:  # once per state of the files
            rows = [(row.conversation_id, row.snapshot_hash, row.expected)
                    for row in self.file.rows]
            self._units = dict(rated_units(self.annotations.annotations, rows).units)
            self._units_of = (self.file, self.annotations)
        return self._units.get(identity)

    def write_rating(self, plan: RatingPlan) -> None:
        """Write a rater's plan: the calibration edits by the byte rule, then the
        annotations (raises what :func:`~introspection_cli.labelling.rating.apply_plan`
        raises)."""
        written = apply_plan(plan, self.write, self.annotations_path)
        if written is not None:
            self.annotations = written
            self._annotations_identity = _identity_or_none(self.annotations_path)

    def reread(self) -> None:
        self.file = _read(self.file.path)

    def locate(self, identity: Identity) -> CalibrationLine | None:
        """The trusted line holding this conversation (its line number may have moved).

        The index of line numbers outlives this session's own writes (they change
        only a label or a split, never which line holds what); a line that no
        longer holds what the index says, or a miss in a file the index was not
        built from, builds it again.
        """
        lines = self.file.lines
        number = self._index.get(identity)
        if number is not None and number <= len(lines) and identity_of(lines[number - 1]) \
                == identity:
            return lines[number - 1]
        if self._index_of is self.file:
            return None
        self._index = {key: line.number for line in lines
                       if (key := identity_of(line)) is not None}
        self._index_of = self.file
        number = self._index.get(identity)
        return lines[number - 1] if number is not None else None

    def gate(self, line: CalibrationLine) -> GateView | None:
        """The gate's view of a trusted line; None for an ungated judge or a rejected line."""
        if self.judge.gate is None or line.row is None:
            return None
        key = line.row.snapshot_hash  # the gate sees only judge_input, which this hashes
        view = self._gates.get(key)
        if view is None:
            events = line.row.judge_input.get("events")
            try:
                result = evaluate_gate(self.judge.gate, events if isinstance(events, list) else [])
                view = GateView(result.applies,
                                tuple(sorted({m.event_index for m in result.matches})), None)
            except GateTimeout as exc:
                view = GateView(False, (), str(exc))
            self._gates[key] = view
        return view

    def gate_misses(self) -> list[int]:
        """Unlabelled trusted rows of the file whose gate does not match (decided)."""
        if self.judge.gate is None:
            return []
        if self._misses_of is not self.file:  # asked for by every row shown: once per state
            self._misses = [line.number for line in self.file.lines
                            if line.row is not None and line.row.expected is None
                            and (view := self.gate(line)) is not None and view.is_miss]
            self._misses_of = self.file
        return list(self._misses)

    def write(self, edits: Sequence[LineEdit]) -> None:
        """Write ``edits`` by the byte rule; raises what :func:`write_edits` raises."""
        written = write_edits(self.file.path, edits)
        self.file = after_edits(self.file, written, edits)


def _identity_or_none(path: Path) -> tuple[int, int, int, int] | None:
    try:
        return file_identity(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise DataError(f"{path} cannot be read ({exc.strerror})") from None


def _read(path: Path) -> CalibrationFile:
    # Every row's parsed JSON lives as long as the session: no collector pass over it
    # finds anything to free (see gcpause), so none walks it again.
    with collector_paused(freeze=True):
        return read_calibration(path)
