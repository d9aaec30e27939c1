"""``judges certify`` end to end, minus the command line.

Runs each judge over one split (``test`` by default: the rows ``judges eval``
holds out), records the look in the judge's exposure file, decides
(:mod:`introspection_cli.certification.decision`, at family-wise levels with
``--all --family-wise``) and, when certified, writes
``judges/<name>.certificate.json`` atomically. A split that cannot be
certified whatever the judge says (too few ``pass`` or ``fail`` rows, or
rejected rows in the file) is decided from the file, before any model call.
``--verify`` re-runs a certificate's recorded procedure instead
(:mod:`.certify_verify`).

Exit codes: 0 certified (every judge); 1 not certified or insufficient data; 2
usage or configuration (as in eval, and a certificate that cannot be written);
3 rows failed at the provider after retries (then no certificate is written:
rerun).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from introspection_cli.certification.certificate import FamilyWise, write_certificate
from introspection_cli.certification.decision import DEFAULT_ALPHA, Certification, decide
from introspection_cli.certification.familywise import METHODS, family_decisions
from introspection_cli.certification.validator import MAX_ERROR_RATE, MIN_BAR
from introspection_cli.errors import CommandResult, ExitCode, UsageError, exit_code_for
from introspection_cli.evaluation.cache import default_cache_dir
from introspection_cli.evaluation.fingerprint import judge_identity
from introspection_cli.evaluation.ledger import open_ledger, record_run
from introspection_cli.evaluation.outcomes import EvalRun
from introspection_cli.evaluation.plan import load_valid_recipe
from introspection_cli.evaluation.runner import (
    EvalOptions,
    EvalResult,
    ProgressCallback,
    make_plans,
    run_plans,
)
from introspection_cli.provenance import utc_now
from introspection_cli.recipe.model import Recipe
from introspection_cli.recipe.selection import select_judges
from introspection_cli.reporting.outputs import CertifyOutput, Plan
from introspection_cli.reporting.registry import ReportKind, check_format, render
from introspection_cli.workflows.certify_output import payload, power_plan
from introspection_cli.workflows.certify_steps import (
    Candidate,
    build_certificate,
    prepare,
    record_exposure,
)
from introspection_cli.workflows.judges_eval import provider_failure

CERTIFIABLE_SPLITS = ("test", "dev", "train")


@dataclass(frozen=True)
class CertifySettings:
    """What to certify against: the judges, the bar, the split, the error ceiling, the
    family-wise method, an accepted exposure, the output format."""

    judges: tuple[str, ...] = ()
    every: bool = False  # --all: every judge with a calibration file
    bar: float = 0.8
    split: str = "test"
    max_error_rate: float = MAX_ERROR_RATE
    bar_na: float | None = None
    family_wise: str | None = None
    accept_exposure: str | None = None
    fmt: str = "text"
    #: --min-rater-alpha: the raters' alpha lower bound must reach this (None: not asked).
    min_rater_alpha: float | None = None

    def check(self) -> None:
        if self.every == bool(self.judges):
            raise UsageError("judges certify needs --judge NAME or --all: certificates are "
                             "per judge")
        if self.split not in CERTIFIABLE_SPLITS:
            raise UsageError(f"unknown --split {self.split!r}; use one of: "
                             f"{', '.join(CERTIFIABLE_SPLITS)}")
        for flag, value in (("--bar", self.bar), ("--bar-na", self.bar_na)):
            if value is not None and not (math.isfinite(value) and 0 < value < 1):
                raise UsageError(f"{flag} {value} must be a number above 0 and below 1")
        if not (math.isfinite(self.max_error_rate) and 0 <= self.max_error_rate <= 1):
            raise UsageError(f"--max-error-rate {self.max_error_rate} must be from 0 to 1")
        if self.family_wise is not None and self.family_wise not in METHODS:
            raise UsageError(f"unknown --family-wise {self.family_wise!r}; use one of: "
                             f"{', '.join(METHODS)}")
        if self.family_wise is not None and not self.every:
            raise UsageError("--family-wise applies to a family of judges: use it with --all")
        if self.accept_exposure is not None and not self.accept_exposure.strip():
            raise UsageError("--accept-exposure needs a reason (it is stored in the "
                             "certificate and shown by check)")
        if self.min_rater_alpha is not None and not (
                math.isfinite(self.min_rater_alpha) and -1 <= self.min_rater_alpha <= 1):
            raise UsageError(f"--min-rater-alpha {self.min_rater_alpha} must be a number from "
                             "-1 to 1 (Krippendorff's alpha: 1 is perfect agreement, 0 chance)")
        check_format(ReportKind.CERTIFY, self.fmt)


def certify_judges(path: Path, options: EvalOptions, settings: CertifySettings, *,
                   progress: ProgressCallback | None = None) -> CommandResult:
    """Run ``judges certify`` on the recipe at ``path``: what to print and the exit code."""
    settings.check()
    recipe, warnings = load_valid_recipe(path, settings.judges)
    candidates = [prepare(judge, provider=options.provider, model=options.model,
                          split=settings.split, bar=settings.bar, samples=options.samples,
                          min_rater_alpha=settings.min_rater_alpha)
                  for judge in select_judges(recipe, settings.judges)]
    tested = [candidate for candidate in candidates if candidate.early is None]
    notes = list(warnings)
    failed: ExitCode | None = None
    failures: list[str] = []
    if tested:
        result = _run(recipe, replace(options, judges=tuple(c.name for c in tested),
                                      splits=(settings.split,)), tested, progress)
        runs = {run.name: run for run in result.run.judges}
        for candidate in tested:
            candidate.run = runs[candidate.name]
        notes += _record(tested, result.run, options, settings.split)
        notes += result.warnings
        _decide(tested, settings)
        failed, failures = provider_failure(result)
    written = {} if failed is not None else _write(tested, settings, options.samples)
    return _result(path, candidates, settings, options.samples, written,
                   (failed, failures), notes)


def _run(recipe: Recipe, options: EvalOptions, tested: Sequence[Candidate],
         progress: ProgressCallback | None) -> EvalResult:
    """Evaluate the split's rows of each judge, less the rows its raters are in conflict on
    (never evaluated: adjudicating them later leaves the test rows unseen)."""
    left_out = {candidate.name: set(candidate.excluded) for candidate in tested}
    plans = [replace(plan, rows=tuple(row for row in plan.rows if row.conversation_id
                                      not in left_out.get(plan.judge.name, ())))
             for plan in make_plans(recipe, options)]
    return run_plans(str(recipe.root), plans, options, progress=progress)


def _record(tested: Sequence[Candidate], run: EvalRun, options: EvalOptions,
            split: str) -> list[str]:
    """Each judge's look in its exposure file, then the run in the evaluation ledger (dev
    figures); the ledger's warnings."""
    cache_dir = options.cache_dir or default_cache_dir()
    for candidate in tested:
        record_exposure(candidate, samples=options.samples, cache_dir=cache_dir, split=split)
    ledger = open_ledger(cache_dir)
    try:
        return record_run(ledger, run)
    finally:
        ledger.close()


