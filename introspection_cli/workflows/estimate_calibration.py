"""Where ``judges estimate`` takes the calibration from: a certificate or a report's split.

Either way it is a :class:`~introspection_cli.estimation.counts.Confusion`, the
calibration rows by label and outcome. A report gives it per split; a
certificate (schema 2, checked by the one certificate validator) gives it over the
certified rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from introspection_cli.errors import DataError
from introspection_cli.estimation.counts import Confusion
from introspection_cli.evaluation.fingerprint import judge_fingerprint
from introspection_cli.recipe.model import Judge
from introspection_cli.reporting.metrics import SCORED, SPLIT_ALIASES

if TYPE_CHECKING:  # the report is read only by judges estimate --report
    from introspection_cli.reporting.report import JudgeEntry


@dataclass(frozen=True)
class CalibrationSource:
    """The calibration's confusion counts, where they come from, and what to warn about."""

    confusion: Confusion
    source: dict[str, Any]
    warnings: tuple[str, ...] = ()

    def rate(self, label: str) -> dict[str, Any]:
        """TPR (``pass``) or TNR (``fail``): the share of its own verdict among the rows of
        ``label`` whose gate matched, over how many."""
        verdicts = self.confusion.verdicts(label)
        rows = sum(verdicts)
        right = self.confusion.count(label, label)
        return {"value": right / rows if rows else None, "n": rows}

    def as_json(self) -> dict[str, Any]:
        return {**self.source, "tpr": self.rate("pass"), "tnr": self.rate("fail"),
                "confusion": self.confusion.as_json()}


def calibration_for(judge: Judge, report: Path | None, split: str | None) -> CalibrationSource:
    """The calibration of ``judge``: ``report``'s ``split`` when given, else its certificate."""
    if report is not None:
        assert split is not None  # the settings check that they go together
        return _from_report(judge, report, split)
    return _from_certificate(judge)


def _from_certificate(judge: Judge) -> CalibrationSource:
    from introspection_cli.certification.state import valid_certificate

    # Every figure the certificate states is checked (one validator for check, status and
    # estimate); the bar it was made at is CI's policy (check --min-bar), not a property of
    # the figures taken from it.
    path, certificate = valid_certificate(judge, using="TPR and TNR", min_bar=0.0,
                                          otherwise="or pass --report R.json --split S")
    source = {"source": "certificate", "path": str(path), "split": certificate.split,
              "certified_at": certificate.certified_at}
    return CalibrationSource(Confusion.from_json(
        {label: dict(row) for label, row in certificate.confusion.items()}), source,
        _majority_warning(certificate.samples, f"certificate {path}"))


def _majority_warning(samples: object, what: str) -> tuple[str, ...]:
    """A calibration measured as a majority of several calls per row, said: its error
    rates are not those of a deployment making one call."""
    if not isinstance(samples, int) or isinstance(samples, bool) or samples <= 1:
        return ()
    return (f"{what} measured the judge as a majority of {samples} calls per row; the "
            "correction is right only for production verdicts made the same way, not by "
            "one call",)


def _holds_test_rows(entry: JudgeEntry, split: str) -> bool:
    """Whether a report's ``split`` of a judge was measured on test rows: ``test`` itself, or
    ``scored`` (every evaluated row) of a report that evaluated test."""
    if split == "test":
        return True
    return SPLIT_ALIASES.get(split, split) == SCORED and any(
        row.split == "test" for row in entry.rows)


def _from_report(judge: Judge, report_path: Path, split: str) -> CalibrationSource:
    from introspection_cli.reporting.baseline import load_report
    from introspection_cli.reporting.report import HeldOut

    report = load_report(report_path, what="--report")
    entry = next((j for j in report.judges if j.name == judge.name), None)
    if entry is None:
        raise DataError(f"--report {report_path} has no judge {judge.name}")
    stats = entry.splits[SPLIT_ALIASES.get(split, split)]
    if isinstance(stats, HeldOut):
        raise DataError(f"--report {report_path}: split {split} of judge {judge.name} was held "
                        "out (not evaluated); pass a report made with --split test")
    warnings = []
    if _holds_test_rows(entry, split):  # figures over test rows are a look at them
        from introspection_cli.certification.exposure_record import record_report_look

        warnings += record_report_look(judge, entry.fingerprint, entry.rows)
    current = judge_fingerprint(judge)
    if entry.fingerprint != current:
        warnings.append(f"--report {report_path} measured "
                        + ("a judge version without a fingerprint (a version 1 report)"
                           if report.version == 1 else "another version of judge "
                           f"{judge.name} ({entry.fingerprint}, now {current})")
                        + ": the correction assumes its error rates still hold")
    warnings += _majority_warning(report.samples, f"--report {report_path}")
    return CalibrationSource(Confusion.from_json(stats.confusion),
                             {"source": "report", "path": str(report_path), "split": split},
                             tuple(warnings))
