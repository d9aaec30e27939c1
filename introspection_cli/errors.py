"""The error hierarchy shared by every layer, and the one mapping to exit codes.

Core modules raise these (wrapping third-party errors at their boundary with
``raise ... from exc``); only :mod:`introspection_cli.cli.app` turns them into
exit codes. Messages must say what to do next and must never contain a secret.
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """Exit codes of every command (SPEC §3)."""

    OK = 0
    PROBLEMS = 1  # problems in the user's data, rows rejected, a threshold missed
    USAGE = 2  # bad flag, missing path, not logged in, missing API key
    SERVICE = 3  # a model provider or the runtime failed after retries


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
