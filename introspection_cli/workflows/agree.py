"""``judges agree``: how much a judge's raters agree, and the rows they do not.

Reads the judge's calibration file and ``judges/<name>.annotations.jsonl``
(:mod:`introspection_cli.annotations`): the figures
(:mod:`introspection_cli.annotations.agreement`) over every row two raters or
more labelled, whatever its split, and the rows in conflict. Labels that cannot
give the figures (one rater, no row labelled twice, a single label everywhere)
are refused with the reason (exit 1), never printed as NaN. The eval report's
human ceiling (:func:`ceiling_json`) is the same figures.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from introspection_cli.annotations.file import read_annotations
from introspection_cli.annotations.location import annotations_path
from introspection_cli.annotations.units import RatedUnits, describe_conflict, rated_units
from introspection_cli.errors import CommandResult, DataError
from introspection_cli.recipe.model import Judge


@dataclass(frozen=True)
class RaterData:
    """A judge's rows as its raters labelled them: the units and each one's line."""

    judge: str
    units: RatedUnits
    lines: Mapping[tuple[str, str], int]

    @property
    def labels(self) -> dict[tuple[str, str], dict[str, str]]:
        return {key: unit.labels for key, unit in self.units.units.items()}


def rater_data(judge: Judge) -> RaterData | None:
    """The judge's annotations against its calibration rows; None without an annotations
    file. Raises :class:`DataError` when either file cannot be read."""
    from introspection_cli.labelling.calibration import read_calibration

    path = annotations_path(judge.path.parent, judge.name)
    if not path.exists():
        return None
    annotations = read_annotations(path)
    calibration = read_calibration(judge.calibration_path)
    rows = [(row.conversation_id, row.snapshot_hash, row.expected) for row in calibration.rows]
    lines = {(row.conversation_id, row.snapshot_hash): row.line for row in calibration.rows}
    return RaterData(judge.name, rated_units(annotations.annotations, rows), lines)


def agree_command(recipe: Path, judge_name: str | None, fmt: str) -> CommandResult:
    """``judges agree``: the agreement to print (exit 0; a refusal raises, exit 1)."""
    return CommandResult(stdout=agree(recipe, judge_name, fmt)[0])


def agree(recipe: Path, judge_name: str | None, fmt: str) -> tuple[str, dict[str, Any]]:
    """``judges agree``'s output (text or JSON) and its JSON document. Raises
    :class:`DataError` (exit 1) when the figures cannot be computed, naming why."""
    from introspection_cli.annotations.agreement import AgreementRefused, agreement
    from introspection_cli.labelling.recipe import single_judge
    from introspection_cli.reporting.registry import ReportKind, check_format, render

    chosen = check_format(ReportKind.AGREE, fmt)
    judge, _ = single_judge(recipe, judge_name)
    data = rater_data(judge)
    if data is None:
        raise DataError(f"judge {judge.name} has no annotations file "
                        f"({annotations_path(judge.path.parent, judge.name)}): label its rows "
                        "with `introspection judges label --rater NAME`, by two raters or more")
    try:
        figures = agreement(data.labels)
    except AgreementRefused as exc:
        raise AgreementRefused(f"judge {judge.name}: {exc}") from None
    document = {"judge": judge.name, **figures.as_json(), "conflicts": _conflicts(data),
                "adjudicated": sum(u.adjudication is not None
                                   for u in data.units.units.values()),
                "orphans": len(data.units.orphans)}
    return render(ReportKind.AGREE, chosen, document), document


def _conflicts(data: RaterData) -> list[dict[str, Any]]:
    return [{"line": data.lines[unit.unit], "conversation_id": unit.conversation_id,
             "kind": unit.conflict, "expected": unit.expected, "labels": unit.labels,
             "described": describe_conflict(unit)} for unit in data.units.conflicts]


def ceiling_json(judge: Judge) -> dict[str, Any] | None:
    """The eval report's ``raters`` member for a judge with an annotations file (None
    without one): alpha with its interval, each pair's applicable agreement and kappa, the
    rows in conflict; figures that cannot be computed are null, with the reason."""
    from introspection_cli.annotations.agreement import AgreementRefused, agreement

    try:
        data = rater_data(judge)
    except DataError as exc:
        return {"raters": [], "units": 0, "alpha": None, "problem": str(exc), "pairs": [],
                "conflicts": 0}
    if data is None:
        return None
    found: dict[str, Any] = {"raters": data.units.raters, "units": len(data.units.units),
                             "alpha": None, "problem": None, "pairs": [],
                             "conflicts": len(data.units.conflicts)}
    try:
        figures = agreement(data.labels)
    except AgreementRefused as exc:
        return {**found, "problem": str(exc)}
    alpha = figures.alpha.as_json()
    return {**found, "alpha": {**alpha, "draws": figures.draws},
            "pairs": [{"raters": list(pair["raters"]), "n": pair["n"],
                       "kappa": pair["kappa"],
                       "applicable_agreement": pair["applicable_agreement"]}
                      for pair in (p.as_json() for p in figures.pairs)]}
