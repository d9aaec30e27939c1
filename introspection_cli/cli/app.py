"""The root Typer app, and the one place where errors become exit codes.

Command modules import only Typer and the standard library at import time:
``introspection check`` runs on every commit, so the model SDKs, Jinja2 and
Rich are imported inside the commands that need them.
"""

from __future__ import annotations

import os
import sys
from typing import Annotated, NoReturn

import typer

from introspection_cli import __version__
from introspection_cli.cli import (
    auth_cmd,
    check_cmd,
    conversations_cmd,
    judges_cmd,
    schema_cmd,
    trust_cmd,
)
from introspection_cli.errors import ExitCode, IntrospectionError

app = typer.Typer(
    name="introspection",
    help="Validate recipe packages, calibrate their judges, export calibration data.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _print_version(value: bool) -> None:
    if value:
        from introspection_cli.cli.stdout import write_stdout

        write_stdout(f"introspection {__version__}\n", what="the version", quiet_epipe=True)
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_print_version, is_eager=True,
                     help="Print the version and exit."),
    ] = False,
) -> None:
    """Validate recipe packages, calibrate their judges, export calibration data.

    Exit codes: 0 success; 1 problems found in your data, rows rejected or a
    threshold missed; 2 usage or configuration error; 3 a model provider or the
    runtime failed after retries.
    """


check_cmd.register(app)
schema_cmd.register(app)
trust_cmd.register(judges_cmd.app)
app.add_typer(judges_cmd.app, name="judges")
app.add_typer(conversations_cmd.app, name="conversations")
auth_cmd.register(app)


def fail(message: str, code: ExitCode) -> NoReturn:
    """Print ``message`` as an error on stderr and exit with ``code``."""
    sys.stderr.write(f"introspection: error: {message}\n")
    sys.stderr.flush()
    raise SystemExit(int(code))


def main(argv: list[str] | None = None) -> NoReturn:
    """Console-script entry point: run the app and map errors to exit codes."""
    command = typer.main.get_command(app)
    try:
        command.main(args=argv, prog_name="introspection", standalone_mode=True)
    except IntrospectionError as exc:
        if getattr(exc, "quiet", False):
            raise SystemExit(int(exc.exit_code)) from None
        fail(str(exc), exc.exit_code)
    except KeyboardInterrupt:
        sys.stderr.write("introspection: interrupted\n")
        raise SystemExit(130) from None
    except Exception as exc:  # a bug: say so, without a traceback unless asked
        if os.environ.get("INTROSPECTION_DEBUG"):
            raise
        fail(
            f"internal error ({type(exc).__name__}). This is a bug in introspection; "
            "rerun with INTROSPECTION_DEBUG=1 to see the traceback and report it.",
            ExitCode.USAGE,
        )
    raise SystemExit(0)
