"""``judges eval`` end to end, minus the command line.

The CLI turns options into :class:`EvalOptions` / :class:`ReportSettings` and
calls these; they return what to print and the exit code, so the same flow is
testable without Typer. Exit codes: 2 when the provider refused requests as
wrong (a non-retryable 4xx: a bad model name or parameter), else 3 when rows
failed at the provider after retries (the report is still printed and written in
both cases), else 1 when rows were rejected or a gate was missed, else 0. A
rejected or missing API key raises :class:`~introspection_cli.errors.ConfigError`
(exit 2) before or instead of the report.

The ``test`` split is held out: it is evaluated only when asked for
(``--split test``, or gated on with ``--threshold-split test``), and every
look at a judge's test rows is recorded in its exposure file in the recipe
(``judges/<name>.exposure.jsonl``); every row evaluated outside ``test`` goes to
the evaluation ledger beside the cache, for ``judges status``'s dev figures.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from introspection_cli.errors import CommandResult, ExitCode, UsageError, exit_code_for
from introspection_cli.evaluation.cache import default_cache_dir
from introspection_cli.evaluation.ledger import open_ledger, record_run
from introspection_cli.evaluation.outcomes import EvalRun
from introspection_cli.evaluation.plan import load_valid_recipe
from introspection_cli.evaluation.providers import API_KEY_ENV
from introspection_cli.evaluation.runner import (
    EvalOptions,
    EvalResult,
    ProgressCallback,
    run_eval,
)
from introspection_cli.formats import Format
from introspection_cli.fsutil import check_output_target
from introspection_cli.pricing import load_prices
from introspection_cli.provenance import git_state
from introspection_cli.reporting.assemble import assemble_report
from introspection_cli.reporting.gates import GateSettings, gate_failures
from introspection_cli.reporting.model import Provenance, write_report_text
from introspection_cli.reporting.registry import ReportKind, render
from introspection_cli.reporting.report import EvalReport

if TYPE_CHECKING:  # the batch package is imported only by a --batch run, the baseline
    # code only with --baseline
    from introspection_cli.evaluation.batch import BatchEvents, BatchOptions
    from introspection_cli.recipe.model import Recipe
    from introspection_cli.reporting.baseline import Comparison

#: What ``judges eval`` evaluates without ``--split``: everything but the held-out test split.
DEFAULT_SPLITS = ("train", "dev", "unsplit")


@dataclass(frozen=True)
class ReportSettings:
    """How to present the run and what it must reach."""

    fmt: Format = Format.TEXT
    output: Path | None = None
    #: JUnit XML (``--junit``) and the HTML page (``--html``), written like ``output``.
    junit: Path | None = None
    html: Path | None = None
    baseline: Path | None = None
    gates: GateSettings = field(default_factory=GateSettings)
    color: bool = False


def model_choices(models: Sequence[str], provider: str | None
                  ) -> tuple[str | None, str | None, tuple[tuple[str | None, str], ...]]:
    """``--model`` values (each ``MODEL`` or ``PROVIDER:MODEL``) and ``--provider`` as
    (provider, model, further models to compare) for :class:`EvalOptions`.

    ``openai:`` and ``anthropic:`` are the only prefixes: ``llama3:8b`` is a model
    name. A model without a prefix uses ``--provider``, else each judge's own.
    """
    choices: list[tuple[str | None, str]] = []
    for value in models:
        prefix, sep, name = value.partition(":")
        choice = (prefix, name) if sep and prefix in API_KEY_ENV else (None, value)
        if not choice[1].strip():
            raise UsageError(f"--model {value!r} names no model; pass MODEL or PROVIDER:MODEL")
        if provider is not None and choice[0] not in (None, provider):
            raise UsageError(f"--model {value} is for {choice[0]}, but --provider {provider} "
                             "was given; drop one of them")
        if choice in choices:
            raise UsageError(f"--model {value} is given twice")
        choices.append(choice)
    if not choices:
        return provider, None, ()
    (first_provider, first_model), *others = choices
    return first_provider or provider, first_model, tuple(others)


def evaluation_splits(requested: Sequence[str], threshold_split: str) -> tuple[str, ...]:
    """The splits a run evaluates: ``--split`` values, else all but ``test``; plus the
    split the gates apply to, so ``--threshold-split test`` evaluates the test split."""
    splits = tuple(requested) or DEFAULT_SPLITS
    if threshold_split in ("train", "dev", "test", "unsplit") and threshold_split not in splits:
        splits += (threshold_split,)
    return splits


def evaluate_recipe(path: Path, options: EvalOptions, settings: ReportSettings, *,
                    progress: ProgressCallback | None = None,
                    batch_events: BatchEvents | None = None) -> CommandResult:
    """Run ``judges eval`` on the recipe at ``path``: the report to print and the exit code."""
    recipe, recipe_warnings = load_valid_recipe(path, options.judges)
    # Check everything that can fail cheaply before any model call costs money.
    settings.gates.check()
    _check_report_files(settings)
    baseline = None
    if settings.baseline is not None:
        from introspection_cli.reporting.baseline import load_baseline

        baseline = load_baseline(settings.baseline)
    prices = load_prices()  # a broken price table is exit 2 before any call
    options = replace(options, splits=evaluation_splits(options.splits, settings.gates.split))
    result = run_eval(recipe, options, progress=progress, batch_events=batch_events)
    ledger_warnings = record_evaluations(result.run, options, recipe)
    report, gates = assemble_report(result.run, Provenance(git=git_state(path)), settings.gates,
                                    prices=prices, batch=options.batch is not None,
                                    raters=rater_ceilings(recipe, result.run))
    comparison = transcripts = None
    if baseline is not None:
        from introspection_cli.reporting.baseline import compare_with_baseline

        comparison = compare_with_baseline(report, baseline)
    if settings.html is not None:
        from introspection_cli.workflows.transcripts import shown_transcripts

        transcripts = shown_transcripts(recipe, report)
    problems = _write_report_files(settings, report, comparison, transcripts)
    output_failed = bool(problems)
    stdout = render(ReportKind.EVAL, settings.fmt, report, color=settings.color,
                    comparison=comparison)
    problems += _run_problems(result)
    problems += gate_failures(report, gates)
    warnings = [*recipe_warnings, *ledger_warnings, *result.warnings]
    if result.cache_write_failures:
        warnings.append(f"{result.cache_write_failures} verdict(s) could not be written to "
                        "the cache")
    exit_code = exit_code_for(usage=output_failed or bool(result.refused),
                              service=bool(result.service_failures), problems=bool(problems))
    problems += [f"warning: {warning}" for warning in warnings]
    return CommandResult(stdout, tuple(problems), exit_code)


def _report_files(settings: ReportSettings) -> list[tuple[str, Path, Format]]:
    """(flag, path, format) of every file the report is written to."""
    files = (("--output", settings.output, Format.JSON), ("--junit", settings.junit, Format.JUNIT),
             ("--html", settings.html, Format.HTML))
    return [(flag, path, fmt) for flag, path, fmt in files if path is not None]


def _check_report_files(settings: ReportSettings) -> None:
    """Each report file can be written, and no two flags name the same file (exit 2)."""
    seen: dict[Path, str] = {}
    for flag, target, _ in _report_files(settings):
        check_output_target(target, flag=flag)
        where = target.resolve()
        if where in seen:
            raise UsageError(f"{seen[where]} and {flag} both name {target}; give each its "
                             "own file")
        seen[where] = flag


def _write_report_files(settings: ReportSettings, report: EvalReport,
                        comparison: Comparison | None,
                        transcripts: Mapping[str, Mapping[int, Sequence[Any]]] | None
                        ) -> list[str]:
    """Write ``--output``, ``--junit`` and ``--html`` atomically; a line for each that failed."""
    problems = []
    for flag, path, fmt in _report_files(settings):
        try:
            write_report_text(path, render(ReportKind.EVAL, fmt, report,
                                           comparison=comparison, transcripts=transcripts))
        except OSError as exc:  # checked before the run, so it changed meanwhile
            problems.append(f"cannot write {flag} {path} ({exc.strerror or type(exc).__name__})"
                            + ("; the report is on stdout only" if flag == "--output" else ""))
    return problems


def batch_options(batch: bool, *, poll_interval: float | None,
                  max_wait: float | None) -> BatchOptions | None:
    """``--batch``'s options, checked; None without ``--batch`` (whose flags need it)."""
    if not batch:
        for flag, value in (("--poll-interval", poll_interval), ("--max-wait", max_wait)):
            if value is not None:
                raise UsageError(f"{flag} only applies with --batch")
        return None
    from introspection_cli.evaluation.batch import BatchOptions

    defaults = BatchOptions()
    options = BatchOptions(
        poll_interval=defaults.poll_interval if poll_interval is None else poll_interval,
        max_wait=defaults.max_wait if max_wait is None else max_wait)
    if not (0 < options.poll_interval < math.inf):  # NaN fails this too
        raise UsageError("--poll-interval must be a positive number of seconds")
    if not (0 <= options.max_wait < math.inf):
        raise UsageError("--max-wait must be 0 or a positive number of seconds")
    return options


