"""``introspection judges certify``, ``judges estimate``, ``judges plan`` and ``judges status``.

The trust decisions on a judge: is it good enough (certify), what is the true
pass rate behind the one it reports (estimate), and where its calibration
stands (status). Thin like every command module: options become settings and
the workflows in :mod:`introspection_cli.workflows` do the work, imported
inside each command.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from introspection_cli.cli.stdout import finish

_RECIPE = Annotated[Path, typer.Argument(
    help="Recipe directory (the one containing SYSTEM.md). Default: the current directory.")]


def certify(
    recipe: _RECIPE = Path("."),
    judge: Annotated[str, typer.Option("--judge", metavar="NAME",
                                       help="The judge to certify.")] = "",
    every: Annotated[bool, typer.Option(
        "--all", help="Certify every judge with a calibration file.")] = False,
    bar: Annotated[float, typer.Option(
        help="Both the TPR and the TNR lower bound must reach this (check requires at "
             "least 0.80 unless --min-bar).")] = 0.8,
    split: Annotated[str, typer.Option(
        help="The split to certify on: test (held out by judges eval), dev or train.")] = "test",
    max_error_rate: Annotated[float, typer.Option(
        help="At most this share of the split's rows may be errors (check "
             "--require-certified accepts at most 0.05).")] = 0.05,
    bar_na: Annotated[float | None, typer.Option(
        help="Also require na_recall's lower bound (not_applicable rows judged "
             "not_applicable or gated) to reach this.")] = None,
    family_wise: Annotated[str | None, typer.Option(
        "--family-wise", metavar="holm|bonferroni",
        help="With --all: test the judges together so that the chance of any wrong "
             "certificate among them stays at 2.5%.")] = None,
    accept_exposure: Annotated[str | None, typer.Option(
        "--accept-exposure", metavar="REASON",
        help="Record why a certificate whose test rows' exposure is not clean is accepted "
             "(check --require-certified refuses it otherwise).")] = None,
    min_rater_alpha: Annotated[float | None, typer.Option(
        "--min-rater-alpha", metavar="A",
        help="Refuse (not certified) when the lower bound of the raters' Krippendorff alpha "
             "(judges agree) is below A: labels people do not agree on certify nothing.")
    ] = None,
    verify: Annotated[bool, typer.Option(
        "--verify", help="Run the certificate's recorded procedure again on its recorded "
                         "rows; exit 1 when the decision differs.")] = False,
    samples: Annotated[int, typer.Option(
        min=1, help="Calls per row, majority vote (as in judges eval).")] = 1,
    concurrency: Annotated[int, typer.Option(min=1, help="Model calls in flight at once.")] = 8,
    provider: Annotated[str | None, typer.Option(
        help="Use this provider instead of the judge's llm.provider.")] = None,
    model: Annotated[str | None, typer.Option(
        help="Use this model instead of the judge's llm.model.")] = None,
    no_cache: Annotated[bool, typer.Option(
        "--no-cache", help="Neither read nor write the verdict cache.")] = False,
    max_retries: Annotated[int, typer.Option(
        min=0, help="Retries per request on 408, 409, 429, 5xx, timeouts and connection "
                    "errors.")] = 2,
    timeout: Annotated[float, typer.Option(
        min=0.001, help="Seconds to wait for one model response.")] = 60.0,
    fmt: Annotated[str, typer.Option("--format", help="text or json.")] = "text",
) -> None:
    """Certify a judge on its held-out test rows, and write judges/NAME.certificate.json.

    Certified when the Wilson lower bounds (one-sided 2.5% each) of both TPR and
    TNR reach --bar and at most --max-error-rate of the rows are errors;
    insufficient data when the split holds too few scorable pass or fail rows for
    even a perfect judge (16 of each at 0.80). Every look at the test rows is
    recorded in judges/NAME.exposure.jsonl. Exit codes: 0 certified (--verify:
    the recorded procedure certifies it again); 1 not certified, insufficient
    data, or not verified; 2 usage error, an API key missing or rejected; 3 rows
    failed at the model provider after retries. When raters labelled the rows
    (judges label --rater), the rows they are in conflict on are left out until
    adjudicated, and the certificate says which.
    """
    from introspection_cli.errors import UsageError
    from introspection_cli.evaluation.runner import EvalOptions
    from introspection_cli.workflows.certify import CertifySettings, certify_judges

    if bool(judge) == every:
        raise UsageError("judges certify needs --judge NAME or --all: certificates are per "
                         "judge")
    if verify and (samples != 1 or provider or model or family_wise or accept_exposure
                   or min_rater_alpha is not None):
        raise UsageError("--verify runs the certificate's own procedure: it takes no "
                         "--samples, --provider, --model, --family-wise, --accept-exposure or "
                         "--min-rater-alpha")
    options = EvalOptions(judges=(judge,) if judge else (), samples=samples,
                          concurrency=concurrency, provider=provider, model=model,
                          use_cache=not no_cache, max_retries=max_retries, timeout=timeout)
    settings = CertifySettings(judges=(judge,) if judge else (), every=every, bar=bar,
                               split=split, max_error_rate=max_error_rate, bar_na=bar_na,
                               family_wise=family_wise, accept_exposure=accept_exposure,
                               fmt=fmt, min_rater_alpha=min_rater_alpha)
    if verify:
        from introspection_cli.workflows.certify_verify import verify_certificates

        finish(verify_certificates(recipe, options, settings), what=f"the {fmt} verification")
    finish(certify_judges(recipe, options, settings), what=f"the {fmt} certification")


def estimate(
    recipe: _RECIPE = Path("."),
    judge: Annotated[str, typer.Option("--judge", metavar="NAME",
                                       help="The judge whose pass rate to correct.")] = "",
    passed: Annotated[int | None, typer.Option(
        "--passed", metavar="K", help="Verdicts that were pass in production...")] = None,
    total: Annotated[int | None, typer.Option(
        "--total", metavar="N", help="...out of this many pass/fail verdicts.")] = None,
    not_applicable: Annotated[int | None, typer.Option(
        "--not-applicable", metavar="J",
        help="With --passed/--total: the judge's not_applicable verdicts besides those N "
             "(needed when calibration rows are labelled not_applicable).")] = None,
    rows: Annotated[Path | None, typer.Option(
        "--rows", metavar="FILE",
        help="Or: exported fixtures (labels ignored) to run the judge on; its pass, fail and "
             "not_applicable verdicts on them are the production counts.")] = None,
    report: Annotated[Path | None, typer.Option(
        "--report", metavar="R.json",
        help="Take TPR and TNR from this eval report (with --split) instead of the judge's "
             "certificate.")] = None,
    split: Annotated[str | None, typer.Option(
        "--split", metavar="S", help="The split of --report to calibrate with.")] = None,
    allow_misfit: Annotated[bool, typer.Option(
        "--allow-misfit", help="Print the estimate even when production contradicts the "
                               "calibration (with a warning) instead of exiting 1.")] = False,
    design: Annotated[str | None, typer.Option(
        "--design", metavar="random",
        help="random: the labelled rows of --rows are a random sample of its rows; estimate "
             "by prediction-powered inference (PPI++) instead of the calibration.")] = None,
    by_gate: Annotated[bool, typer.Option(
        "--by-gate", help="With --design random: estimate where the gate matches and where "
                          "it misses, and overall.")] = False,
    segment: Annotated[str | None, typer.Option(
        "--segment", metavar="KEY",
        help="With --design random: estimate per value of this judge_input field path "
             "(e.g. metadata.channel), and a stratified overall.")] = None,
    concurrency: Annotated[int, typer.Option(min=1, help="Model calls in flight (--rows).")] = 8,
    provider: Annotated[str | None, typer.Option(
        help="With --rows: use this provider instead of the judge's llm.provider.")] = None,
    model: Annotated[str | None, typer.Option(
        help="With --rows: use this model instead of the judge's llm.model.")] = None,
    no_cache: Annotated[bool, typer.Option(
        "--no-cache", help="Neither read nor write the verdict cache.")] = False,
    max_retries: Annotated[int, typer.Option(min=0, help="Retries per request (--rows).")] = 2,
    timeout: Annotated[float, typer.Option(
        min=0.001, help="Seconds to wait for one model response (--rows).")] = 60.0,
    batch: Annotated[bool, typer.Option(
        "--batch", help="With --rows: send uncached rows through the provider's batch API "
                        "(as judges eval --batch).")] = False,
    poll_interval: Annotated[float | None, typer.Option(
        metavar="SECONDS", help="With --batch: seconds before the first poll.")] = None,
    max_wait: Annotated[float | None, typer.Option(
        metavar="SECONDS", help="With --batch: stop waiting after this long.")] = None,
    fmt: Annotated[str, typer.Option("--format", help="text or json.")] = "text",
) -> None:
    """Correct a judge's production pass rate for its measured error rates.

    The calibration (rows by label and verdict) comes from the judge's valid
    certificate, or --report R.json --split S. Two-class: Rogan-Gladen with Lee
    et al.'s (2025) 95% interval; with not_applicable on either side, least
    squares on the simplex with a bootstrap interval. Exit codes: 0 an estimate;
    1 no valid calibration, a refusal (a class with 1-15 rows, a judge no better
    than chance, fewer than 30 production verdicts, production contradicting the
    calibration without --allow-misfit) or rejected rows; 2 usage error; 3 rows
    failed at the provider. With --design random: PPI++ from the labelled rows of
    --rows (a random sample), refused (exit 1) when their verdict mix shows they
    are not one.
    """
    from introspection_cli.errors import UsageError
    from introspection_cli.evaluation.runner import EvalOptions
    from introspection_cli.workflows.estimate import EstimateSettings, estimate_judge
    from introspection_cli.workflows.judges_eval import batch_options

    if not judge:
        raise UsageError("judges estimate needs --judge NAME")
    if batch and rows is None:
        raise UsageError("--batch applies to --rows (the rows the judge is run on)")
    options = EvalOptions(judges=(judge,), concurrency=concurrency, provider=provider,
                          model=model, use_cache=not no_cache, max_retries=max_retries,
                          timeout=timeout,
                          batch=batch_options(batch, poll_interval=poll_interval,
                                              max_wait=max_wait))
    settings = EstimateSettings(judge=judge, passed=passed, total=total,
                                not_applicable=not_applicable, rows=rows, report=report,
                                split=split, allow_misfit=allow_misfit, design=design,
                                by_gate=by_gate, segment=segment, fmt=fmt)
    from introspection_cli.cli.progress import run_with_progress

    finish(run_with_progress(lambda progress, batches: estimate_judge(
        recipe, options, settings, progress=progress, batch_events=batches), batch=batch),
        what=f"the {fmt} estimate")


def status(
    recipe: _RECIPE = Path("."),
    judge: Annotated[list[str] | None, typer.Option(
        "--judge", metavar="NAME",
        help="Only this judge (repeatable). Default: every judge with a calibration file.")
    ] = None,
    bar: Annotated[float, typer.Option(
        help="The certification bar the plan is made for.")] = 0.8,
    fmt: Annotated[str, typer.Option("--format", help="text or json.")] = "text",
) -> None:
    """Where each judge's calibration stands, without calling a model.

    Per judge with a calibration file: rows (rejected by code, labelled by
    label, unlabelled), gate misses, the split x label table, the fingerprint,
    the certificate's state (none, valid, stale, invalid), how many judge
    versions were evaluated on its test rows on this machine, and how many more
    labelled test rows of pass and of fail it needs to be certifiable. Exit 0;
    1 when calibration rows are rejected.
    """
    from introspection_cli.workflows.status_command import status_command

    finish(status_command(recipe, tuple(judge or ()), bar=bar, fmt=fmt),
           what=f"the {fmt} status")


def plan(
    recipe: _RECIPE = Path("."),
    judge: Annotated[str, typer.Option("--judge", metavar="NAME",
                                       help="The judge to plan a certificate for.")] = "",
    expect_tpr: Annotated[float | None, typer.Option(
        "--expect-tpr", metavar="R",
        help="The TPR to plan at, used as given. Default: the judge's dev TPR (shrunk), "
             "else 0.9.")] = None,
    expect_tnr: Annotated[float | None, typer.Option(
        "--expect-tnr", metavar="R",
        help="The TNR to plan at, used as given. Default: the judge's dev TNR (shrunk), "
             "else 0.9.")] = None,
    bar: Annotated[float, typer.Option(
        help="The certification bar both lower bounds must reach.")] = 0.8,
    power: Annotated[float, typer.Option(
        help="The chance of a certificate to plan for, both classes together.")] = 0.8,
    fmt: Annotated[str, typer.Option("--format", help="text or json.")] = "text",
) -> None:
    """Plan a judge's certificate: test rows, labels to collect and the cost of the calls.

    Per class, the test rows from which the chance of a certificate is at least
    --power, at the expected rates, for the bound the next judges certify uses (Wilson
    for a first look at the test rows, the anytime-valid bound after it); the labels
    to collect for them at the current split ratios and class mix; and the cost of
    certifying at the plan from prices.toml. No model call. Exit codes: 0 a plan; 1
    calibration rows are rejected (the plan is still printed) or the exposure file is
    broken; 2 usage error.
    """
    from introspection_cli.workflows.judge_plan import PlanSettings, plan_command

    expect = {label: rate for label, rate in (("pass", expect_tpr), ("fail", expect_tnr))
              if rate is not None}
    settings = PlanSettings(judge=judge, expect=expect, bar=bar, power=power, fmt=fmt)
    finish(plan_command(recipe, settings), what=f"the {fmt} plan")


def register(app: typer.Typer) -> None:
    """Add ``certify``, ``estimate``, ``plan`` and ``status`` to the ``judges`` app."""
    app.command("certify")(certify)
    app.command("estimate")(estimate)
    app.command("plan")(plan)
    app.command("status")(status)
