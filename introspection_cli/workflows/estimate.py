"""``judges estimate`` end to end, minus the command line.

The judge's production pass rate, corrected for its measured error rates.
The calibration (TPR over m1 rows labelled ``pass``, TNR over m0 rows
labelled ``fail``) comes from the judge's valid certificate, or from an eval
report's split (``--report R.json --split S``). The observed rate is
``--passed K --total N``, or the share of ``pass`` among the judge's
``pass``/``fail`` verdicts on the exported rows of ``--rows FILE`` (run
through the normal runner and verdict cache; gated, not_applicable and error
rows are counted, shown and left out). The point estimate is Rogan–Gladen,
the interval Lee et al. (2025) (:func:`introspection_cli.statistics.corrected_pass_rate`).

Exit codes: 0 an estimate; 1 no valid calibration, a judge no better than
chance (TPR + TNR <= 1), rejected rows or no verdict to count; 2 usage or
configuration; 3 rows failed at the provider after retries.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from introspection_cli.errors import DataError, ExitCode, UsageError
from introspection_cli.evaluation.fingerprint import judge_fingerprint
from introspection_cli.evaluation.outcomes import SPLITS
from introspection_cli.evaluation.plan import load_valid_recipe
from introspection_cli.evaluation.runner import EvalOptions, ProgressCallback
from introspection_cli.recipe.model import Judge
from introspection_cli.recipe.selection import named_judge
from introspection_cli.statistics import better_than_chance, corrected_pass_rate
from introspection_cli.workflows.judges_eval import EvalCommandResult, provider_failure

_CHANCE = "the judge is no better than chance"


@dataclass(frozen=True)
class EstimateSettings:
    """What to estimate from, and how to print it."""

    judge: str
    passed: int | None = None
    total: int | None = None
    rows: Path | None = None
    report: Path | None = None
    split: str | None = None
    fmt: str = "text"

    def check(self) -> None:
        counts = self.passed is not None or self.total is not None
        if counts == (self.rows is not None):
            raise UsageError("pass either --passed K --total N (the judge's verdicts in "
                             "production) or --rows FILE (exported rows to run it on)")
        if counts and (self.passed is None or self.total is None):
            raise UsageError("--passed and --total go together")
        if counts and not (self.total is not None and self.passed is not None
                           and 0 <= self.passed <= self.total and self.total >= 1):
            raise UsageError(f"--passed {self.passed} --total {self.total}: need "
                             "0 <= K <= N and N >= 1")
        if (self.report is None) != (self.split is None):
            raise UsageError("--report and --split go together: the calibration is that "
                             "split's TPR and TNR in that report")
        if self.split is not None and self.split not in SPLITS:
            raise UsageError(f"unknown --split {self.split!r}; use one of: {', '.join(SPLITS)}")
        if self.fmt not in ("text", "json"):
            raise UsageError(f"unknown format {self.fmt!r}; use one of: text, json")


@dataclass(frozen=True)
class Calibration:
    """TPR over ``pass_rows`` (m1) and TNR over ``fail_rows`` (m0), and where they come from."""

    tpr: float
    tnr: float
    pass_rows: int
    fail_rows: int
    source: dict[str, Any]
    warnings: tuple[str, ...] = ()

    def as_json(self) -> dict[str, Any]:
        return {**self.source, "tpr": {"value": self.tpr, "n": self.pass_rows},
                "tnr": {"value": self.tnr, "n": self.fail_rows}}


def estimate_judge(path: Path, options: EvalOptions, settings: EstimateSettings, *,
                   progress: ProgressCallback | None = None) -> EvalCommandResult:
    """Run ``judges estimate``: the corrected pass rate to print, and the exit code."""
    settings.check()
    recipe, warnings = load_valid_recipe(path, [settings.judge])
    judge = named_judge(recipe, settings.judge)
    calibration = _calibration(judge, settings)
    if not better_than_chance(calibration.tpr, calibration.tnr):
        # Known from the calibration alone: refused before any row of --rows is paid for.
        raise DataError(f"{_CHANCE} (judge {judge.name}: TPR {calibration.tpr:.3f} + TNR "
                        f"{calibration.tnr:.3f} <= 1), so its verdicts say nothing about the "
                        "true pass rate and no correction can recover it")
    problems: list[str] = []
    exit_code = ExitCode.OK
    if settings.rows is not None:
        observed, run_problems, run_code = _observed_on_rows(path, judge, settings.rows, options,
                                                             progress)
        problems += run_problems
        exit_code = run_code
    else:
        assert settings.passed is not None and settings.total is not None  # checked
        observed = {"source": "counts", "passed": settings.passed, "total": settings.total}
    if observed["total"] == 0:
        nothing = (f"no pass or fail verdict of judge {judge.name} among the rows of "
                   f"{settings.rows}: nothing to correct")
        if exit_code == ExitCode.OK:
            raise DataError(nothing)
        # Why there is no verdict (rows failed at the provider, rows rejected) decides the
        # exit code, and is said first.
        return EvalCommandResult("", exit_code, (*problems, nothing))
    rate = observed["passed"] / observed["total"]
    corrected = corrected_pass_rate(rate, observed["total"], calibration.tpr, calibration.tnr,
                                    pass_rows=calibration.pass_rows,
                                    fail_rows=calibration.fail_rows)
    payload = {
        "judge": judge.name,
        "fingerprint": judge_fingerprint(judge),
        "calibration": calibration.as_json(),
        "observed": {**observed, "rate": rate},
        "corrected": corrected.as_json(),
        "method": "Rogan-Gladen point estimate; Lee et al. (2025) 95% interval",
    }
    notes = [*warnings, *calibration.warnings]
    return EvalCommandResult(_render(payload, settings.fmt), exit_code,
                             (*problems, *(f"warning: {note}" for note in notes)), payload)


def _calibration(judge: Judge, settings: EstimateSettings) -> Calibration:
    if settings.report is not None:
        assert settings.split is not None  # checked
        return _from_report(judge, settings.report, settings.split)
    return _from_certificate(judge)


def _from_certificate(judge: Judge) -> Calibration:
    from introspection_cli.certification.state import valid_certificate

    # Every figure the certificate states is checked; the bar it was made at is CI's
    # policy (check --min-bar), not a property of the figures taken from it.
    path, certificate = valid_certificate(judge, using="TPR and TNR", min_bar=0.0,
                                          otherwise="or pass --report R.json --split S")
    return Calibration(
        certificate.tpr.value, certificate.tnr.value, certificate.tpr.n, certificate.tnr.n,
        {"source": "certificate", "path": str(path), "split": certificate.split,
         "certified_at": certificate.certified_at})


def _from_report(judge: Judge, report_path: Path, split: str) -> Calibration:
    from introspection_cli.reporting.baseline import load_report_file

    report = load_report_file(report_path, what="--report")
    entry = next((j for j in report["judges"] if j["name"] == judge.name), None)
    if entry is None:
        raise DataError(f"--report {report_path} has no judge {judge.name}")
    stats = entry["splits"][split]
    if stats.get("held_out"):
        raise DataError(f"--report {report_path}: split {split} of judge {judge.name} was held "
                        "out (not evaluated); pass a report made with --split test")
    counts = {label: sum(count for outcome, count in stats["confusion"][label].items()
                         if outcome != "error") for label in ("pass", "fail")}
    if stats["tpr"] is None or stats["tnr"] is None:
        missing = "tpr" if stats["tpr"] is None else "tnr"
        raise DataError(f"--report {report_path}: {missing} of judge {judge.name} on split "
                        f"{split} is null (no non-error row of that label), so there is no "
                        "calibration to correct with")
    warnings = []
    if split == "test":  # taking test figures is a look at the test rows
        from introspection_cli.certification.exposure_record import record_report_look

        warnings += record_report_look(judge, entry)
    current = judge_fingerprint(judge)
    if entry.get("fingerprint") != current:
        warnings.append(f"--report {report_path} measured "
                        + ("a judge version without a fingerprint (a version 1 report)"
                           if "fingerprint" not in entry else "another version of judge "
                           f"{judge.name} ({entry['fingerprint']}, now {current})")
                        + ": the correction assumes its error rates still hold")
    return Calibration(stats["tpr"]["value"], stats["tnr"]["value"], counts["pass"],
                       counts["fail"], {"source": "report", "path": str(report_path),
                                        "split": split}, tuple(warnings))


def _observed_on_rows(recipe: Path, judge: Judge, rows_file: Path, options: EvalOptions,
                      progress: ProgressCallback | None
                      ) -> tuple[dict[str, Any], list[str], ExitCode]:
    """Run the judge over the exported rows; the share of pass among its pass/fail verdicts."""
    from introspection_cli.evaluation.plan import plan_unlabelled
    from introspection_cli.evaluation.runner import run_plans

    if not rows_file.is_file():
        raise UsageError(f"--rows {rows_file}: no such file; pass exported fixtures "
                         "(`introspection conversations get --judge-fixtures`)")
    plan = plan_unlabelled(judge, rows_file, provider=options.provider, model=options.model,
                           regex_timeout=options.regex_timeout)
    result = run_plans(str(recipe), [plan], options, progress=progress)
    (run,) = result.run.judges
    outcomes = Counter(row.outcome for row in run.rows)
    problems = []
    code = ExitCode.OK
    if run.rejected:
        lines = sorted({rejected.line for rejected in run.rejected})
        problems.append(f"{len(lines)} row(s) of {rows_file} rejected (lines "
                        f"{', '.join(map(str, lines[:10]))}{', ...' if len(lines) > 10 else ''})"
                        "; they are left out")
        code = ExitCode.PROBLEMS
    failed, failures = provider_failure(result)
    if failed is not None:
        problems += [*failures, "those rows are left out of the observed rate"]
        code = failed
    observed = {"source": "rows", "path": str(rows_file), "passed": outcomes["pass"],
                "total": outcomes["pass"] + outcomes["fail"],
                "outcomes": {outcome: outcomes[outcome] for outcome in
                             ("pass", "fail", "not_applicable", "gated", "error")},
                "rejected": len(run.rejected)}
    return observed, problems, code


def _render(payload: dict[str, Any], fmt: str) -> str:
    if fmt == "json":
        return json.dumps(payload, indent=2, ensure_ascii=False) + "\n"
    calibration, observed, corrected = (payload["calibration"], payload["observed"],
                                        payload["corrected"])
    where = (f"certificate {calibration['path']} (split {calibration['split']}, certified "
             f"{calibration['certified_at']})" if calibration["source"] == "certificate"
             else f"report {calibration['path']}, split {calibration['split']}")
    lines = [f"judge {payload['judge']}",
             f"  fingerprint {payload['fingerprint']}",
             f"  calibration {where}: TPR {calibration['tpr']['value']:.3f} over "
             f"{calibration['tpr']['n']} pass rows, TNR {calibration['tnr']['value']:.3f} over "
             f"{calibration['tnr']['n']} fail rows"]
    if observed["source"] == "rows":
        counts = observed["outcomes"]
        lines.append(f"  rows        {observed['path']}: " + ", ".join(
            f"{counts[o]} {o}" for o in ("pass", "fail", "not_applicable", "gated", "error"))
            + (f", {observed['rejected']} rejected" if observed["rejected"] else "")
            + " (only pass and fail verdicts count)")
    lines += [f"  observed    {observed['passed']} of {observed['total']} pass "
              f"({observed['rate']:.3f})",
              f"corrected pass rate: {corrected['value']:.3f} (95% interval "
              f"{corrected['low']:.3f}–{corrected['high']:.3f})"]
    return "\n".join(lines) + "\n"