def record_evaluations(run: EvalRun, options: EvalOptions, recipe: Recipe) -> list[str]:
    """Record each look at test rows in the judge's exposure file, then the run's other
    rows in the evaluation ledger beside the cache; their warnings, one line each.

    Recorded with ``--no-cache`` too: test exposure is a fact about what was looked
    at, not about where verdicts came from.
    """
    cache_dir = options.cache_dir or default_cache_dir()
    looks = _record_test_looks(recipe, run, options.samples, cache_dir)
    ledger = open_ledger(cache_dir)
    try:
        return [*looks, *record_run(ledger, run)]
    finally:
        ledger.close()


def _record_test_looks(recipe: Recipe, run: EvalRun, samples: int, cache_dir: Path
                       ) -> list[str]:
    """The exposure files' side of :func:`record_evaluations`: a run without a test row
    (the usual one: ``test`` is held out) has nothing to record, and loads none of it."""
    if not any(row.split == "test" for judge in run.judges for row in judge.rows):
        return []
    from introspection_cli.certification.exposure_record import record_test_looks

    return record_test_looks(recipe, run, samples=samples, cache_dir=cache_dir)


def provider_failure(result: EvalResult) -> tuple[ExitCode | None, list[str]]:
    """How the provider failed a run, for commands built on it (certify, estimate): exit 2
    when it refused requests as wrong, 3 when rows failed after retries; None when neither."""
    problems = [p for p in _run_problems(result) if p not in _rejection_problems(
        result.run.judges)]
    if not (result.refused or result.service_failures):
        return None, []
    return exit_code_for(usage=bool(result.refused), service=True), problems


