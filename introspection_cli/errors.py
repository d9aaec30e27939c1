"""The error hierarchy shared by every layer, and the one mapping to exit codes.

Core modules raise these (wrapping third-party errors at their boundary with
``raise ... from exc``); only :mod:`introspection_cli.cli.app` turns them into
exit codes. Messages must say what to do next and must never contain a secret.

A command that runs to its end returns a :class:`CommandResult` instead, whose
exit code comes from :func:`exit_code_for` (what went wrong, in the same terms
as the errors below); :func:`introspection_cli.cli.stdout.finish` writes it out.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum


class ExitCode(IntEnum):
    """Exit codes of every command (SPEC §3)."""

    OK = 0
    PROBLEMS = 1  # problems in the user's data, rows rejected, a threshold missed
    USAGE = 2  # bad flag, missing path, not logged in, missing API key
    SERVICE = 3  # a model provider or the runtime failed after retries


def exit_code_for(*, usage: bool = False, service: bool = False,
                  problems: bool = False) -> ExitCode:
    """The exit code of a command that ran to its end, from what went wrong in it.

    ``usage``: something the user must change before a rerun can succeed (a request
    the provider refused as wrong, a report file that could not be written): 2, before
    anything else. ``service``: a model provider or the runtime failed after retries
    (a rerun may succeed): 3. ``problems``: the user's data has problems, a threshold
    was missed, or the command refused to conclude: 1. Nothing wrong: 0.
    """
    if usage:
        return ExitCode.USAGE
    if service:
        return ExitCode.SERVICE
    return ExitCode.PROBLEMS if problems else ExitCode.OK


@dataclass(frozen=True, slots=True)
class CommandResult:
    """What a command hands back to the command line: the text for stdout, the lines for
    stderr (each said as ``introspection: LINE``), and the exit code. Every workflow
    returns one; the CLI only writes it out."""

    stdout: str = ""
    problems: tuple[str, ...] = ()
    exit_code: ExitCode = ExitCode.OK


class IntrospectionError(Exception):
    """Base of every error this tool raises on purpose."""

    exit_code: ExitCode = ExitCode.USAGE


class UsageError(IntrospectionError):
    """The command line or a path given on it is wrong."""

    exit_code = ExitCode.USAGE


class ConfigError(IntrospectionError):
    """Configuration is missing or wrong: not logged in, no API key, bad config file."""

    exit_code = ExitCode.USAGE


class DataError(IntrospectionError):
    """The user's data cannot be used as it is (a broken report file, no calibration data)."""

    exit_code = ExitCode.PROBLEMS


class OutputError(IntrospectionError):
    """stdout did not take everything a command printed (a full disk, a file size limit,
    a closed pipe). The message says what was not written.

    ``quiet`` (a closed pipe under text output, as in ``| head``): exit with
    ``exit_code`` and print nothing, the reader having gone away on purpose.
    """

    exit_code = ExitCode.USAGE

    def __init__(self, message: str, *, quiet: bool = False) -> None:
        super().__init__(message)
        self.quiet = quiet
        if quiet:
            self.exit_code = ExitCode.PROBLEMS


class ServiceError(IntrospectionError):
    """An external service (model provider, runtime API) failed after retries."""

    exit_code = ExitCode.SERVICE
