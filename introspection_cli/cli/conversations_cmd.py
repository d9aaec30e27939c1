"""``introspection conversations get``."""

from __future__ import annotations

import os
from contextlib import closing
from pathlib import Path
from typing import Annotated

import typer

app = typer.Typer(help="Export conversations from the runtime.", no_args_is_help=True)


@app.command("get")
def get(
    ids_file: Annotated[Path | None, typer.Option(
        "--ids-file", help="Conversation ids, one per line (# comments and blank lines ignored; "
        "any number: the runtime is asked for 20 at a time).")] = None,
    judge_fixtures: Annotated[bool, typer.Option(
        "--judge-fixtures", help="Export judge_fixture calibration rows (needs --ids-file and "
        "--format json).",
    )] = False,
    output_format: Annotated[str | None, typer.Option(
        "--format", help="Output format: json (one object per line), the only one. Required "
        "with --judge-fixtures; otherwise json when left out.", show_default=False)] = None,
    output: Annotated[Path | None, typer.Option(
        "--output", help="Write to this file instead of stdout (refuses to replace one).",
    )] = None,
    append_to: Annotated[list[Path] | None, typer.Option(
        "--append-to", help="Add new rows to this .calibration.jsonl, skipping conversations "
        "already in it; existing rows are never changed. Repeat it to add the same rows to "
        "several files.")] = None,
    force: Annotated[bool, typer.Option(
        "--force", help="Let --output replace an existing file.")] = False,
) -> None:
    """Export conversations (or, with --judge-fixtures, calibration rows) from the runtime.

    The runtime is asked for 20 ids at a time; each chunk is written before the
    next is asked for, and an export stops at a chunk that fails as a whole.

    Exit codes: 0 all exported; 1 some conversations could not be exported (the
    rest are written); 2 bad flags, ids file or login, or the runtime rejected the
    token or request; 3 the runtime failed (the chunks before it stay written).
    """
    from introspection_cli.cli.export_report import ExportReport
    from introspection_cli.runtime.export import ExportOptions, plan_export
    from introspection_cli.runtime.exportrun import run_export

    options = ExportOptions(ids_file=ids_file, judge_fixtures=judge_fixtures,
                            format=output_format, output=output,
                            append_to=tuple(append_to or ()), force=force)
    plan = plan_export(options, os.environ)  # every local check, before any request
    report = ExportReport(plan)
    report.start()
    try:
        with closing(run_export(plan, os.environ)) as outcomes:
            for outcome in outcomes:
                if not report.add(outcome):
                    break  # stop asking: a chunk failed, or stdout takes no more
    except KeyboardInterrupt:
        report.interrupted()  # what the chunks written so far hold, then exit as interrupted
        raise
    report.finish()