def _decide(tested: Sequence[Candidate], settings: CertifySettings) -> None:
    """Each judge's decision: at the per-judge level, or at its level in the family."""
    def at(candidate: Candidate, alpha: float) -> Certification:
        assert candidate.run is not None
        return decide(candidate.run.rows, bar=settings.bar,
                      max_error_rate=settings.max_error_rate, bar_na=settings.bar_na,
                      alpha=alpha, bound=candidate.bound)

    if settings.family_wise is None:
        for candidate in tested:
            candidate.decision = at(candidate, DEFAULT_ALPHA)
        return
    by_name = {candidate.name: candidate for candidate in tested}
    decisions = family_decisions(list(by_name), lambda name, alpha: at(by_name[name], alpha),
                                 method=settings.family_wise, alpha=DEFAULT_ALPHA)
    family = FamilyWise(settings.family_wise, len(tested), DEFAULT_ALPHA)
    for name, decision in decisions.items():
        by_name[name].decision, by_name[name].family = decision, family


def _write(tested: Sequence[Candidate], settings: CertifySettings,
           samples: int) -> dict[str, str]:
    """Write the certificate of every certified judge; judge -> where it was written."""
    written = {}
    for candidate in tested:
        if candidate.decision is None or not candidate.decision.certified:
            continue
        clean = candidate.exposure.clean or settings.split != "test"
        accepted = settings.accept_exposure if not clean else None
        at = candidate.look.at if candidate.look is not None else utc_now()
        write_certificate(candidate.target, build_certificate(
            candidate, split=settings.split, samples=samples, accepted=accepted,
            certified_at=at))
        written[candidate.name] = str(candidate.target)
    return written


