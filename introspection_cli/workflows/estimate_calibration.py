"""Where ``judges estimate`` takes the calibration from: a certificate or a report's split.

Either way it is a :class:`~introspection_cli.estimation.counts.Confusion`, the
calibration rows by label and outcome. A report gives it per split; a schema-2
certificate gives it over the certified rows; a version-1 certificate has only
TPR and TNR with their row counts, which give the two-class matrix they imply.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from introspection_cli.errors import DataError
from introspection_cli.estimation.counts import Confusion
from introspection_cli.evaluation.fingerprint import judge_fingerprint
from introspection_cli.recipe.model import Judge


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
    from introspection_cli.certification.certificate import certificate_path
    from introspection_cli.certification.state import assess_certificate, describe_change

    path = certificate_path(judge.path.parent, judge.name)
    state = assess_certificate(path, judge)
    if not state.valid or state.certificate is None:
        why = {"none": f"there is no {path}",
               "invalid": f"{path} is not a valid certificate ({state.problem})",
               "stale": f"its certificate is stale: {describe_change(state)}"}[state.state]
        raise DataError(f"judge {judge.name} has no valid certificate to take TPR and TNR "
                        f"from: {why}. Certify it (`introspection judges certify --judge "
                        f"{judge.name}`) or pass --report R.json --split S")
    certificate = state.certificate
    source = {"source": "certificate", "path": str(path), "split": certificate["split"],
              "certified_at": certificate["certified_at"]}
    if isinstance(certificate.get("confusion"), dict):  # schema 2: every outcome counted
        return CalibrationSource(Confusion.from_json(certificate["confusion"]), source)
    tpr, tnr = certificate["tpr"], certificate["tnr"]
    return CalibrationSource(Confusion.binary(tpr["value"], tpr["n"], tnr["value"], tnr["n"]),
                             source)


def _from_report(judge: Judge, report_path: Path, split: str) -> CalibrationSource:
    from introspection_cli.reporting.baseline import load_report_file
    from introspection_cli.reporting.model import split_of

    report = load_report_file(report_path, what="--report")
    entry = next((j for j in report["judges"] if j["name"] == judge.name), None)
    if entry is None:
        raise DataError(f"--report {report_path} has no judge {judge.name}")
    stats = split_of(entry["splits"], split)
    if stats.get("held_out"):
        raise DataError(f"--report {report_path}: split {split} of judge {judge.name} was held "
                        "out (not evaluated); pass a report made with --split test")
    warnings = []
    current = judge_fingerprint(judge)
    if entry.get("fingerprint") != current:
        warnings.append(f"--report {report_path} measured "
                        + ("a judge version without a fingerprint (a version 1 report)"
                           if "fingerprint" not in entry else "another version of judge "
                           f"{judge.name} ({entry['fingerprint']}, now {current})")
                        + ": the correction assumes its error rates still hold")
    return CalibrationSource(Confusion.from_json(stats["confusion"]),
                             {"source": "report", "path": str(report_path), "split": split},
                             tuple(warnings))
