"""The counts an estimate is made from, and the refusal: standard library only.

A :class:`Confusion` is the calibration (rows by label and outcome, as an eval
report's split or a schema-2 certificate gives them); a :class:`ProductionCounts`
is what the judge said in production. Both are read by the estimators and
written into ``judges estimate``'s JSON.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from introspection_cli.errors import DataError

LABELS = ("pass", "fail", "not_applicable")
#: The verdicts a judge gives when its gate matches: what the corrected rate counts.
VERDICTS = LABELS
OUTCOMES = (*VERDICTS, "gated", "error")


class EstimateRefused(DataError):
    """The data do not support the estimate asked for; the message says why and what to do."""


@dataclass(frozen=True)
class Confusion:
    """Calibration rows by label (``pass``, ``fail``, ``not_applicable``) and outcome."""

    cells: tuple[tuple[int, ...], ...]  # [label][outcome], in LABELS x OUTCOMES order

    @classmethod
    def from_json(cls, data: Mapping[str, Mapping[str, Any]]) -> Confusion:
        """From ``{label: {outcome: count}}``; a missing label or outcome counts 0."""
        cells = []
        for label in LABELS:
            row = data.get(label) or {}
            counts = tuple(row.get(outcome, 0) for outcome in OUTCOMES)
            if not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0
                       for n in counts):
                raise ValueError(f"confusion counts of label {label} must be integers >= 0")
            cells.append(counts)
        return cls(tuple(cells))

    @classmethod
    def binary(cls, tpr: float, pass_rows: int, tnr: float, fail_rows: int) -> Confusion:
        """The two-class calibration a rate and its row count imply (a version-1 certificate)."""
        passed = round(tpr * pass_rows)
        failed = round(tnr * fail_rows)
        return cls.from_json({"pass": {"pass": passed, "fail": pass_rows - passed},
                              "fail": {"fail": failed, "pass": fail_rows - failed}})

    def count(self, label: str, outcome: str) -> int:
        return self.cells[LABELS.index(label)][OUTCOMES.index(outcome)]

    def verdicts(self, label: str) -> tuple[int, int, int]:
        """The pass, fail and not_applicable verdicts on rows of ``label`` whose gate matched."""
        row = self.cells[LABELS.index(label)]
        return row[0], row[1], row[2]

    def as_json(self) -> dict[str, dict[str, int]]:
        return {label: dict(zip(OUTCOMES, row, strict=True))
                for label, row in zip(LABELS, self.cells, strict=True)}


@dataclass(frozen=True)
class ProductionCounts:
    """The judge's outcomes on production conversations.

    ``not_applicable`` is None when it was not counted (``--passed K --total N``
    gives pass and fail verdicts only): the estimate then reads pass and fail.
    """

    passed: int
    failed: int
    not_applicable: int | None = None
    gated: int = 0
    errors: int = 0

    @property
    def judged(self) -> int:
        """The verdicts the estimate reads: pass, fail and (when counted) not_applicable."""
        return self.passed + self.failed + (self.not_applicable or 0)

    def verdicts(self) -> tuple[int, ...]:
        if self.not_applicable is None:
            return self.passed, self.failed
        return self.passed, self.failed, self.not_applicable

    def as_json(self) -> dict[str, int | None]:
        return {"pass": self.passed, "fail": self.failed, "not_applicable": self.not_applicable,
                "gated": self.gated, "error": self.errors}
