"""``introspection schema NAME``: print a shipped JSON Schema."""

from __future__ import annotations

from typing import Annotated

import typer


def schema(
    name: Annotated[str, typer.Argument(
        help="Schema name: judge, agent, skill, judge-fixture, eval-report, eval-report-v1, "
             "eval-report-v2 or certificate.")],
) -> None:
    """Print a JSON Schema (Draft 2020-12), e.g. for yaml-language-server in your editor."""
    from introspection_cli.cli.stdout import write_stdout
    from introspection_cli.resources import schema_text

    write_stdout(schema_text(name), what=f"the {name} schema")


def register(app: typer.Typer) -> None:
    """Add ``schema`` to the root app."""
    app.command("schema")(schema)
