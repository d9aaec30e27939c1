"""The root Typer app, and the one place where errors become exit codes.

Command modules import only Typer and the standard library at import time:
``introspection check`` runs on every commit, so the model SDKs, Jinja2 and
Rich are imported inside the commands that need them.
"""

from __future__ import annotations

import copy
import os
import sys
from collections.abc import Callable
from typing import Annotated, NoReturn

import typer

from introspection_cli import __version__
from introspection_cli.cli import (
    agree_cmd,
    align_cmd,
    auth_cmd,
    check_cmd,
    conversations_cmd,
    doctor_cmd,
    init_cmd,
    judges_cmd,
    schema_cmd,
    trust_cmd,
)
from introspection_cli.errors import ExitCode, IntrospectionError


def _print_version(value: bool) -> None:
    if value:
        from introspection_cli.cli.stdout import write_stdout

        write_stdout(f"introspection {__version__}\n", what="the version", quiet_epipe=True)
        raise typer.Exit()


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


trust_cmd.register(judges_cmd.app)
align_cmd.register(judges_cmd.app)
agree_cmd.register(judges_cmd.app)


def _add_auth(app: typer.Typer, subcommand: str | None) -> None:
    auth_cmd.register(app)


def _add_init(app: typer.Typer, subcommand: str | None) -> None:
    init_cmd.register(app)


def _add_doctor(app: typer.Typer, subcommand: str | None) -> None:
    doctor_cmd.register(app)


def _add_check(app: typer.Typer, subcommand: str | None) -> None:
    check_cmd.register(app)


def _add_schema(app: typer.Typer, subcommand: str | None) -> None:
    schema_cmd.register(app)


def _add_judges(app: typer.Typer, subcommand: str | None) -> None:
    app.add_typer(_only(judges_cmd.app, subcommand), name="judges")


def _add_conversations(app: typer.Typer, subcommand: str | None) -> None:
    app.add_typer(_only(conversations_cmd.app, subcommand), name="conversations")


def _only(group: typer.Typer, subcommand: str | None) -> typer.Typer:
    """``group`` with only ``subcommand``, or whole when that names none of its commands."""
    kept = [info for info in group.registered_commands if info.name == subcommand]
    if not kept:
        return group
    subset = copy.copy(group)
    subset.registered_commands = kept
    return subset


#: Each top-level command and what adds it, in help order.
_COMMANDS: dict[str, Callable[[typer.Typer, str | None], None]] = {
    "init": _add_init, "check": _add_check, "schema": _add_schema, "judges": _add_judges,
    "conversations": _add_conversations, "login": _add_auth, "logout": _add_auth,
    "doctor": _add_doctor,
}


def build_app(command: str | None = None, subcommand: str | None = None) -> typer.Typer:
    """The root app, with every command or only ``command`` (one of :data:`_COMMANDS`) and,
    for a group (``judges``), only its ``subcommand``.

    Typer turns the signature of every command an app holds into click options
    before it runs any (about 13 ms for all of ours, 11 of them for ``judges``), and
    ``introspection check`` runs on every commit, so :func:`main` builds the app with
    only the command the arguments name; its help, usage and errors read the same
    either way.
    """
    app = typer.Typer(
        name="introspection",
        help="Validate recipe packages, calibrate their judges, export calibration data.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    app.callback()(_root)
    adders = [_COMMANDS[command]] if command is not None else _COMMANDS.values()
    for add in dict.fromkeys(adders):  # login and logout share one
        add(app, subcommand)
    return app


#: Every command: what ``typer introspection_cli.cli.app`` and tests of the tree see.
app = build_app()


def _named_command(argv: list[str]) -> tuple[str | None, str | None]:
    """The command (and the subcommand) ``argv`` starts with; None for anything else
    (``--help``, ``--version``, a typo), which the full app (or group) answers."""
    if not argv or argv[0] not in _COMMANDS:
        return None, None
    return argv[0], argv[1] if len(argv) > 1 else None


def fail(message: str, code: ExitCode) -> NoReturn:
    """Print ``message`` as an error on stderr and exit with ``code``."""
    sys.stderr.write(f"introspection: error: {message}\n")
    sys.stderr.flush()
    raise SystemExit(int(code))


def main(argv: list[str] | None = None) -> NoReturn:
    """Console-script entry point: run the app and map errors to exit codes."""
    args = sys.argv[1:] if argv is None else argv
    command = typer.main.get_command(build_app(*_named_command(args)))
    try:
        command.main(args=args, prog_name="introspection", standalone_mode=True)
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
