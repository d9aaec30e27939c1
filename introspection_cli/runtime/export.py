"""``introspection conversations get``: fetch from the runtime, verify, write.

Every judge fixture is checked with the fixture module (SPEC §2.3, labels
aside) before it is written; a fixture that fails is reported and left out,
and the rest are still written.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from introspection_cli.errors import DataError, UsageError
from introspection_cli.fixture import line_conversation_id
from introspection_cli.fsutil import atomic_write_bytes, check_output_target
from introspection_cli.runtime.accept import ExportFailure, accept_bundles, accept_fixtures
from introspection_cli.runtime.appendfile import ExistingFile, read_existing, write_appended
from introspection_cli.runtime.auth import ClientFactory, default_client_factory
from introspection_cli.runtime.credentials import Credentials, resolve_credentials
from introspection_cli.runtime.ids import read_ids_file
from introspection_cli.runtime.interface import ExportBatch, RuntimeApi

FORMATS = ("json",)


@dataclass(frozen=True, slots=True)
class ExportOptions:
    """What ``conversations get`` was asked to do (``None`` paths: not given)."""

    ids_file: Path | None
    judge_fixtures: bool = False
    format: str | None = None  # None: not given, which means json unless --judge-fixtures
    output: Path | None = None
    append_to: Path | None = None
    force: bool = False


@dataclass(slots=True)
class ExportResult:
    """What happened. ``rows`` are the written JSON lines (no line break); for stdout the
    caller prints them (``destination`` is ``None``, as it is when nothing was written).

    ``failures`` are the requested conversations not written (one each); ``warnings``
    everything else worth saying, none of which loses a requested conversation.
    """

    requested: list[str]
    rows: list[bytes] = field(default_factory=list)
    destination: Path | None = None
    skipped_existing: list[str] = field(default_factory=list)
    duplicate_ids: list[str] = field(default_factory=list)
    failures: list[ExportFailure] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    #: The token the runtime was called with: ids, reasons and warnings hold text the
    #: runtime sent, which may echo it, so the caller scrubs it from every line it prints.
    secret: str | None = field(default=None, repr=False)

    def scrubbed(self, text: str) -> str:
        """``text`` with the token (if the runtime was called) replaced by ``[token]``."""
        return text.replace(self.secret, "[token]") if self.secret else text


def validate_options(options: ExportOptions) -> None:
    """Reject flag combinations before anything is read or requested (exit 2).

    SPEC §3.3: ``--judge-fixtures`` requires ``--ids-file`` and ``--format json``,
    spelled out, so a script states the format the calibration file depends on.
    """
    if options.format is not None and options.format not in FORMATS:
        raise UsageError(f"--format {options.format!r} is not supported; the only format is "
                         "json: pass --format json")
    if options.judge_fixtures and (options.ids_file is None or options.format is None):
        missing = [flag for flag, absent in (("--ids-file FILE (one conversation id per line)",
                                              options.ids_file is None),
                                             ("--format json", options.format is None)) if absent]
        raise UsageError(f"--judge-fixtures requires {' and '.join(missing)}; "
                         f"add {'them' if len(missing) > 1 else 'it'} to the command")
    if options.ids_file is None:
        raise UsageError("pass --ids-file FILE (one conversation id per line)")
    if options.output is not None and options.append_to is not None:
        raise UsageError("--output and --append-to are mutually exclusive; pick one")
    if options.append_to is not None and not options.judge_fixtures:
        raise UsageError("--append-to adds calibration rows: it requires --judge-fixtures")
    if options.force and options.output is None:
        raise UsageError("--force only applies to --output")


def export(options: ExportOptions, environ: Mapping[str, str],
           client_factory: ClientFactory | None = None) -> ExportResult:
    """Run the export: local checks first, then one runtime call, then verify and write."""
    validate_options(options)
    assert options.ids_file is not None  # validate_options guarantees it
    ids = read_ids_file(options.ids_file)
    _check_output(options)
    existing = read_existing(options.append_to) if options.append_to is not None else None
    result = ExportResult(requested=ids.ids, duplicate_ids=ids.duplicates,
                          warnings=list(existing.warnings) if existing else [])
    wanted = ids.ids
    if existing is not None:
        result.skipped_existing = [i for i in ids.ids if i in existing.conversation_ids]
        wanted = [i for i in ids.ids if i not in existing.conversation_ids]
    if wanted:
        credentials = resolve_credentials(environ)
        result.secret = credentials.token
        batch = _fetch(options, wanted, credentials, environ, client_factory)
        if options.judge_fixtures:
            first_line = (existing.row_count if existing else 0) + 1
            accepted = accept_fixtures(wanted, batch, first_line)
        else:
            accepted = accept_bundles(wanted, batch)
        result.rows = accepted.rows
        result.failures = accepted.failures
        result.warnings.extend(accepted.warnings)
    _write(options, existing, result)
    return result


def _check_output(options: ExportOptions) -> None:
    if options.output is None:
        return
    if check_output_target(options.output, flag="--output") and not options.force:
        raise UsageError(f"--output {options.output} already exists; pass --force to replace "
                         "it, or --append-to to add rows to a calibration file")


def _fetch(options: ExportOptions, wanted: list[str], credentials: Credentials,
           environ: Mapping[str, str], client_factory: ClientFactory | None) -> ExportBatch:
    client: RuntimeApi = (client_factory or default_client_factory(environ))(credentials)
    try:
        if options.judge_fixtures:
            return client.export_judge_fixtures(wanted)
        return client.export_conversations(wanted)
    finally:
        close = getattr(client, "close", None)
        if callable(close):
            close()


def _write(options: ExportOptions, existing: ExistingFile | None, result: ExportResult) -> None:
    if not result.rows:
        return  # never create or touch a file just to write nothing
    if existing is not None:
        written = write_appended(existing, result.rows)
        if len(written) < len(result.rows):  # another writer added them meanwhile
            kept = set(written)
            result.skipped_existing += [
                conversation_id for row in result.rows if row not in kept
                for conversation_id in [line_conversation_id(row)] if conversation_id]
            result.rows = written
        result.destination = options.append_to  # as the user spelled it, for messages
    elif options.output is not None:
        try:
            atomic_write_bytes(options.output, b"".join(row + b"\n" for row in result.rows))
        except OSError as exc:
            raise DataError(f"cannot write {options.output} ({exc.strerror})") from None
        result.destination = options.output
