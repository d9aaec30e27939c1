"""Running an export plan: one runtime call per chunk, each chunk written before the next.

Every judge fixture is checked with the fixture module (SPEC §2.3, labels
aside) before it is written; a fixture that fails is reported and left out, and
the rest are still written. Each chunk's rows are appended to every
``--append-to`` file (atomically, under the calibration writers' lock, each
file leaving out the conversations it holds), or written to ``--output``
(atomically: the file always holds whole chunks), before the next chunk is
asked for, so an export that stops halfway keeps every chunk it finished and a
rerun with ``--append-to`` asks only for the rest.

The run stops at the first chunk that fails as a whole: the runtime still
failing after the client's retries, a rejected token, a file that can no longer
be written. After the retries the next call would most likely fail the same
way, and waiting out the retries once per remaining chunk could take minutes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Generator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from introspection_cli.errors import DataError, IntrospectionError
from introspection_cli.fixture import line_conversation_id
from introspection_cli.fsutil import atomic_write_bytes
from introspection_cli.runtime.accept import (
    Accepted,
    ExportFailure,
    accept_bundles,
    accept_fixtures,
)
from introspection_cli.runtime.appendfile import ExistingFile, appended_content, write_appended
from introspection_cli.runtime.auth import ClientFactory, default_client_factory
from introspection_cli.runtime.export import Chunk, ExportPlan
from introspection_cli.runtime.interface import ExportBatch, RuntimeApi


@dataclass(frozen=True, slots=True)
class FileWrite:
    """What one chunk added to one destination file (``path`` as the user spelled it)."""

    path: Path
    written: int
    #: Left out: another writer (a second export) added these conversations meanwhile.
    added_meanwhile: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ChunkOutcome:
    """What became of one chunk.

    ``rows`` are its verified rows in ids-file order (without line breaks): for
    stdout the caller prints them; ``files`` says what each destination file got.
    ``error`` is set when the chunk failed as a whole (the runtime call, or a
    write): the export stops after it, and ``files`` lists the writes that
    happened before the failure.
    """

    chunk: Chunk
    rows: tuple[bytes, ...] = ()
    failures: tuple[ExportFailure, ...] = ()
    warnings: tuple[str, ...] = ()
    files: tuple[FileWrite, ...] = ()
    error: IntrospectionError | None = None


def run_export(plan: ExportPlan, environ: Mapping[str, str],
               client_factory: ClientFactory | None = None) -> Generator[ChunkOutcome, None, None]:
    """Ask the runtime for each chunk of ``plan`` in turn; yield each one once written.

    The next chunk is requested only when the caller asks for the next outcome,
    so a caller that stops (stdout no longer takes rows) stops the requests too.
    After an outcome with an ``error`` nothing more is requested.
    """
    if not plan.chunks:
        return
    assert plan.credentials is not None  # plan_export resolves them when there are chunks
    client = (client_factory or default_client_factory(environ))(plan.credentials)
    writer = _Writer(plan)
    try:
        for chunk in plan.chunks:
            try:
                batch = _fetch(client, plan.options.judge_fixtures, chunk.ids)
            except IntrospectionError as exc:  # after retries, a 401, a refused request...
                yield ChunkOutcome(chunk, error=exc)
                return
            # Verified here, not in a helper: how deeply nested a fixture may be and still
            # be read depends on the stack below check_line, and this keeps it as shallow
            # as under `check`, so export and check accept the same rows.
            if plan.options.judge_fixtures:
                accepted = accept_fixtures(list(chunk.ids), batch, writer.first_line())
            else:
                accepted = accept_bundles(list(chunk.ids), batch)
            outcome = writer.write(chunk, accepted)
            yield outcome
            if outcome.error is not None:
                return
    finally:
        close = getattr(client, "close", None)
        if callable(close):
            close()


def _fetch(client: RuntimeApi, judge_fixtures: bool, ids: Sequence[str]) -> ExportBatch:
    if judge_fixtures:
        return client.export_judge_fixtures(ids)
    return client.export_conversations(ids)


class _Writer:
    """Where each chunk's rows go, and what each destination holds by now."""

    def __init__(self, plan: ExportPlan) -> None:
        self.output = plan.options.output
        #: Each --append-to file as this export last left it, by the path spelled.
        self.files: dict[Path, ExistingFile] = {t.spelled: t.file for t in plan.targets}
        self.output_content = b""
        self.rows_so_far = 0

    def write(self, chunk: Chunk, accepted: Accepted) -> ChunkOutcome:
        """Write the chunk's verified rows, and say what happened."""
        done: list[FileWrite] = []
        error: DataError | None = None
        try:
            if self.files:
                for spelled in list(self.files):
                    done.append(self._append(spelled, accepted.rows))
            elif self.output is not None and accepted.rows:
                done.append(self._write_output(self.output, accepted.rows))
        except DataError as exc:  # a file removed meanwhile, a full disk...
            error = exc
        self.rows_so_far += len(accepted.rows)
        return _outcome(chunk, accepted, done, error)

    def first_line(self) -> int:
        """The line number the chunk's first row gets (in the first file), for messages."""
        first = next(iter(self.files.values()), None)
        return (first.row_count if first is not None else self.rows_so_far) + 1

    def _append(self, spelled: Path, rows: list[bytes]) -> FileWrite:
        existing = self.files[spelled]
        mine = [row for row in rows if line_conversation_id(row) not in existing.conversation_ids]
        if not mine:
            return FileWrite(spelled, 0)  # never touch a file just to write nothing
        written = write_appended(existing, mine)
        kept = set(written)
        meanwhile = tuple(conversation_id for row in mine if row not in kept
                          for conversation_id in [line_conversation_id(row)] if conversation_id)
        self.files[spelled] = _after_append(existing, written)
        return FileWrite(spelled, len(written), meanwhile)

    def _write_output(self, path: Path, rows: list[bytes]) -> FileWrite:
        # The whole file so far, replaced atomically: it always holds whole chunks.
        content = self.output_content + b"".join(row + b"\n" for row in rows)
        try:
            atomic_write_bytes(path, content)
        except OSError as exc:
            raise DataError(f"cannot write {path} ({exc.strerror})") from None
        self.output_content = content
        return FileWrite(path, len(rows))


def _after_append(existing: ExistingFile, written: list[bytes]) -> ExistingFile:
    """The file as this export left it, so the next chunk's write finds it unchanged (and
    need not read it all again). When another writer changed it meanwhile, the next
    write sees bytes that differ from these and re-reads the file, as for the first."""
    ids = {i for i in map(line_conversation_id, written) if i is not None}
    return dataclasses.replace(
        existing, exists=True, content=appended_content(existing, written),
        conversation_ids=existing.conversation_ids | ids,
        row_count=existing.row_count + len(written), warnings=[])


def _outcome(chunk: Chunk, accepted: Accepted, done: list[FileWrite],
             error: DataError | None) -> ChunkOutcome:
    return ChunkOutcome(chunk, rows=tuple(accepted.rows), failures=tuple(accepted.failures),
                        warnings=tuple(accepted.warnings), files=tuple(done), error=error)
