"""User text quoted in a diagnostic cannot break its line (SPEC §3.1), in any output format."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.conftest import run_cli

# YAML double-quoted escapes: a line feed, a carriage return, an ANSI escape, NEL,
# a line separator and a right-to-left override inside keys, names and values.
NASTY = r"\n\r\e[31m\N\L\u202E"

FILES = {
    "judges/sample-judge.yaml": (
        f'name: "sample-judge{NASTY}"\n'
        'description: "A judge whose keys and values carry control characters."\n'
        "on:\n"
        "  - event: message\n"
        "    match:\n"
        f'      "te{NASTY}xt": user\n'
        f'      text: "/a{NASTY}(/"\n'
        "llm:\n"
        "  provider: openai\n"
        "  model: gpt-5.6-luna\n"
        f'  "tem{NASTY}perature": 1\n'
        "instructions: not_applicable when there is nothing to grade.\n"
        f'"ext{NASTY}ra": 1\n'),
    "judges/dup.yaml": f'"k{NASTY}": 1\n"k{NASTY}": 2\n',
    "agents/helper.yaml": f'name: "helper{NASTY}"\n',
    "agents/block.yaml": "name: |\n  block-agent\n",
    # Rules that quote names without quote(): the constructors escape them too.
    "agents/lister.yaml": f'name: lister\nskills: ["ski{NASTY}ll"]\n',
}
DIAGNOSTIC = re.compile(r"^[^:]+:\d+(:\d+)?: (error|warning)\[[a-z-]+\] \S")


@pytest.fixture(scope="module")
def recipe(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("nasty")
    (root / "SYSTEM.md").write_text("You are a test agent.\n")
    for name, text in FILES.items():
        (root / name).parent.mkdir(exist_ok=True)
        (root / name).write_text(text)
    return root


@pytest.fixture(scope="module")
def diagnostics(recipe: Path) -> list[dict[str, object]]:
    result = run_cli(["check", ".", "--format", "json"], cwd=recipe)
    found: list[dict[str, object]] = json.loads(result.stdout)["diagnostics"]
    assert {d["code"] for d in found} >= {"invalid-name", "unknown-key", "invalid-regex",
                                          "yaml-duplicate-key", "unknown-skill"}, found
    return found


def _printable_lines(output: str) -> list[str]:
    lines = output.splitlines()  # every line break Python knows, not only "\n"
    assert output.split("\n")[:-1] == lines, "a line break other than \\n in the output"
    assert all(line.isprintable() for line in lines), [ln for ln in lines if not ln.isprintable()]
    return lines


def test_text_output_is_one_line_per_diagnostic(recipe: Path,
                                                diagnostics: list[dict[str, object]]) -> None:
    lines = _printable_lines(run_cli(["check", "."], cwd=recipe).stdout)
    shown = [line for line in lines if DIAGNOSTIC.match(line)]
    assert len(shown) == len(diagnostics)
    assert len(lines) - len(shown) == 1  # the summary
    assert any("'sample-judge\\n\\r\\x1b[31m\\x85\\u2028\\u202e'" in line for line in shown)


def test_github_output_is_one_command_per_diagnostic(
        recipe: Path, diagnostics: list[dict[str, object]]) -> None:
    lines = _printable_lines(run_cli(["check", ".", "--format", "github"], cwd=recipe).stdout)
    assert len([line for line in lines if line.startswith("::")]) == len(diagnostics)


def test_json_messages_hold_no_control_characters(diagnostics: list[dict[str, object]]) -> None:
    for diagnostic in diagnostics:
        assert str(diagnostic["message"]).isprintable(), diagnostic
        assert diagnostic["hint"] is None or str(diagnostic["hint"]).isprintable(), diagnostic