def _result(path: Path, candidates: Sequence[Candidate], settings: CertifySettings,
            samples: int, written: dict[str, str],
            failure: tuple[ExitCode | None, list[str]], notes: list[str]) -> CommandResult:
    problems: list[str] = []
    outputs: list[tuple[dict[str, Any], Plan]] = []
    for candidate in candidates:
        plan = power_plan(candidate.final, candidate, settings.split)
        outputs.append((payload(candidate, settings.split, samples, plan,
                                written.get(candidate.name)), plan))
        problems += _problems(path, candidate)
        notes += _notes(candidate, settings, candidate.name in written)
    failed, failures = failure
    exit_code = exit_code_for(problems=not all(c.final.certified for c in candidates))
    if failed is not None:
        exit_code = failed
        problems += [*failures, "no certificate was written: a decision needs every row"]
    problems += [f"warning: {note}" for note in dict.fromkeys(notes)]
    document = {"judges": [data for data, _ in outputs], "family_wise": settings.family_wise,
                "alpha": DEFAULT_ALPHA} if settings.every else outputs[0][0]
    output = CertifyOutput(tuple(outputs), document)
    stdout = render(ReportKind.CERTIFY, check_format(ReportKind.CERTIFY, settings.fmt), output)
    return CommandResult(stdout, tuple(problems), exit_code)


def _problems(path: Path, candidate: Candidate) -> list[str]:
    decision = candidate.final
    problems = []
    if candidate.split.rejected:
        problems.append(f"judge {candidate.name}: "
                        f"{len({line for line, _, _ in candidate.split.rejected})} calibration "
                        f"row(s) rejected; `introspection check {path}` lists them")
    heading = "insufficient data" if decision.decision == "insufficient_data" else \
        "not certified"
    return problems + [f"judge {candidate.name}: {heading}: {reason}"
                       for reason in decision.reasons if not decision.certified]


def _notes(candidate: Candidate, settings: CertifySettings, written: bool) -> list[str]:
    """What the user should know that does not change the exit code."""
    notes = []
    if candidate.identity.fingerprint != judge_identity(candidate.judge).fingerprint:
        judge = candidate.judge
        notes.append(f"the certificate is for {candidate.provider}/{candidate.model}, but "
                     f"judges/{judge.name}.yaml names {judge.llm.provider}/{judge.llm.model}: "
                     "`introspection check` reports it stale until the judge file names what "
                     "was certified")
    exposure = candidate.exposure
    if candidate.look is not None and not exposure.clean:  # the run looked at test rows
        what = "; ".join(exposure.problems())
        if written and settings.accept_exposure:
            notes.append(f"judge {candidate.name}: its test rows' exposure is not clean "
                         f"({what}); accepted: {settings.accept_exposure}")
        else:
            notes.append(f"judge {candidate.name}: its test rows' exposure is not clean "
                         f"({what}): its test figures are optimistic, and `introspection check "
                         "--require-certified` refuses a certificate made so unless it was "
                         "made with --accept-exposure \"REASON\". Label fresh test rows")
    elif written and settings.accept_exposure:
        notes.append(f"judge {candidate.name}: its exposure is clean: --accept-exposure was "
                     "not needed and is not recorded")
    if written and settings.bar < MIN_BAR:
        notes.append(f"--bar {settings.bar:g} is below {MIN_BAR:g}: `introspection check` "
                     f"reports this certificate invalid unless run with --min-bar "
                     f"{settings.bar:g}")
    if written and settings.max_error_rate > MAX_ERROR_RATE:
        notes.append(f"--max-error-rate {settings.max_error_rate:g} is above "
                     f"{MAX_ERROR_RATE:g}: `introspection check --require-certified` refuses "
                     "this certificate; certify with the default for CI")
    return notes