def rater_ceilings(recipe: Recipe, run: EvalRun) -> dict[str, dict[str, Any]]:
    """Judge name -> its raters' agreement, the ceiling its own agreement is read against,
    for each judge of ``run`` with an annotations file."""
    from introspection_cli.annotations.location import annotations_path

    rated = [judge for name in dict.fromkeys(judge.name for judge in run.judges)
             if (judge := recipe.judges.get(name)) is not None
             and annotations_path(judge.path.parent, judge.name).exists()]
    if not rated:  # the usual recipe: the figures' modules (numpy among them) stay unloaded
        return {}
    from introspection_cli.workflows.agree import ceiling_json

    ceilings = {}
    for judge in rated:
        ceiling = ceiling_json(judge)
        if ceiling is not None:
            ceilings[judge.name] = ceiling
    return ceilings


def _run_problems(result: EvalResult) -> list[str]:
    problems = []
    if result.refused:
        problems.append(f"{result.refused} row(s) are errors because " + "; ".join(
            result.refusals or ("the provider refused the requests",)))
    if result.batches_running:
        problems.append(f"{result.service_failures} row(s) are errors in the report: they "
                        "wait for a batch still running at the provider, or failed there. "
                        f"Batch(es) {', '.join(result.batches_running)} keep running; rerun "
                        "this command to collect their results (nothing is submitted again) "
                        "and retry the failed rows")
    elif result.service_failures:
        # Each row's error says how it failed and which retries were made (maybe none:
        # --max-retries 0, or a row not sent once the provider stopped answering).
        problems.append(f"{result.service_failures} row(s) failed at the model provider and "
                        "are errors in the report (each row's error says how); rerun to "
                        "retry them (verdicts already received are cached)")
    return problems + _rejection_problems(result.run.judges)


def _rejection_problems(judges: Sequence[Any]) -> list[str]:
    problems = []
    # A judge evaluated with several models has the same rejected rows in each run.
    first_runs: dict[str, Any] = {}
    for judge in judges:
        first_runs.setdefault(judge.name, judge)
    for judge in first_runs.values():
        lines = sorted({rejected.line for rejected in judge.rejected})  # a row may have several
        if lines:
            problems.append(
                f"judge {judge.name}: {len(lines)} calibration row(s) rejected (lines "
                f"{', '.join(str(line) for line in lines[:10])}{', ...' if len(lines) > 10 else ''}"
                "); they are listed in the report")
    return problems
