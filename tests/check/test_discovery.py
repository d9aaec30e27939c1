"""Which recipes `introspection check` covers, and the pre-commit hook that runs it (SPEC §3.1)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO, run_cli
from tests.hostile.recipes import base_recipe, write_calibration, write_judge

EMPTY_REPORT = {"diagnostics": [], "recipes": [], "summary": {
    "errors": 0, "warnings": 0, "judges": 0, "agents": 0, "skills": 0, "calibration_rows": 0}}


def _report(args: list[str], cwd: Path) -> tuple[dict[str, object], int]:
    result = run_cli(["check", *args, "--format", "json"], cwd=cwd)
    assert "Traceback" not in result.stderr
    return json.loads(result.stdout), result.returncode


def _codes(report: dict[str, object]) -> list[tuple[str, str]]:
    diagnostics = report["diagnostics"]
    assert isinstance(diagnostics, list)
    return sorted((d["path"], d["code"]) for d in diagnostics)


def test_json_is_the_full_object_even_when_no_path_is_inside_a_recipe(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("x\n")
    result = run_cli(["check", "README.md", "--format", "json"], cwd=tmp_path)
    assert result.returncode == 0
    assert json.loads(result.stdout) == EMPTY_REPORT
    assert "README.md is not inside a recipe" in result.stderr


@pytest.mark.parametrize("output_format", ["text", "github"])
def test_text_and_github_say_on_stderr_that_nothing_was_checked(tmp_path: Path,
                                                                output_format: str) -> None:
    (tmp_path / "README.md").write_text("x\n")
    result = run_cli(["check", "README.md", "--format", output_format], cwd=tmp_path)
    assert result.returncode == 0
    assert result.stdout == ""
    assert "nothing was checked" in result.stderr


def test_a_system_md_in_the_wrong_case_marks_a_recipe_that_fails(tmp_path: Path) -> None:
    base_recipe(tmp_path)  # r/, a good recipe beside it
    (tmp_path / "w").mkdir()
    (tmp_path / "w" / "System.md").write_text("You are a support agent.\n")
    wrong = [("w/System.md", "system-wrong-case")]
    for args in ([], ["w"], ["w/System.md"]):  # every recipe below; the directory; pre-commit
        report, code = _report(args, tmp_path)
        assert "w" in report["recipes"], args  # type: ignore[operator]
        assert _codes(report) == wrong, args
        assert code == 1


@pytest.mark.parametrize("target", ["nowhere.md", "SYSTEM.md"], ids=["dangling", "loop"])
def test_a_system_md_link_that_resolves_to_nothing_still_marks_a_recipe(tmp_path: Path,
                                                                        target: str) -> None:
    root = base_recipe(tmp_path)
    (root / "SYSTEM.md").unlink()
    os.symlink(target, root / "SYSTEM.md")
    for args in (["r"], ["r/judges/good.yaml"], []):
        report, code = _report(args, tmp_path)
        assert report["recipes"] == ["r"], args
        assert _codes(report) == [("r/SYSTEM.md", "broken-symlink")], args
        assert code == 1


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """good/ (clean), good/nested/ (a recipe inside a recipe, with an orphan calibration
    file), group/a/ and group/b/ (clean), good/evals/case/ (a broken eval fixture recipe)
    and node_modules/, .hidden/ copies of a broken one."""
    good = base_recipe(tmp_path).rename(tmp_path / "good")
    nested = base_recipe(good).rename(good / "nested")
    write_calibration(nested, b"", judge="gone")
    for name in ("a", "b"):
        (tmp_path / "group").mkdir(exist_ok=True)
        base_recipe(tmp_path / "group").rename(tmp_path / "group" / name)
    for skipped in ("good/evals/case", "node_modules/pkg", ".hidden/copy"):
        broken = base_recipe(tmp_path).rename(tmp_path / "tmp-broken")
        write_judge(broken, "good", "name: [\n")
        (tmp_path / skipped).parent.mkdir(parents=True, exist_ok=True)
        broken.rename(tmp_path / skipped)
    return tmp_path


def test_no_path_finds_recipes_nested_in_recipes_and_skips_evals_hidden_node_modules(
        tree: Path) -> None:
    report, code = _report([], tree)
    assert report["recipes"] == ["good", "good/nested", "group/a", "group/b"]
    assert _codes(report) == [("good/nested/judges/gone.calibration.jsonl",
                               "calibration-orphan")]
    assert code == 1


def test_a_directory_holding_recipes_stands_for_every_recipe_below_it(tree: Path) -> None:
    report, code = _report(["group"], tree)
    assert report["recipes"] == ["group/a", "group/b"]
    assert code == 0


def test_a_directory_inside_a_recipe_stands_for_that_recipe_only(tree: Path) -> None:
    report, _ = _report(["good/judges", "good"], tree)
    assert report["recipes"] == ["good"]


def test_a_directory_with_no_recipe_in_it_above_or_below_exits_2(tree: Path) -> None:
    (tree / "docs").mkdir()
    result = run_cli(["check", "docs"], cwd=tree)
    assert result.returncode == 2
    assert "docs is not a recipe and has none below it" in result.stderr


def test_an_explicit_file_inside_evals_is_honoured(tree: Path) -> None:
    report, code = _report(["good/evals/case/judges/good.yaml"], tree)
    assert report["recipes"] == ["good/evals/case"]
    assert _codes(report) == [("good/evals/case/judges/good.yaml", "yaml-syntax")]
    assert code == 1


def test_pre_commit_hook_checks_every_recipe_on_every_commit() -> None:
    hooks = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())
    assert [hook["id"] for hook in hooks] == ["introspection-check"]
    hook = hooks[0]
    assert hook["entry"] == "introspection check"
    # Deleted files are never passed to a hook, and a hook with no matching file is
    # skipped: only always_run without file names sees a deletion-only commit.
    assert hook["always_run"] is True
    assert hook["pass_filenames"] is False
    assert hook["require_serial"] is True
    assert "files" not in hook


def test_the_hook_command_sees_what_a_deletion_only_commit_breaks(tmp_path: Path) -> None:
    """What the hook runs (`introspection check`, no PATH, at the repository root) after
    `git rm judges/good.yaml` and `git rm skills/lookup/SKILL.md`."""
    root = base_recipe(tmp_path / "recipes")
    write_calibration(root, b"")
    (root / "judges" / "good.yaml").unlink()
    shutil.rmtree(root / "skills" / "lookup")
    result = run_cli(["check"], cwd=tmp_path)
    assert result.returncode == 1
    assert "recipes/r/judges/good.calibration.jsonl: error[calibration-orphan]" in result.stdout
    assert "recipes/r/agents/support.yaml:3:5: error[unknown-skill]" in result.stdout


def test_text_summary_names_at_most_five_recipes(tmp_path: Path) -> None:
    for index in range(7):
        base_recipe(tmp_path).rename(tmp_path / f"r{index}")
    result = run_cli(["check"], cwd=tmp_path)
    assert result.returncode == 0
    assert result.stdout == ("Checked 7 recipes (r0, r1, r2, r3, r4, and 2 more): 7 judges, "
                             "7 agents, 7 skills, 0 calibration rows; no problems found\n")
