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
    ["judges", "--help"],
    ["judges", "eval", "--help"],
    ["judges", "label", "--help"],
    ["judges", "status", "--format", "xml"],
    ["judges", "--version"],
    ["conversations", "get", "--help"],
    ["conversations", "--help"],
    ["schema", "judge", "extra"],
]


def _run(app: typer.Typer, argv: list[str]) -> tuple[int, str]:
    result = CliRunner().invoke(typer.main.get_command(app), argv, prog_name="introspection")
    return result.exit_code, result.output


@pytest.mark.parametrize("argv", ARGUMENTS, ids=" ".join)
def test_a_command_alone_reads_as_in_the_full_app(argv: list[str]) -> None:
    assert _run(build_app(*_named_command(argv)), argv) == _run(build_app(), argv)


def _commands(app: typer.Typer) -> dict[str, object]:
    return typer.main.get_command(app).commands  # type: ignore[attr-defined,no-any-return]


def test_only_the_named_command_is_built() -> None:
    assert _named_command(["check", "."]) == ("check", ".")
    assert list(_commands(build_app("check", "."))) == ["check"]
    judges = _commands(build_app(*_named_command(["judges", "status", "."])))["judges"]
    assert list(judges.commands) == ["status"]  # type: ignore[attr-defined]


def test_building_a_part_leaves_the_full_app_whole() -> None:
    build_app("judges", "status")
    judges = _commands(build_app())["judges"]
    assert {"eval", "status", "label", "split"} <= set(judges.commands)  # type: ignore[attr-defined]


@pytest.mark.parametrize("argv", [[], ["--help"], ["--version"], ["chek"], ["-h", "check"]])
def test_anything_else_gets_the_full_app(argv: list[str]) -> None:
    assert _named_command(argv) == (None, None)
