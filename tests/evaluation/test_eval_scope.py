"""What eval refuses (only errors in the judges it runs) and the provenance its report carries."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.conftest import run_cli
from tests.evaluation.conftest import GATED_JUDGE, UNGATED_JUDGE, fixture_row, write_recipe
from tests.evaluation.stub_model_server import StubModelServer

BROKEN_JUDGE = UNGATED_JUDGE.replace("name: helpful", "name: helpful\ncolour: blue")


def _recipe(root: Path, *, broken_has_rows: bool) -> Path:
    billing = [fixture_row("conv_1", "refund VERDICT:pass", split="dev")]
    rows = [fixture_row("conv_2", "hi VERDICT:pass", split="dev")] if broken_has_rows else []
    write_recipe(root, {"billing": (GATED_JUDGE, billing), "helpful": (BROKEN_JUDGE, rows)})
    (root / "agents").mkdir()
    (root / "agents" / "support.yaml").write_text("name: Not Kebab\n")
    return root


def _eval(root: Path, cache: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(["judges", "eval", str(root), *args],
                   env={"INTROSPECTION_CACHE_DIR": str(cache)})


def test_errors_outside_the_selected_judge_are_warnings(tmp_path: Path,
                                                        stub: StubModelServer) -> None:
    root = _recipe(tmp_path / "r", broken_has_rows=True)
    result = _eval(root, tmp_path / "cache", "--judge", "billing")
    assert result.returncode == 0, result.stderr
    assert "warning: " in result.stderr and "error[unknown-key]" in result.stderr
    assert "error[invalid-name]" in result.stderr or "agents/support.yaml" in result.stderr
    assert "(not in a judge being evaluated)" in result.stderr


def test_an_error_in_a_selected_judge_refuses_the_run(tmp_path: Path,
                                                      stub: StubModelServer) -> None:
    root = _recipe(tmp_path / "r", broken_has_rows=True)
    explicit = _eval(root, tmp_path / "cache", "--judge", "helpful")
    # The default selection is every judge with a calibration file: helpful is one.
    default = _eval(root, tmp_path / "cache")
    for result in (explicit, default):
        assert result.returncode == 1, result.stderr
        assert "error(s) in the judges to evaluate" in result.stderr
        assert "helpful.yaml" in result.stderr and "error[unknown-key]" in result.stderr
        assert "support.yaml" not in result.stderr.split("evaluating:", 1)[1]
    assert stub.requests == []


def test_a_broken_judge_without_calibration_rows_does_not_block_the_others(
        tmp_path: Path, stub: StubModelServer) -> None:
    root = _recipe(tmp_path / "r", broken_has_rows=False)
    result = _eval(root, tmp_path / "cache")
    assert result.returncode == 0, result.stderr
    assert "helpful.yaml" in result.stderr  # as a warning


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.email=t@example.invalid", "-c", "user.name=t",
                           *args], cwd=root, check=True, capture_output=True,
                          text=True).stdout.strip()


def test_the_report_names_the_git_commit_and_whether_the_recipe_is_dirty(
        tmp_path: Path, stub: StubModelServer) -> None:
    root = write_recipe(tmp_path / "repo" / "recipe", {"billing": (
        GATED_JUDGE, [fixture_row("conv_1", "refund VERDICT:pass", split="dev")])})
    _git(tmp_path / "repo", "init", "-q")
    _git(tmp_path / "repo", "add", ".")
    _git(tmp_path / "repo", "commit", "-qm", "recipe")
    head = _git(tmp_path / "repo", "rev-parse", "HEAD")
    clean = _eval(root, tmp_path / "cache", "--format", "json")
    report = json.loads(clean.stdout)
    assert report["git"] == {"commit": head, "dirty": False}
    assert report["tool_version"] and report["created_at"].endswith("Z")
    (root / "SYSTEM.md").write_text("Edited.\n")
    dirty = json.loads(_eval(root, tmp_path / "cache", "--format", "json").stdout)
    assert dirty["git"] == {"commit": head, "dirty": True}
