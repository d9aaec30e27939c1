"""``introspection judges eval`` and ``introspection judges render``.

Thin on purpose: options become settings, the core in
:mod:`introspection_cli.evaluation` does the work (imported inside each
command, so ``introspection check`` never loads Jinja2 or the model SDKs).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from introspection_cli.cli.stdout import finish, write_stdout
from introspection_cli.cli.terminal import stream_wants_color

if TYPE_CHECKING:
    from introspection_cli.recipe.model import Judge

app = typer.Typer(help="Run judges over their calibration data.", no_args_is_help=True)

_RECIPE_HELP = "Recipe directory (the one containing SYSTEM.md)."


@app.command("eval")
def eval_command(
    recipe: Annotated[Path, typer.Argument(
        help=_RECIPE_HELP + " Default: the current directory.")] = Path("."),
    judge: Annotated[list[str] | None, typer.Option(
        "--judge", metavar="NAME",
        help="Evaluate only this judge (repeatable). Default: every judge with a "
             "calibration file.")] = None,
    split: Annotated[list[str] | None, typer.Option(
        "--split", metavar="SPLIT",
        help="Evaluate only rows of this split: train, dev, test or unsplit "
             "(repeatable). Default: train, dev and unsplit; the test split is held out "
             "(evaluate it with --split test, or judges certify).")] = None,
    samples: Annotated[int, typer.Option(
        min=1, help="Calls per row; the verdict is the majority vote, rows whose samples "
                    "disagree are flagged unstable, a tie is an error.")] = 1,
    concurrency: Annotated[int, typer.Option(min=1, help="Model calls in flight at once.")] = 8,
    provider: Annotated[str | None, typer.Option(
        help="Use this provider (openai or anthropic) instead of each judge's llm.provider.")
    ] = None,
    model: Annotated[list[str] | None, typer.Option(
        "--model", metavar="[PROVIDER:]MODEL",
        help="Use this model instead of each judge's llm.model (openai:NAME or "
             "anthropic:NAME also sets the provider). Repeatable: each judge is evaluated "
             "with every model on the same rows and the report compares them with the "
             "first.")] = None,
    no_cache: Annotated[bool, typer.Option(
        "--no-cache", help="Neither read nor write the verdict cache.")] = False,
    fmt: Annotated[str, typer.Option(
        "--format", help="Report format on stdout: text, json or markdown.")] = "text",
    output: Annotated[Path | None, typer.Option(
        help="Also write the JSON report to this file (atomically).")] = None,
    junit: Annotated[Path | None, typer.Option(
        metavar="FILE", help="Also write JUnit XML for CI test reporters: a test case per "
                             "judge and per gate, a missed gate is a failure.")] = None,
    html: Annotated[Path | None, typer.Option(
        metavar="FILE", help="Also write the report as one self-contained HTML page "
                             "(offline: no network, no external asset).")] = None,
    baseline: Annotated[Path | None, typer.Option(
        help="A previous JSON report: show per-split deltas and rows whose outcome changed.")
    ] = None,
    min_agreement: Annotated[float | None, typer.Option(
        min=0.0, max=1.0, help="Exit 1 when the lower bound of a judge's agreement (Wilson "
                               "95%) is below this (0-1).")] = None,
    min_tpr: Annotated[float | None, typer.Option(
        min=0.0, max=1.0, help="Exit 1 when the lower bound of a judge's TPR (Wilson 95%) is "
                               "below this (0-1).")] = None,
    min_tnr: Annotated[float | None, typer.Option(
        min=0.0, max=1.0, help="Exit 1 when the lower bound of a judge's TNR (Wilson 95%) is "
                               "below this (0-1).")] = None,
    min_kappa: Annotated[float | None, typer.Option(
        min=-1.0, max=1.0, help="Exit 1 when a judge's Cohen's kappa is below this.")] = None,
    max_error_rate: Annotated[float, typer.Option(
        min=0.0, max=1.0, help="Exit 1 when more than this share of a judge's rows are "
                               "errors; a judge with no judged row always fails.")] = 0.1,
    threshold_split: Annotated[str, typer.Option(
        help="The split --min-agreement, --min-tpr, --min-tnr and --min-kappa apply to "
             "(scored: every evaluated row, also accepted as all; test: the test split is "
             "evaluated too).")] = "scored",
    max_retries: Annotated[int, typer.Option(
        min=0, help="Retries per request on 408, 409, 429, 5xx, timeouts and connection errors "
                    "(the SDK's max_retries).")] = 2,
    timeout: Annotated[float, typer.Option(
        min=0.001, help="Seconds to wait for one model response.")] = 60.0,
    batch: Annotated[bool, typer.Option(
        "--batch", help="Send uncached samples through the provider's batch API (about half "
                        "the price; results within 24 h). Batch ids and progress go to "
                        "stderr; an interrupted run is resumed by the next one.")] = False,
    poll_interval: Annotated[float | None, typer.Option(
        metavar="SECONDS", help="With --batch: seconds before the first poll; each next wait "
                                "is half as long again, up to 5 min. Default 15.")] = None,
    max_wait: Annotated[float | None, typer.Option(
        metavar="SECONDS", help="With --batch: stop waiting after this long (0: submit and "
                                "exit); unfinished batches keep running and a rerun collects "
                                "them. Default 90000 (25 h).")] = None,
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="Print the requests that would be made (those the cache does not "
                          "answer), their estimated tokens and cost; make none.")] = False,
) -> None:
    """Run judges over their labelled calibration rows and report agreement by split.

    Exit codes: 0 all good; 1 rows rejected, a gate missed (too many errors, no
    judged row, a --min-* bar), no calibration data or errors in the judges
    evaluated; 2 usage error, or an API key missing or rejected; 3 rows failed at
    the model provider after retries (the report is still shown).
    """
    from introspection_cli.cli.progress import run_with_progress
    from introspection_cli.evaluation.runner import EvalOptions
    from introspection_cli.reporting.gates import GateSettings
    from introspection_cli.reporting.registry import ReportKind, check_format
    from introspection_cli.workflows.judges_eval import (
        ReportSettings,
        batch_options,
        evaluate_recipe,
        model_choices,
    )

    chosen_provider, chosen_model, compared = model_choices(model or (), provider)
    options = EvalOptions(
        judges=tuple(judge or ()), splits=tuple(split or ()), samples=samples,
        concurrency=concurrency, provider=chosen_provider, model=chosen_model,
        compare_models=compared, use_cache=not no_cache,
        max_retries=max_retries, timeout=timeout,
        batch=batch_options(batch, poll_interval=poll_interval, max_wait=max_wait))
    if dry_run:
        from introspection_cli.workflows.dry_run import dry_run_recipe

        finish(dry_run_recipe(recipe, options, fmt=fmt, threshold_split=threshold_split),
               what=f"the {fmt} report", quiet_epipe=fmt == "text")
    gates = GateSettings(min_agreement=min_agreement, min_tpr=min_tpr, min_tnr=min_tnr,
                         min_kappa=min_kappa, max_error_rate=max_error_rate,
                         split=threshold_split)
    settings = ReportSettings(fmt=check_format(ReportKind.EVAL, fmt), output=output, junit=junit,
                              html=html, baseline=baseline,
                              gates=gates, color=stream_wants_color(sys.stdout))
    result = run_with_progress(lambda progress, batches: evaluate_recipe(
        recipe, options, settings, progress=progress, batch_events=batches), batch=batch)
    finish(result, what=f"the {settings.fmt} report", quiet_epipe=settings.fmt == "text")


@app.command("render")
def render_command(
    recipe: Annotated[Path, typer.Argument(
        help=_RECIPE_HELP + " Default: the current directory.")] = Path("."),
    judge_argument: Annotated[str | None, typer.Argument(
        metavar="[judge]", help="The judge's name; or --judge NAME.")] = None,
    judge: Annotated[str | None, typer.Option(
        "--judge", metavar="NAME", help="The judge whose prompt to print.")] = None,
    line: Annotated[int | None, typer.Option(
        "--line", min=1, metavar="N",
        help="Line number of the row in the judge's calibration file (required).")] = None,
    fmt: Annotated[str, typer.Option(
        "--format",
        help="text (headed sections) or json ({judge, line, note, messages, tool}).")] = "text",
) -> None:
    """Print the exact messages and tool schema a judge would send for one row; no call is made."""
    from introspection_cli.errors import UsageError
    from introspection_cli.evaluation.render_row import prompt_for_line
    from introspection_cli.reporting.registry import ReportKind, check_format, render

    if line is None:
        raise UsageError("judges render needs --line N: the line of the row in the judge's "
                         "calibration file")
    name = _one_judge(judge_argument, judge)
    prompt = prompt_for_line(recipe, name, line)  # before --format, as it always was
    chosen = check_format(ReportKind.PROMPT, fmt)
    write_stdout(render(ReportKind.PROMPT, chosen, prompt), what="the prompt",
                 quiet_epipe=fmt == "text")


def _one_judge(positional: str | None, option: str | None) -> str:
    """The judge named by ``--judge`` or, as before it existed, after RECIPE; both must agree."""
    from introspection_cli.errors import UsageError

    if positional is not None and option is not None and positional != option:
        raise UsageError(f"two judges given: {positional!r} after RECIPE and --judge "
                         f"{option!r}; pass one of them")
    name = option if option is not None else positional
    if name is None:
        raise UsageError("which judge? pass --judge NAME")
    return name


@app.command("split")
def split_command(
    recipe: Annotated[Path, typer.Argument(
        help=_RECIPE_HELP + " Default: the current directory.")] = Path("."),
    judge: Annotated[list[str] | None, typer.Option(
        "--judge", metavar="NAME",
        help="Split only this judge's rows (repeatable). Default: every judge with a "
             "calibration file.")] = None,
    ratios: Annotated[str | None, typer.Option(
        metavar="TRAIN:DEV:TEST",
        help="Target shares of each label's rows, applied to rows without a split. "
             "Default 20:40:40.")] = None,
    seed: Annotated[int, typer.Option(
        help="Orders the rows to assign: the same rows and seed give the same splits.")] = 0,
    fill_test: Annotated[bool, typer.Option(
        "--fill-test", help="First send rows without a split to test (in the seeded order) "
                            "until it holds the rows of each class the judge's plan asks "
                            "for (judges plan); the rest by --ratios.")] = False,
    reset: Annotated[bool, typer.Option(
        "--reset", help="Clear the split of every row never seen in test (per the judge's "
                        "exposure file), to split again; rows seen in test keep theirs.")
    ] = False,
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="Print the resulting table without writing anything.")] = False,
) -> None:
    """Give every labelled row without a split one: train, dev or test, stratified by label.

    Splits are frozen: a row that has a split never moves (so test rows stay held out),
    and --ratios apply only to labelled rows without one; unlabelled rows keep none.
    --reset clears the splits of rows never seen in test, to split them again. Prints
    the split x label table and warns when test has too few pass or fail rows to ever
    certify a judge on, or dev has none. Exit codes: 0 done; 1 rows rejected (left
    unchanged), or --reset kept rows seen in test (named); 2 usage error.
    """
    from introspection_cli.errors import UsageError
    from introspection_cli.labelling.split import DEFAULT_RATIOS, run_split

    if reset and (fill_test or ratios is not None):
        raise UsageError("--reset only clears splits: run `judges split` again afterwards "
                         "to assign them (with --ratios or --fill-test)")
    targets = None
    if fill_test:
        from introspection_cli.evaluation.cache_dir import default_cache_dir
        from introspection_cli.workflows.judge_plan import planned_test_rows

        cache_dir = default_cache_dir()

        def targets(chosen: Judge) -> dict[str, int | None]:
            return planned_test_rows(chosen, cache_dir=cache_dir)

    finish(run_split(recipe, judge or [], ratios=ratios or DEFAULT_RATIOS, seed=seed,
                     dry_run=dry_run, reset=reset, test_targets=targets), what="the summary")


@app.command("label")
def label_command(
    recipe: Annotated[Path, typer.Argument(
        help=_RECIPE_HELP + " Default: the current directory.")] = Path("."),
    judge: Annotated[list[str] | None, typer.Option(
        "--judge", metavar="NAME",
        help="The judge whose rows to label; repeat it to label several judges in one pass "
             "(browser app only). Default: the only judge with a calibration file.")] = None,
    set_: Annotated[list[str] | None, typer.Option(
        "--set", metavar="LINE=LABEL[:SPLIT]",
        help="Label one row without a browser, e.g. 12=pass or 12=fail:dev (repeatable; "
             "LABEL pass, fail or not_applicable; SPLIT train, dev, test or none).")] = None,
    from_csv: Annotated[Path | None, typer.Option(
        "--from", metavar="FILE.csv",
        help="Read labels from a sheet with conversation_id and expected columns (optional "
             "split); empty cells change nothing.")] = None,
    overwrite: Annotated[bool, typer.Option(
        "--overwrite", help="With --from: change labels and splits rows already have.")
    ] = False,
    to_csv: Annotated[Path | None, typer.Option(
        "--to-csv", metavar="FILE",
        help="Write a sheet for labelling in a spreadsheet: line, conversation_id, split, "
             "expected and the transcript as text.")] = None,
    review: Annotated[Path | None, typer.Option(
        "--review", metavar="REPORT.json",
        help="Queue the rows whose outcome in this eval report (judges eval --output) "
             "disagrees with their label, and show the model's verdict and reasoning.")
    ] = None,
    all_rows: Annotated[bool, typer.Option(
        "--all", help="Queue every row, not only the unlabelled ones.")] = False,
    rater: Annotated[str | None, typer.Option(
        "--rater", metavar="NAME",
        help="Label as this rater (--rater me: git config user.name, else your login "
             "name): your labels and notes (key c) go to the judge's annotations file, and "
             "no other rater's label is shown. Also with --to-csv and --from.")] = None,
    adjudicate: Annotated[bool, typer.Option(
        "--adjudicate", help="Queue the rows raters disagree on, with every rater's label "
                             "and note; the label you give is written to expected.")] = False,
    port: Annotated[int, typer.Option(
        min=0, max=65535, help="Port on 127.0.0.1 to serve on. Default: a free one.")] = 0,
    no_open: Annotated[bool, typer.Option(
        "--no-open", help="Print the address but do not open a browser.")] = False,
) -> None:
    """Label a judge's calibration rows in the browser, or with --set or a sheet.

    Without --set, --from or --to-csv, serves a labelling page on 127.0.0.1 and
    opens it; keys: p pass, f fail, n not_applicable, s skip, arrows move, u undo,
    1/2/3/0 split train/dev/test/none, i fold the rubric, t tool call details, c a
    note (with --rater or --adjudicate; Enter saves, Escape cancels). With
    several --judge, each conversation is shown once with a label row per judge; the
    keys act on the judge in focus and Tab / Shift-Tab move it. Every label is
    written at once, to its judge's file; Ctrl-C stops.
    Only the expected and split values of a row ever change; every other byte of the
    file stays as exported. Exit codes: 0 done; 1 rows or sheet lines could not be
    used (reported); 2 usage error.
    """
    from introspection_cli.labelling.commands import LabelRequest, run_label

    finish(run_label(LabelRequest(
        recipe=recipe, judges=tuple(judge or ()), assignments=tuple(set_ or ()), from_csv=from_csv,
        overwrite=overwrite, to_csv=to_csv, review=review, all_rows=all_rows, port=port,
        open_browser=not no_open, rater=rater, adjudicate=adjudicate), say=_say),
           what="the summary")


def _say(line: str) -> None:
    """Print one line at once (the labelling app's address must show before it serves)."""
    write_stdout(line + "\n", what="the labelling app's address")

