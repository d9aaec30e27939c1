"""``introspection login`` and ``introspection logout``."""

from __future__ import annotations

import os
import sys
from typing import Annotated

import typer


def login(
    url: Annotated[str | None, typer.Option(
        "--url",
        help="The runtime's base URL (default: INTROSPECTION_API_URL, else the stored one).",
    )] = None,
    token_stdin: Annotated[bool, typer.Option(
        "--token-stdin", help="Read the token from stdin instead of prompting for it.",
    )] = False,
) -> None:
    """Verify a runtime token and store it (file mode 0600) for the export commands.

    The token is checked with GET /v1/whoami before it is stored, and never printed.
    """
    from introspection_cli.cli.stdout import write_stdout
    from introspection_cli.errors import ConfigError
    from introspection_cli.runtime.auth import login as do_login
    from introspection_cli.runtime.auth import login_url

    target = login_url(url, os.environ)
    if token_stdin:
        token = sys.stdin.readline()
    else:
        try:
            token = typer.prompt(f"Token for {target.url}", hide_input=True)  # getpass: no echo
        except (EOFError, typer.Abort):
            raise ConfigError(
                "no token given; pass it at the prompt or with --token-stdin"
            ) from None
    result = do_login(target, token, os.environ)
    try:
        write_stdout(f"Logged in to {result.url} as {result.identity.describe()}.\n",
                     what="the login message")
    finally:
        typer.echo(f"Credentials stored in {result.stored_at}.", err=True)


def logout() -> None:
    """Remove the stored runtime login."""
    from introspection_cli.cli.stdout import write_stdout
    from introspection_cli.runtime.auth import logout as do_logout
    from introspection_cli.runtime.credentials import TOKEN_ENV, credentials_path

    removed = do_logout(os.environ)
    if removed is None:
        message = f"Not logged in (no {credentials_path(os.environ)}); nothing to remove.\n"
    else:
        message = f"Logged out: removed {removed}.\n"
    write_stdout(message, what="the logout message", quiet_epipe=True)
    if os.environ.get(TOKEN_ENV):
        typer.echo(f"Note: {TOKEN_ENV} is still set in your environment.", err=True)


def register(app: typer.Typer) -> None:
    """Add ``login`` and ``logout`` to the root app."""
    app.command("login")(login)
    app.command("logout")(logout)
