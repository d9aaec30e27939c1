"""`introspection check` as users run it: discovery, formats, exit codes, colour, imports."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, REPO, run_cli

EXAMPLE = FIXTURES / "recipes" / "customer-support"


@pytest.fixture
def two_recipes(tmp_path: Path) -> Path:
    shutil.copytree(EXAMPLE, tmp_path / "good")
    shutil.copytree(FIXTURES / "invalid" / "unknown-key", tmp_path / "nested" / "bad")
    (tmp_path / "nested" / "bad" / "expected.json").unlink()
    shutil.copytree(FIXTURES / "invalid" / "yaml-syntax", tmp_path / "node_modules" / "skipped")
    shutil.copytree(FIXTURES / "invalid" / "yaml-syntax", tmp_path / ".hidden" / "skipped")
    return tmp_path


def test_example_recipe_is_clean() -> None:
    result = run_cli(["check", str(EXAMPLE)])
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no problems found" in result.stdout


def test_no_path_checks_every_recipe_below_skipping_hidden_and_node_modules(
        two_recipes: Path) -> None:
    result = run_cli(["check", "--format", "json"], cwd=two_recipes)
    report = json.loads(result.stdout)
    assert sorted(report["recipes"]) == ["good", "nested/bad"]
    assert {d["path"] for d in report["diagnostics"]} == {"nested/bad/judges/sample-judge.yaml"}
    assert result.returncode == 1


def test_files_map_to_their_recipe_once_and_outside_files_are_skipped(two_recipes: Path) -> None:
    (two_recipes / "ci.yaml").write_text("not: a recipe\n")
    result = run_cli(["check", "good/judges/useful-resolution.yaml", "good/SYSTEM.md",
                      "good/agents", "ci.yaml", "--format", "json"], cwd=two_recipes)
    assert json.loads(result.stdout)["recipes"] == ["good"]
    assert "ci.yaml is not inside a recipe" in result.stderr
    assert result.returncode == 0


@pytest.mark.parametrize("args", [["does-not-exist"], ["empty-dir"]])
def test_missing_path_or_non_recipe_directory_exits_2(tmp_path: Path, args: list[str]) -> None:
    (tmp_path / "empty-dir").mkdir()
    result = run_cli(["check", *args], cwd=tmp_path)
    assert result.returncode == 2
    assert args[0] in result.stderr
    assert "Traceback" not in result.stderr


def test_no_recipe_anywhere_exits_2(tmp_path: Path) -> None:
    result = run_cli(["check"], cwd=tmp_path)
    assert result.returncode == 2
    assert "no recipe found" in result.stderr


def test_text_format_lines_and_summary(two_recipes: Path) -> None:
    result = run_cli(["check", "nested/bad"], cwd=two_recipes)
    lines = result.stdout.splitlines()
    assert lines[0].startswith("nested/bad/judges/sample-judge.yaml:1:1: error[missing-key] ")
    assert "nested/bad/judges/sample-judge.yaml:6:1: error[unknown-key] unknown key " \
           "'instruction' (did you mean 'instructions'?)" in lines
    assert lines[-1] == ("Checked 1 recipe (nested/bad): 1 judge, 0 agents, 0 skills, "
                         "0 calibration rows; 2 errors, 0 warnings")
    assert "\033[" not in result.stdout  # not a TTY: no colour


def test_github_format(two_recipes: Path) -> None:
    result = run_cli(["check", "nested/bad", "--format", "github"], cwd=two_recipes)
    assert ("::error file=nested/bad/judges/sample-judge.yaml,line=6,col=1,title=unknown-key::"
            "unknown key 'instruction' (did you mean 'instructions'?)") in result.stdout.splitlines()
    assert result.stdout.splitlines()[-1] == (
        "2 errors, 0 warnings in 1 recipe (1 judge, 0 agents, 0 skills, 0 calibration rows)")


def test_github_format_folds_repeats_like_text_and_json_keeps_them_all() -> None:
    case = FIXTURES / "invalid" / "fixture-unlabelled-many"
    lines = run_cli(["check", ".", "--format", "github"], cwd=case).stdout.splitlines()
    assert len(lines) == 5
    assert [line.split("::")[1] for line in lines[:3]] == [
        f"warning file=judges/sample-judge.calibration.jsonl,line={n},col=1,"
        "title=fixture-unlabelled" for n in (1, 2, 3)]
    assert lines[3] == ("::warning file=judges/sample-judge.calibration.jsonl,"
                        "title=fixture-unlabelled::… and 97 more (fixture-unlabelled)")
    assert lines[4] == ("0 errors, 100 warnings in 1 recipe (1 judge, 0 agents, 0 skills, "
                        "100 calibration rows)")
    report = json.loads(run_cli(["check", ".", "--format", "json"], cwd=case).stdout)
    assert len(report["diagnostics"]) == 100


def test_repeats_fold_per_code_and_file_not_across_them(tmp_path: Path) -> None:
    from introspection_cli.diagnostics import warning
    from introspection_cli.reporting.render_check import More, collapsed

    diagnostics = sorted([warning("a", n, 1, "x", "m") for n in range(1, 6)]
                         + [warning("a", n, 1, "y", "m") for n in range(1, 4)]
                         + [warning("b", n, 1, "x", "m") for n in range(1, 5)],
                         key=lambda d: d.sort_key())
    shown = list(collapsed(diagnostics))
    assert [(d.path, d.code, d.hidden) for d in shown if isinstance(d, More)] == [
        ("a", "x", 2), ("b", "x", 1)]
    assert len(shown) == 3 + 3 + 1 + 3 + 1
    assert isinstance(shown[6], More) and shown[6].path == "a"  # after a's own lines


def test_strict_turns_warnings_into_failures() -> None:
    case = FIXTURES / "invalid" / "missing-not-applicable"
    assert run_cli(["check", str(case)]).returncode == 0
    assert run_cli(["check", str(case), "--strict"]).returncode == 1


def test_colour_only_on_a_tty_and_never_with_no_color() -> None:
    script = ("import pty, os, sys\n"
              "pid, fd = pty.fork()\n"
              "if pid == 0:\n"
              "    os.execvp(sys.executable, [sys.executable, '-m', 'introspection_cli', 'check', "
              f"{str(FIXTURES / 'invalid' / 'unknown-key')!r}])\n"
              "out = b''\n"
              "while True:\n"
              "    try:\n"
              "        chunk = os.read(fd, 4096)\n"
              "    except OSError:\n"
              "        break\n"
              "    if not chunk:\n"
              "        break\n"
              "    out += chunk\n"
              "os.waitpid(pid, 0)\n"
              "sys.stdout.write(repr(out))\n")
    env_tty = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                             env={"PATH": "/usr/bin:/bin", "TERM": "xterm"}, check=False)
    assert "\\x1b[31merror" in env_tty.stdout
    no_color = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                              env={"PATH": "/usr/bin:/bin", "TERM": "xterm", "NO_COLOR": "1"},
                              check=False)
    assert "\\x1b[" not in no_color.stdout
    assert "error[unknown-key]" in no_color.stdout


def test_check_imports_no_model_sdk_jinja_or_rich() -> None:
    code = ("import sys\n"
            "from introspection_cli.cli.app import main\n"
            "try:\n"
            f"    main(['check', {str(EXAMPLE)!r}])\n"
            "except SystemExit:\n"
            "    pass\n"
            "heavy = sorted(m for m in sys.modules if m.split('.')[0] in "
            "('openai', 'anthropic', 'jinja2', 'rich', 'httpx', 'httpx2'))\n"
            "print(heavy)\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=False, cwd=REPO)
    assert result.stdout.strip().splitlines()[-1] == "[]", result.stdout + result.stderr


def test_version_and_help_for_every_command() -> None:
    version = run_cli(["--version"])
    assert version.returncode == 0 and version.stdout.startswith("introspection ")
    commands = [[], ["check"], ["schema"], ["judges"], ["judges", "eval"], ["judges", "render"],
                ["judges", "certify"], ["judges", "estimate"], ["judges", "status"],
                ["judges", "align"],
                ["conversations"], ["conversations", "get"], ["login"], ["logout"]]
    for command in commands:
        result = run_cli([*command, "--help"])
        assert result.returncode == 0, (command, result.stderr)
        assert "Usage:" in result.stdout


@pytest.mark.parametrize("name", ["judge", "agent", "skill", "certificate", "eval-report",
                                  "eval-report-v1", "eval-report-v2", "align-report"])
def test_schema_command_prints_a_valid_draft_2020_12_schema(name: str) -> None:
    from jsonschema import Draft202012Validator

    result = run_cli(["schema", name])
    assert result.returncode == 0
    Draft202012Validator.check_schema(json.loads(result.stdout))


def test_unknown_schema_exits_2() -> None:
    result = run_cli(["schema", "nope"])
    assert result.returncode == 2
    assert "known:" in result.stderr
