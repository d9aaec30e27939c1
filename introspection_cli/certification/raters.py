"""What the raters change about a certificate: the rows it leaves out, the alpha it required.

When a judge's rows are labelled by several raters
(``judges/<name>.annotations.jsonl``), a row they disagree on, or agree on against
its ``expected``, is in conflict (:mod:`introspection_cli.annotations.units`)
until it is adjudicated: its label is not known well enough to score a judge
against. ``judges certify`` leaves such rows of the split out (it does not even
evaluate them, so adjudicating them later leaves the test rows' exposure clean),
and the certificate records which (``raters.excluded``) and, with
``--min-rater-alpha A``, the raters' alpha it required and measured. ``check``
recomputes the excluded rows from the annotations file: when they change (a
conflict adjudicated, a new rater disagreeing) the certificate is stale.

Standard library only: ``check`` runs it. Alpha's bootstrap (numpy) is computed by
certify, never by check, which verifies only that the recorded interval holds its
value and reaches the recorded bar.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol


class RatedRow(Protocol):
    """What :func:`conflicting_rows` reads of a labelled row (a certificate's
    ``LabelledRow``; a protocol so this module does not import the certificate)."""

    @property
    def conversation_id(self) -> str: ...
    @property
    def snapshot_hash(self) -> str: ...
    @property
    def expected(self) -> str: ...


@dataclass(frozen=True, slots=True)
class RaterAlpha:
    """The raters' Krippendorff alpha with its bootstrap 95% interval, over ``units`` rows."""

    value: float
    low: float
    high: float
    units: int
    draws: int

    def as_json(self) -> dict[str, Any]:
        return {"value": self.value, "low": self.low, "high": self.high, "units": self.units,
                "draws": self.draws}


@dataclass(frozen=True, slots=True)
class RatersRecord:
    """A certificate's ``raters``: the split's rows in conflict, left out of every figure,
    and the alpha ``--min-rater-alpha`` asked for (None: it was not given)."""

    excluded: tuple[str, ...]
    min_alpha: float | None
    alpha: RaterAlpha | None

    def as_json(self) -> dict[str, Any]:
        return {"excluded": list(self.excluded), "min_alpha": self.min_alpha,
                "alpha": None if self.alpha is None else self.alpha.as_json()}

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> RatersRecord | None:
        if data is None:
            return None
        alpha = data["alpha"]
        return cls(tuple(data["excluded"]), data["min_alpha"],
                   None if alpha is None else RaterAlpha(alpha["value"], alpha["low"],
                                                         alpha["high"], alpha["units"],
                                                         alpha["draws"]))


def conflicting_rows(judges_dir: Path, judge: str, rows: Sequence[RatedRow]) -> list[str]:
    """The conversation ids of ``rows`` (in order) in conflict per the judge's annotations
    file (none without one). Raises :class:`~introspection_cli.errors.DataError` when the
    file cannot be read."""
    from introspection_cli.annotations.file import read_annotations
    from introspection_cli.annotations.location import annotations_path
    from introspection_cli.annotations.units import excluded_ids, rated_units

    path = annotations_path(judges_dir, judge)
    if not path.exists():
        return []
    units = rated_units(read_annotations(path).annotations,
                        [(row.conversation_id, row.snapshot_hash, row.expected) for row in rows])
    return excluded_ids(units, [row.conversation_id for row in rows])


def raters_problem(record: RatersRecord | None, outcome_ids: Sequence[str]) -> str | None:
    """What in a certificate's ``raters`` does not follow from itself, or None."""
    if record is None:
        return None
    if len(set(record.excluded)) != len(record.excluded):
        return "a conversation appears twice among its excluded rows"
    scored = set(outcome_ids) & set(record.excluded)
    if scored:
        return (f"it both scores and excludes conversation {sorted(scored)[0]} (rows in "
                "conflict are left out)")
    alpha = record.alpha
    if alpha is not None and not alpha.low <= alpha.value <= alpha.high:
        return (f"its raters' alpha interval {alpha.low:.3f}–{alpha.high:.3f} does not hold "
                f"its value {alpha.value:.3f}")
    if record.min_alpha is not None and (alpha is None or alpha.low < record.min_alpha):
        return (f"its raters' alpha does not reach its own --min-rater-alpha "
                f"{record.min_alpha:g}: it certifies nothing")
    return None
