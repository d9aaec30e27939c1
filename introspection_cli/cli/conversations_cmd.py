"""``introspection conversations get``."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from introspection_cli.runtime.accept import ExportFailure

app = typer.Typer(help="Export conversations from the runtime.", no_args_is_help=True)


@app.command("get")
def get(
    ids_file: Annotated[Path | None, typer.Option(
        "--ids-file", help="Conversation ids, one per line (# comments and blank lines ignored; "
        "at most 20).")] = None,
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
    append_to: Annotated[Path | None, typer.Option(
        "--append-to", help="Add new rows to this .calibration.jsonl, skipping conversations "
        "already in it; existing rows are never changed.")] = None,
    force: Annotated[bool, typer.Option(
        "--force", help="Let --output replace an existing file.")] = False,
) -> None:
    """Export conversations (or, with --judge-fixtures, calibration rows) from the runtime.

    Exit codes: 0 all exported; 1 some conversations could not be exported (the
    rest are written); 2 bad flags, ids file or login; 3 the runtime failed.
    """
    from introspection_cli.cli.stdout import write_stdout_lines
    from introspection_cli.errors import DataError, OutputError
    from introspection_cli.runtime.export import ExportOptions, export

    options = ExportOptions(ids_file=ids_file, judge_fixtures=judge_fixtures,
                            format=output_format, output=output, append_to=append_to, force=force)
    result = export(options, os.environ)
    note = functools.partial(_note, scrub=result.scrubbed)
    kind = "fixture" if judge_fixtures else "conversation"
    stdout_failed: OutputError | None = None
    if result.destination is None and result.rows:
        try:
            write_stdout_lines(result.rows, noun=kind)
        except OutputError as exc:  # said last, after what the export itself found
            stdout_failed = exc
    for conversation_id in result.duplicate_ids:
        note(f"warning: {conversation_id} is listed more than once in {ids_file}; exported once")
    for warning in result.warnings:
        note(f"warning: {warning}")
    if result.skipped_existing:
        note(f"skipped {len(result.skipped_existing)} conversation(s) already in "
             f"{append_to}: {', '.join(result.skipped_existing)}")
    for failure in result.failures:
        note(f"error: {failure.conversation_id or '(no conversation id)'}: {failure.reason}")
    if stdout_failed is not None:
        raise stdout_failed
    if result.rows:
        where = result.destination if result.destination is not None else "stdout"
        note(f"wrote {len(result.rows)} {kind}(s) to {where}")
    else:
        note("nothing written")
    if result.failures:
        raise DataError(_failure_summary(result.failures, len(result.requested), f"{kind}(s)"))


def _failure_summary(failures: list[ExportFailure], requested: int, kind: str) -> str:
    lost = sum(1 for failure in failures if failure.conversation_id is not None)
    parts = [f"{lost} of {requested} requested conversation(s) were not exported"] if lost else []
    if lost < len(failures):
        parts.append(f"{len(failures) - lost} {kind} from the runtime naming no conversation "
                     "could not be written")
    return "; ".join(parts) + " (listed above)"


def _note(message: str, scrub: Callable[[str], str]) -> None:
    # Ids and reasons come from the runtime and the user's files: the token is scrubbed
    # (the runtime may echo it in any of them), and control characters and lone
    # surrogates are escaped, so no id can forge or break a line of its own.
    from introspection_cli.diagnostics import escape_text

    printable = escape_text(scrub(message))
    typer.echo(f"introspection: {printable}", err=True)
