"""``judges estimate`` end to end, minus the command line.

The judge's production pass rate, corrected for its measured error rates. The
calibration (the rows by label and outcome) comes from the judge's valid
certificate, or from an eval report's split (``--report R.json --split S``). The
production verdicts are ``--passed K --total N`` (with ``--not-applicable J``),
or the judge's outcomes on the exported rows of ``--rows FILE`` (run through the
normal runner and verdict cache; gated and error rows are counted, shown and left
out). :mod:`introspection_cli.estimation.threeway` does the statistics.

Exit codes: 0 an estimate; 1 no valid calibration, a refusal (a class with too
few rows, a judge no better than chance, too few production verdicts, a misfit
without ``--allow-misfit``), rejected rows or no verdict to count; 2 usage or
configuration; 3 rows failed at the provider after retries.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from introspection_cli.errors import CommandResult, ExitCode, UsageError, exit_code_for
from introspection_cli.estimation.counts import EstimateRefused, ProductionCounts
from introspection_cli.evaluation.fingerprint import judge_fingerprint
from introspection_cli.evaluation.plan import load_valid_recipe
from introspection_cli.evaluation.runner import EvalOptions, ProgressCallback
from introspection_cli.recipe.model import Judge
from introspection_cli.recipe.selection import named_judge
from introspection_cli.reporting.metrics import REPORT_SPLITS, SPLIT_ALIASES
from introspection_cli.reporting.outputs import EstimateOutput
from introspection_cli.reporting.registry import ReportKind, check_format, render
from introspection_cli.workflows.estimate_calibration import CalibrationSource, calibration_for
from introspection_cli.workflows.judges_eval import provider_failure

if TYPE_CHECKING:
    from introspection_cli.estimation.misfit import Misfit
    from introspection_cli.evaluation.batch import BatchEvents


#: The most production verdicts ``--passed/--total/--not-applicable`` may count: a
#: double holds every count exactly up to 2**53, and numpy's multinomial draws need them
#: in a C long; 10^15 is far past any production and inside both.
MAX_VERDICTS = 10 ** 15


@dataclass(frozen=True)
class EstimateSettings:
    """What to estimate from, and how to print it."""

    judge: str
    passed: int | None = None
    total: int | None = None
    not_applicable: int | None = None
    rows: Path | None = None
    report: Path | None = None
    split: str | None = None
    allow_misfit: bool = False
    design: str | None = None  # "random": the labelled rows of --rows are a random sample
    by_gate: bool = False
    segment: str | None = None
    fmt: str = "text"

    def check(self) -> None:
        self._check_design()
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
        if self.not_applicable is not None and (not counts or self.not_applicable < 0):
            raise UsageError("--not-applicable J goes with --passed K --total N (J >= 0: the "
                             "judge's not_applicable verdicts besides the N pass/fail ones)")
        if counts and (self.total or 0) + (self.not_applicable or 0) > MAX_VERDICTS:
            raise UsageError(f"--total and --not-applicable count at most {MAX_VERDICTS:,} "
                             "verdicts together; check the counts")
        if (self.report is None) != (self.split is None):
            raise UsageError("--report and --split go together: the calibration is that "
                             "split's rows in that report")
        if self.split is not None and self.split not in (*REPORT_SPLITS, *SPLIT_ALIASES):
            raise UsageError(f"unknown --split {self.split!r}; use one of: "
                             f"{', '.join(REPORT_SPLITS)} (all is taken as scored)")
        check_format(ReportKind.ESTIMATE, self.fmt)

    def _check_design(self) -> None:
        if self.design is None:
            if self.by_gate or self.segment is not None:
                raise UsageError("--by-gate and --segment go with --design random")
            return
        if self.design != "random":
            raise UsageError(f"unknown --design {self.design!r}; the one design is random "
                             "(without --design the calibration corrects the rate)")
        if self.rows is None or self.passed is not None or self.total is not None:
            raise UsageError("--design random needs --rows FILE (the production rows, some "
                             "labelled at random), not --passed/--total")
        if self.report is not None or self.allow_misfit:
            raise UsageError("--design random estimates from the labelled rows of --rows: "
                             "--report and --allow-misfit are for the calibration correction")
        if self.by_gate and self.segment is not None:
            raise UsageError("--by-gate and --segment KEY are two ways to segment: use one")
        if self.segment is not None and not all(self.segment.split(".")):
            raise UsageError(f"--segment {self.segment!r}: give a judge_input field path "
                             "such as metadata.channel")


def estimate_judge(path: Path, options: EvalOptions, settings: EstimateSettings, *,
                   progress: ProgressCallback | None = None,
                   batch_events: BatchEvents | None = None) -> CommandResult:
    """Run ``judges estimate``: the estimate to print, and the exit code."""
    settings.check()
    if settings.design == "random":
        from introspection_cli.workflows.estimate_random import estimate_random_design

        assert settings.rows is not None  # checked
        return estimate_random_design(path, options, settings.rows, judge_name=settings.judge,
                                      by_gate=settings.by_gate, segment=settings.segment,
                                      fmt=settings.fmt, progress=progress,
                                      batch_events=batch_events)
    return _correct(path, options, settings, progress, batch_events)


def _correct(path: Path, options: EvalOptions, settings: EstimateSettings,
             progress: ProgressCallback | None,
             batch_events: BatchEvents | None) -> CommandResult:
    """The corrected pass rate (:mod:`introspection_cli.estimation.threeway`)."""
    from introspection_cli.estimation import threeway

    recipe, warnings = load_valid_recipe(path, [settings.judge])
    judge = named_judge(recipe, settings.judge)
    calibration = calibration_for(judge, settings.report, settings.split)
    counts_na = settings.rows is not None or settings.not_applicable is not None
    # The calibration alone can refuse: before any row of --rows is paid for.
    model = threeway.prepare(calibration.confusion, counts_not_applicable=counts_na)
    problems: list[str] = []
    exit_code = ExitCode.OK
    if settings.rows is not None:
        production, observed, problems, exit_code = _observed_on_rows(
            path, judge, settings.rows, options, progress, batch_events)
    else:
        assert settings.passed is not None and settings.total is not None  # checked
        production = ProductionCounts(settings.passed, settings.total - settings.passed,
                                      settings.not_applicable)
        observed = {"source": "counts"}
    try:
        if production.judged == 0:
            raise EstimateRefused(f"no pass or fail verdict of judge {judge.name} among the "
                                  f"rows of {settings.rows}: nothing to correct")
        corrected = threeway.corrected_rate(model, production)
    except EstimateRefused as refusal:
        if exit_code == ExitCode.OK:
            raise
        # Why there is too little to count (rows failed at the provider, rows rejected)
        # decides the exit code, and is said first.
        return CommandResult("", (*problems, str(refusal)), exit_code)
    notes = [*warnings, *calibration.warnings, *corrected.notes]
    if corrected.misfit.misfit:
        misfit = _misfit_sentence(corrected.misfit)
        if not settings.allow_misfit:
            raise EstimateRefused(misfit + ". Look at what changed, label rows like these, "
                                  "or pass --allow-misfit to see the estimate anyway")
        notes.insert(0, misfit + " (shown because of --allow-misfit)")
    payload = _payload(judge, calibration, production, observed, corrected)
    text = render(ReportKind.ESTIMATE, check_format(ReportKind.ESTIMATE, settings.fmt),
                  EstimateOutput(payload, gated_judge=judge.gate is not None))
    return CommandResult(text, (*problems, *(f"warning: {note}" for note in notes)), exit_code)


def _misfit_sentence(misfit: Misfit) -> str:
    return ("production contradicts the calibration: its verdict shares are not ones the "
            "judge's measured error rates can produce, beyond the sampling error of both "
            f"(Pearson X² {misfit.statistic:.3g} against the best joint fit, p = "
            f"{misfit.p_value:.2g} <= {misfit.level:g} by a bootstrap of both samples). The "
            "conversations may have drifted or come from another population, or the "
            "calibration measured the rates on too few rows")


def _payload(judge: Judge, calibration: CalibrationSource, production: ProductionCounts,
             observed: dict[str, Any], corrected: Any) -> dict[str, Any]:
    judged = production.passed + production.failed
    return {
        "judge": judge.name,
        "fingerprint": judge_fingerprint(judge),
        "calibration": calibration.as_json(),
        "observed": {**observed, "passed": production.passed, "total": judged,
                     "not_applicable": production.not_applicable,
                     "rate": production.passed / judged if judged else None},
        **corrected.as_json(),
    }


def _observed_on_rows(recipe: Path, judge: Judge, rows_file: Path, options: EvalOptions,
                      progress: ProgressCallback | None, batch_events: BatchEvents | None
                      ) -> tuple[ProductionCounts, dict[str, Any], list[str], ExitCode]:
    """Run the judge over the exported rows: its outcomes, and what went wrong."""
    from introspection_cli.evaluation.plan import plan_unlabelled
    from introspection_cli.evaluation.runner import run_plans

    if not rows_file.is_file():
        raise UsageError(f"--rows {rows_file}: no such file; pass exported fixtures "
                         "(`introspection conversations get --judge-fixtures`)")
    plan = plan_unlabelled(judge, rows_file, provider=options.provider, model=options.model,
                           regex_timeout=options.regex_timeout)
    result = run_plans(str(recipe), [plan], options, progress=progress,
                       batch_events=batch_events)
    (run,) = result.run.judges
    outcomes = Counter(row.outcome for row in run.rows)
    problems = []
    if run.rejected:
        lines = sorted({rejected.line for rejected in run.rejected})
        problems.append(f"{len(lines)} row(s) of {rows_file} rejected (lines "
                        f"{', '.join(map(str, lines[:10]))}{', ...' if len(lines) > 10 else ''})"
                        "; they are left out")
    failed, failures = provider_failure(result)
    code = exit_code_for(problems=bool(run.rejected)) if failed is None else failed
    if failed is not None:
        problems += [*failures, "those rows are left out of the observed rate"]
    production = ProductionCounts(outcomes["pass"], outcomes["fail"],
                                  outcomes["not_applicable"], outcomes["gated"],
                                  outcomes["error"])
    observed = {"source": "rows", "path": str(rows_file),
                "outcomes": {outcome: outcomes[outcome] for outcome in
                             ("pass", "fail", "not_applicable", "gated", "error")},
                "rejected": len(run.rejected)}
    return production, observed, problems, code
