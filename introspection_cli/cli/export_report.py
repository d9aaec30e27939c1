"""What ``conversations get`` says, chunk by chunk as each arrives, and how it ends.

Rows bound for stdout go through the checked writer; everything else is a line
on stderr. Every line is scrubbed of the token and escaped (ids and reasons come
from the runtime and the user's files).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import typer

from introspection_cli.errors import DataError, IntrospectionError, OutputError
from introspection_cli.runtime.accept import ExportFailure
from introspection_cli.runtime.export import ExportPlan, describe_chunks
from introspection_cli.runtime.exportrun import ChunkOutcome, FileWrite


class ExportReport:
    """Reports an export as it runs: :meth:`start`, :meth:`add` per chunk, :meth:`finish`."""

    def __init__(self, plan: ExportPlan) -> None:
        self.plan = plan
        self.kind = "fixture" if plan.options.judge_fixtures else "conversation"
        self.totals: dict[Path, int] = dict.fromkeys(plan.destinations, 0)
        self.on_stdout = 0
        self.failures: list[ExportFailure] = []
        self.error: IntrospectionError | None = None
        self.stdout_error: OutputError | None = None
        self.handled = 0  # chunks reported so far

    def start(self) -> None:
        """What is known before any request: repeated ids, what the files hold already."""
        ids_file, repeated = self.plan.options.ids_file, self.plan.duplicate_ids
        if len(repeated) == 1:
            self._note(f"warning: {repeated[0]} is listed more than once in {ids_file}; "
                       "exported once")
        elif repeated:
            self._note(f"warning: {len(repeated)} conversation ids are listed more than once in "
                       f"{ids_file}; each is exported once: {_listed(repeated)}")
        for target in self.plan.targets:
            for warning in target.file.warnings:
                self._note(f"warning: {warning}")
            if target.skipped:
                self._note(f"skipped {len(target.skipped)} conversation(s) already in "
                           f"{target.spelled}: {_listed(target.skipped)}")

    def add(self, outcome: ChunkOutcome) -> bool:
        """Print one chunk's rows (for stdout) and what became of it; whether to go on."""
        self.handled = outcome.chunk.number
        if not self.plan.destinations and outcome.rows:
            self._print_rows(outcome.rows)
        for warning in outcome.warnings:
            self._note(f"warning: {warning}")
        for write in outcome.files:
            self.totals[write.path] += write.written
            if write.added_meanwhile:
                self._note(f"skipped {len(write.added_meanwhile)} conversation(s) already in "
                           f"{write.path} (added while exporting): "
                           f"{_listed(write.added_meanwhile)}")
        for failure in outcome.failures:
            self._note(f"error: {failure.conversation_id or '(no conversation id)'}: "
                       f"{failure.reason}")
        self.failures.extend(outcome.failures)
        several = len(self.plan.chunks) > 1
        if outcome.error is not None:
            self.error = outcome.error
            if several:
                self._note(f"error: {outcome.chunk.describe()} failed"
                           f"{_written_before(outcome.files, self.kind)}")
        elif several and self.stdout_error is None:
            self._note(f"{outcome.chunk.describe()}: {self._chunk_summary(outcome)}")
        return self.error is None and self.stdout_error is None

    def finish(self) -> None:
        """Say what was not requested and where the rows went; raise unless all went well.

        Exit: a failed chunk's own error (3 for the runtime, 2 for a rejected
        token) over a stdout that took no more (2) over conversations not exported (1).
        """
        rest = self.plan.chunks[self.handled:]
        if rest and (self.error is not None or self.stdout_error is not None):
            self._note(f"not requested: {describe_chunks(rest)}")
        if self.stdout_error is not None:
            raise self.stdout_error  # said last: it names what stdout lacks
        self._totals()
        if self.error is None:
            if self.failures:
                raise DataError(self._failure_summary())
            return
        if self.failures:
            self._note(f"error: {self._failure_summary()}")
        if self.plan.targets and len(self.plan.chunks) > 1:
            self._note("run the same command again to export the rest: conversations already "
                       "in a file are skipped")
        raise self.error

    def interrupted(self) -> None:
        """Ctrl-C: which chunk was cut off, and what the chunks before it wrote."""
        rest = self.plan.chunks[self.handled:]
        if rest and len(self.plan.chunks) > 1:
            self._note(f"interrupted; not exported: {describe_chunks(rest)}")
        self._totals()

    def _print_rows(self, rows: Sequence[bytes]) -> None:
        from introspection_cli.cli.stdout import write_stdout_lines

        try:
            write_stdout_lines(rows, noun=self.kind, before=self.on_stdout)
        except OutputError as exc:  # said last, after what the export itself found
            self.stdout_error = exc
        self.on_stdout += len(rows)

    def _chunk_summary(self, outcome: ChunkOutcome) -> str:
        lost = f"{len(outcome.failures)} not exported; " if outcome.failures else ""
        if not self.plan.destinations:
            return f"{lost}wrote {len(outcome.rows)} {self.kind}(s) to stdout"
        counts = [(write.written, write.path) for write in outcome.files] or \
            [(0, path) for path in self.plan.destinations]
        return f"{lost}wrote {_counts(counts, self.kind)}"

    def _totals(self) -> None:
        if not self.plan.destinations:
            self._note(f"wrote {self.on_stdout} {self.kind}(s) to stdout" if self.on_stdout
                       else "nothing written")
        elif not any(self.totals.values()):
            self._note("nothing written")
        else:
            for path, count in self.totals.items():
                self._note(f"wrote {count} {self.kind}(s) to {path}")

    def _failure_summary(self) -> str:
        failures, kind = self.failures, f"{self.kind}(s)"
        lost = sum(1 for failure in failures if failure.conversation_id is not None)
        parts = [f"{lost} of {len(self.plan.requested)} requested conversation(s) were not "
                 "exported"] if lost else []
        if lost < len(failures):
            parts.append(f"{len(failures) - lost} {kind} from the runtime naming no conversation "
                         "could not be written")
        return "; ".join(parts) + " (listed above)"

    def _note(self, message: str) -> None:
        # Ids and reasons come from the runtime and the user's files: the token is scrubbed
        # (the runtime may echo it in any of them), and control characters and lone
        # surrogates are escaped, so no id can forge or break a line of its own.
        from introspection_cli.diagnostics import escape_text

        printable = escape_text(self.plan.scrubbed(message))
        typer.echo(f"introspection: {printable}", err=True)


def _counts(counts: Sequence[tuple[int, Path]], kind: str) -> str:
    """``20 fixture(s) to A``, ``20 fixture(s) to A and 19 to B``, ``..., 20 to B and 19 to C``."""
    (first_count, first_path), *others = counts
    said = [f"{first_count} {kind}(s) to {first_path}"] + [f"{n} to {p}" for n, p in others]
    return said[0] if len(said) == 1 else ", ".join(said[:-1]) + " and " + said[-1]


def _written_before(files: Sequence[FileWrite], kind: str) -> str:
    written = [(write.written, write.path) for write in files if write.written]
    if not written:
        return "; nothing of it was written"
    return f" after writing {_counts(written, kind)}"


def _listed(ids: Sequence[str], limit: int = 10) -> str:
    """``a, b, c``; past ``limit`` ids, the first ones and how many more (an ids file may
    hold thousands)."""
    if len(ids) <= limit:
        return ", ".join(ids)
    return f"{', '.join(ids[:limit])} and {len(ids) - limit} more"
