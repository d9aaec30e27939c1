"""``introspection judges align``: improve a judge's rubric from its train disagreements.

Thin like every command module: options become settings and
:mod:`introspection_cli.workflows.align` does the work, imported inside the command.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from introspection_cli.cli.stdout import finish


def align(
    recipe: Annotated[Path, typer.Argument(
        help="Recipe directory (the one containing SYSTEM.md). Default: the current "
             "directory.")] = Path("."),
    judge: Annotated[str, typer.Option("--judge", metavar="NAME",
                                       help="The judge whose rubric to improve.")] = "",
    rounds: Annotated[int, typer.Option(
        min=1, help="Edits to propose and test, one per round.")] = 5,
    optimizer_model: Annotated[str | None, typer.Option(
        "--optimizer-model", metavar="[PROVIDER:]MODEL",
        help="The model that proposes the edits (openai:NAME or anthropic:NAME also sets "
             "the provider). Default: the judge's own.")] = None,
    max_cost: Annotated[float | None, typer.Option(
        "--max-cost", metavar="USD",
        help="Stop before the run would spend more than this, priced with your price table "
             "(every model used needs a price).")] = None,
    no_cost_limit: Annotated[bool, typer.Option(
        "--no-cost-limit", help="Run without --max-cost (and without prices).")] = False,
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="Print what the run would do and cost; make no call.")] = False,
    write: Annotated[bool, typer.Option(
        "--write", help="Write the kept rubric into the judge file (only its instructions "
                        "change).")] = False,
    samples: Annotated[int, typer.Option(
        min=1, help="Calls per row, majority vote (as in judges eval).")] = 1,
    concurrency: Annotated[int, typer.Option(min=1, help="Model calls in flight at once.")] = 8,
    no_cache: Annotated[bool, typer.Option(
        "--no-cache", help="Neither read nor write the verdict cache.")] = False,
    max_retries: Annotated[int, typer.Option(
        min=0, help="Retries per request on 408, 409, 429, 5xx, timeouts and connection "
                    "errors.")] = 2,
    timeout: Annotated[float, typer.Option(
        min=0.001, help="Seconds to wait for one judge response (an optimizer call gets at "
                        "least 300).")] = 60.0,
    fmt: Annotated[str, typer.Option("--format", help="text or json.")] = "text",
) -> None:
    """Improve a judge's rubric from its train disagreements, never touching test.

    Each round asks the optimizer model for one edit of the judge's instructions,
    evaluates it on train and dev (the cache applies) and keeps it only when, on
    dev, it gains more rows than it loses, applicable agreement rises, neither TPR
    nor TNR falls by more than one row and at most 10% of the untargeted rows
    change outcome; an edit quoting a dev or test conversation is refused. Exit
    codes: 0 the rounds ran (kept or not); 1 nothing to learn from (no train or dev
    rows, no train disagreement, rejected rows) or --max-cost too low to start; 2
    usage or configuration (a missing price with --max-cost, a key, a judge file
    --write cannot rewrite); 3 a model provider failed after retries.
    """
    from introspection_cli.evaluation.runner import EvalOptions
    from introspection_cli.workflows.align import AlignSettings, align_judge

    options = EvalOptions(samples=samples, concurrency=concurrency, use_cache=not no_cache,
                          max_retries=max_retries, timeout=timeout)
    settings = AlignSettings(judge=judge, rounds=rounds, optimizer_model=optimizer_model,
                             max_cost=max_cost, no_cost_limit=no_cost_limit, dry_run=dry_run,
                             write=write, fmt=fmt)
    from introspection_cli.cli.terminal import stream_redraws

    # Steps on a terminal only: a log or a pipe gets the report and nothing else.
    progress = _say_step if stream_redraws(sys.stderr) else None
    finish(align_judge(recipe, options, settings, progress=progress),
           what=f"the {fmt} report", quiet_epipe=fmt == "text")


def _say_step(step: str) -> None:
    sys.stderr.write(f"introspection: {step}...\n")
    sys.stderr.flush()


def register(app: typer.Typer) -> None:
    """Add ``align`` to the ``judges`` app."""
    app.command("align")(align)
