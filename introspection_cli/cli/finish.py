"""The one way a command's result leaves the process: stdout, stderr, the exit code."""

from __future__ import annotations

import sys
from typing import NoReturn

import typer

from introspection_cli.cli.stdout import write_stdout
from introspection_cli.errors import CommandResult


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
