"""``introspection conversations get``: every local check, then the chunks to ask for.

:func:`plan_export` checks everything that can be checked without the runtime
(the flags, the ids file, ``--output``, every ``--append-to`` file, the login)
and splits the ids still to export into chunks of at most
:data:`~introspection_cli.runtime.interface.MAX_IDS_PER_EXPORT`, the runtime's
limit per call; :mod:`~introspection_cli.runtime.exportrun` then asks for them
one chunk at a time.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from introspection_cli.errors import UsageError
from introspection_cli.formats import Format, parse_format
from introspection_cli.fsutil import check_output_target
from introspection_cli.runtime.appendfile import ExistingFile, read_existing
from introspection_cli.runtime.credentials import Credentials, resolve_credentials
from introspection_cli.runtime.ids import read_ids_file
from introspection_cli.runtime.interface import MAX_IDS_PER_EXPORT


@dataclass(frozen=True, slots=True)
class ExportOptions:
    """What ``conversations get`` was asked to do (``None`` paths: not given)."""

    ids_file: Path | None
    judge_fixtures: bool = False
    format: str | None = None  # None: not given, which means json unless --judge-fixtures
    output: Path | None = None
    append_to: tuple[Path, ...] = ()
    force: bool = False


@dataclass(frozen=True, slots=True)
class Chunk:
    """The ids of one runtime call, in ids-file order: chunk ``number`` of ``of``."""

    number: int
    of: int
    ids: tuple[str, ...]

    def describe(self) -> str:
        """``chunk 2 of 3 (conv_21 to conv_40, 20 ids)``, for messages."""
        span = self.ids[0] if len(self.ids) == 1 else f"{self.ids[0]} to {self.ids[-1]}"
        return f"chunk {self.number} of {self.of} ({span}, {_count_ids(len(self.ids))})"


def describe_chunks(chunks: Sequence[Chunk]) -> str:
    """Several consecutive chunks at once: ``chunks 3 to 5 of 5 (conv_41 to conv_100, 60 ids)``."""
    if len(chunks) == 1:
        return chunks[0].describe()
    first, last = chunks[0], chunks[-1]
    count = sum(len(chunk.ids) for chunk in chunks)
    return (f"chunks {first.number} to {last.number} of {last.of} "
            f"({first.ids[0]} to {last.ids[-1]}, {_count_ids(count)})")


def _count_ids(count: int) -> str:
    return f"{count} id" if count == 1 else f"{count} ids"


def split_into_chunks(ids: Sequence[str], size: int = MAX_IDS_PER_EXPORT) -> tuple[Chunk, ...]:
    """``ids`` in order, ``size`` at a time (the last chunk may be shorter)."""
    starts = range(0, len(ids), size)
    return tuple(Chunk(number, len(starts), tuple(ids[start:start + size]))
                 for number, start in enumerate(starts, start=1))


@dataclass(frozen=True, slots=True)
class Target:
    """An ``--append-to`` file as read before any request."""

    spelled: Path  # as the user spelled it, for messages
    file: ExistingFile
    #: The requested conversations it already holds: never written to it again.
    skipped: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ExportPlan:
    """What the export will do, every local check passed: the chunks to ask the runtime
    for (none when every file holds every conversation already) and where rows go."""

    options: ExportOptions
    requested: tuple[str, ...]
    duplicate_ids: tuple[str, ...]
    targets: tuple[Target, ...]
    chunks: tuple[Chunk, ...]
    #: ``None`` when there is nothing to ask for (so no login is needed).
    credentials: Credentials | None = field(default=None, repr=False)

    @property
    def destinations(self) -> tuple[Path, ...]:
        """Where rows are written, as spelled: the ``--append-to`` files, or ``--output``;
        none for stdout."""
        if self.targets:
            return tuple(target.spelled for target in self.targets)
        return (self.options.output,) if self.options.output is not None else ()

    def scrubbed(self, text: str) -> str:
        """``text`` with the token replaced by ``[token]``: ids, reasons and warnings
        hold text the runtime sent, which may echo it."""
        token = self.credentials.token if self.credentials else None
        return text.replace(token, "[token]") if token else text


def validate_options(options: ExportOptions) -> None:
    """Reject flag combinations before anything is read or requested (exit 2).

    SPEC §3.3: ``--judge-fixtures`` requires ``--ids-file`` and ``--format json``,
    spelled out, so a script states the format the calibration file depends on.
    """
    if options.format is not None:
        parse_format(options.format, (Format.JSON,))
    if options.judge_fixtures and (options.ids_file is None or options.format is None):
        missing = [flag for flag, absent in (("--ids-file FILE (one conversation id per line)",
                                              options.ids_file is None),
                                             ("--format json", options.format is None)) if absent]
        raise UsageError(f"--judge-fixtures requires {' and '.join(missing)}; "
                         f"add {'them' if len(missing) > 1 else 'it'} to the command")
    if options.ids_file is None:
        raise UsageError("pass --ids-file FILE (one conversation id per line)")
    if options.output is not None and options.append_to:
        raise UsageError("--output and --append-to are mutually exclusive; pick one")
    if options.append_to and not options.judge_fixtures:
        raise UsageError("--append-to adds calibration rows: it requires --judge-fixtures")
    if options.force and options.output is None:
        raise UsageError("--force only applies to --output")


def plan_export(options: ExportOptions, environ: Mapping[str, str]) -> ExportPlan:
    """Check everything before any request, and say what to ask the runtime for.

    A conversation is asked for when at least one ``--append-to`` file lacks it
    (every one, without ``--append-to``). Raises :class:`UsageError` (exit 2) for
    bad flags, a bad ids file, an ``--output`` that exists, any ``--append-to``
    file that cannot be appended to, and ``ConfigError`` when not logged in.
    """
    validate_options(options)
    assert options.ids_file is not None  # validate_options guarantees it
    ids = read_ids_file(options.ids_file)
    _check_output(options)
    targets = _read_targets(options.append_to, ids.ids)
    wanted = [conversation_id for conversation_id in ids.ids
              if not targets or any(conversation_id not in target.file.conversation_ids
                                    for target in targets)]
    return ExportPlan(options=options, requested=tuple(ids.ids),
                      duplicate_ids=tuple(ids.duplicates), targets=targets,
                      chunks=split_into_chunks(wanted),
                      credentials=resolve_credentials(environ) if wanted else None)


def _read_targets(paths: Sequence[Path], requested: list[str]) -> tuple[Target, ...]:
    """Every ``--append-to`` file read and checked (writable, a symlink only to a
    calibration file...), all of them before the first request."""
    targets: dict[Path, Target] = {}
    for path in paths:
        existing = read_existing(path)
        seen = targets.get(existing.path)
        if seen is not None:
            raise UsageError(f"--append-to {seen.spelled} and --append-to {path} name the same "
                             f"file ({existing.path}); pass it once")
        skipped = tuple(i for i in requested if i in existing.conversation_ids)
        targets[existing.path] = Target(spelled=path, file=existing, skipped=skipped)
    return tuple(targets.values())


def _check_output(options: ExportOptions) -> None:
    if options.output is None:
        return
    if check_output_target(options.output, flag="--output") and not options.force:
        raise UsageError(f"--output {options.output} already exists; pass --force to replace "
                         "it, or --append-to to add rows to a calibration file")
