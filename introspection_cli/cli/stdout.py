"""Every byte a command prints to stdout, checked: nothing is lost without a word.

``sys.stdout.write`` hides a short write, and the full disk behind ``> file``
only shows up (if at all) when the interpreter flushes at exit, after the
command has reported success. So commands print through here: the bytes go
straight to file descriptor 1 in a loop that notices a short write, and a
short write, ``ENOSPC``, ``EFBIG`` or ``EPIPE`` ends the command with
:class:`~introspection_cli.errors.OutputError` (exit 2) saying what was not
written.

Two functions, for every command::

    write_stdout(text_or_bytes, what="the JSON report")      # a report, a schema, a line
    write_stdout_lines(rows, noun="fixture")                  # records, counted on failure

and :func:`finish`, the one way a workflow's
:class:`~introspection_cli.errors.CommandResult` leaves the process (stdout, its
problems on stderr, its exit code).

A closed pipe under text output (``introspection check | head``) can be made
quiet with ``quiet_epipe=True``: exit 1, no message.
"""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

import typer

from introspection_cli.errors import CommandResult, OutputError


def write_stdout(data: str | bytes, *, what: str = "the output",
                 quiet_epipe: bool = False) -> None:
    """Write all of ``data`` to stdout now (``str`` in stdout's encoding).

    Raises :class:`OutputError` naming ``what`` and how many bytes reached stdout.
    """
    payload = _encoded(data)
    written, problem = _write_all(payload)
    if problem is None:
        return
    if problem.errno == errno.EPIPE and quiet_epipe:
        raise OutputError("", quiet=True)
    raise OutputError(f"could not write {what} to stdout ({_reason(problem)}): only "
                      f"{written} of {len(payload)} bytes were written, so it is incomplete")


def write_stdout_lines(records: Sequence[bytes], *, noun: str, before: int = 0) -> None:
    """Write each of ``records`` (without its line break) as one line.

    Raises :class:`OutputError` saying how many complete ``noun`` lines reached
    stdout and how many did not (so an export can say which rows are missing).
    ``before`` lines reached stdout in earlier calls (an export's earlier chunks):
    the counts include them.
    """
    payload = b"".join(record + b"\n" for record in records)
    written, problem = _write_all(payload)
    if problem is None:
        return
    complete, end = 0, 0
    for record in records:
        if end + len(record) + 1 > written:
            break
        end += len(record) + 1
        complete += 1
    cut = " (the next one cut short)" if written > end else ""
    raise OutputError(
        f"could not write to stdout ({_reason(problem)}): only {before + complete} of "
        f"{before + len(records)} {noun}(s) reached stdout{cut}; the other "
        f"{len(records) - complete} were not written"
    )


def _encoded(data: str | bytes) -> bytes:
    if isinstance(data, bytes):
        return data
    encoding = getattr(sys.stdout, "encoding", None) or "utf-8"
    errors = getattr(sys.stdout, "errors", None) or "strict"
    return data.encode(encoding, errors)


def _write_all(payload: bytes) -> tuple[int, OSError | None]:
    """Write ``payload`` to stdout; returns the bytes that got there and what stopped it."""
    try:
        sys.stdout.flush()  # whatever went through sys.stdout before, in order
        fd = sys.stdout.fileno()
    except (AttributeError, ValueError, OSError) as exc:
        if isinstance(exc, OSError) and exc.errno is not None:
            return 0, _closed_if_pipe(exc)
        return _write_to_stream(payload)  # not a real file (a test runner's buffer)
    view = memoryview(payload)
    written = 0
    while written < len(payload):
        try:
            count = os.write(fd, view[written:])
        except OSError as exc:
            return written, _closed_if_pipe(exc)
        if count == 0:  # a short write of nothing: the file takes no more
            return written, OSError(errno.ENOSPC, "stdout accepted no more bytes")
        written += count
    return written, None


def _write_to_stream(payload: bytes) -> tuple[int, OSError | None]:
    buffer = getattr(sys.stdout, "buffer", None)
    try:
        if buffer is None:
            sys.stdout.write(payload.decode("utf-8", "replace"))
            sys.stdout.flush()
            return len(payload), None
        count = buffer.write(payload)
        buffer.flush()
    except OSError as exc:
        return 0, _closed_if_pipe(exc)
    if count is not None and count < len(payload):
        return count, OSError(errno.ENOSPC, "short write")
    return len(payload), None


def _closed_if_pipe(exc: OSError) -> OSError:
    """After EPIPE, point fd 1 at /dev/null so the interpreter's exit flush cannot fail too."""
    if exc.errno == errno.EPIPE:
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            os.close(devnull)
        except (AttributeError, ValueError, OSError):
            pass
    return exc


def _reason(exc: OSError) -> str:
    if exc.errno == errno.EPIPE:
        return "the reading end of the pipe was closed"
    return exc.strerror or type(exc).__name__


def finish(result: CommandResult, *, what: str, quiet_epipe: bool = True) -> NoReturn:
    """Print ``result.stdout`` (``what`` names it if stdout fails), each of its problems on
    stderr, and exit with its code.

    The problems are said even when stdout failed: they are why the exit code is not 0.
    ``quiet_epipe``: a reader that closed the pipe (``| head``) ends the command quietly.
    """
    try:
        write_stdout(result.stdout, what=what, quiet_epipe=quiet_epipe)
    finally:
        for problem in result.problems:
            sys.stderr.write(f"introspection: {problem}\n")
    raise typer.Exit(int(result.exit_code))
