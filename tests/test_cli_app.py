"""The root app built with only the command a run names reads exactly as the full one."""

from __future__ import annotations

import pytest
import typer
from click.testing import CliRunner

from introspection_cli.cli.app import _COMMANDS, _named_command, build_app

ARGUMENTS = [[name, "--help"] for name in _COMMANDS] + [
    ["check", "--format", "xml", "."],
    ["check", "--no-such-flag"],
    ["judges", "status", "--help"],
    ["judges", "nope"],
    ["conversations", "get", "--help"],
]


def _run(app: typer.Typer, argv: list[str]) -> tuple[int, str]:
    result = CliRunner().invoke(typer.main.get_command(app), argv, prog_name="introspection")
    return result.exit_code, result.output


@pytest.mark.parametrize("argv", ARGUMENTS, ids=" ".join)
def test_a_command_alone_reads_as_in_the_full_app(argv: list[str]) -> None:
    assert _run(build_app(_named_command(argv)), argv) == _run(build_app(), argv)


def test_only_the_named_command_is_built() -> None:
    assert _named_command(["check", "."]) == "check"
    assert list(typer.main.get_command(build_app("check")).commands) == ["check"]  # type: ignore[attr-defined]


@pytest.mark.parametrize("argv", [[], ["--help"], ["--version"], ["chek"], ["-h", "check"]])
def test_anything_else_gets_the_full_app(argv: list[str]) -> None:
    assert _named_command(argv) is None
