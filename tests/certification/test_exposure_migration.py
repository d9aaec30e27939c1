"""The old evaluation ledger is read once, for migration, and only for this recipe's rows.

The ledger beside the verdict cache is keyed by judge name, not by recipe, so several
recipes sharing a cache directory and a judge name shared its test rows. A judge's new
exposure file (committed with the recipe) carries over only the ledger's test rows whose
conversations its own calibration file holds, once, when the file is created; and no run
writes a test row to the ledger any more. End to end through the real SDKs at the stub.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from introspection_cli.certification.exposure_file import read_looks
from introspection_cli.evaluation.ledger import open_ledger
from tests.certification.test_certify_cli import _recipe, _rows, certify, check
from tests.conftest import run_cli
from tests.evaluation.conftest import fixture_row
from tests.evaluation.old_ledger import write_old_ledger
from tests.evaluation.stub_model_server import StubModelServer

FP_B = "sha256:" + "b" * 64


def _own_rows(prefix: str, passes: int, fails: int) -> list[dict[str, Any]]:
    """Test rows the stub judges right, with conversation ids no other recipe uses."""
    return [fixture_row(f"{prefix}_{label}_{i}", f"hi {i} VERDICT:{label}", expected=label,
                        split="test")
            for label, count in (("pass", passes), ("fail", fails)) for i in range(count)]


def _held(root: Path) -> set[str]:
    calibration = root / "judges" / "helpful.calibration.jsonl"
    return {json.loads(line)["judge_input"]["conversation_id"]
            for line in calibration.read_text().splitlines()}


def _seen(root: Path) -> set[str]:
    return {row.conversation_id for look in read_looks(root / "judges" / "helpful.exposure.jsonl")
            for row in look.rows}


def test_another_recipes_test_rows_never_enter_a_new_exposure_file(
        tmp_path: Path, stub: StubModelServer) -> None:
    cache = tmp_path / "cache"
    first = _recipe(tmp_path / "r1", _rows(16, 16))
    assert certify(first, cache).returncode == 0
    evaluated = run_cli(["judges", "eval", str(first), "--split", "test"],
                        env={"INTROSPECTION_CACHE_DIR": str(cache)})
    assert evaluated.returncode == 0, evaluated.stderr
    # A second recipe, its judge also named helpful, on the same cache: half of its pass
    # and fail rows are conversations the first recipe also holds (the same export).
    second = _recipe(tmp_path / "r2", _rows(8, 8) + _own_rows("r2", 16, 16))
    result = certify(second, cache, "--format", "json")
    assert result.returncode == 0, result.stderr
    assert _seen(second) <= _held(second)  # not one of r1's other rows
    assert all(look.migrated_from is None
               for look in read_looks(second / "judges" / "helpful.exposure.jsonl"))
    assert json.loads(result.stdout)["exposure"]["procedures"] == 1
    report = check(second, "--require-certified")
    assert report["returncode"] == 0, report["diagnostics"]


def test_no_run_writes_a_test_row_to_the_old_ledger(tmp_path: Path,
                                                    stub: StubModelServer) -> None:
    cache = tmp_path / "cache"
    root = _recipe(tmp_path / "r", _rows(16, 16) + _rows(3, 3, split="dev"))
    env = {"INTROSPECTION_CACHE_DIR": str(cache)}
    assert certify(root, cache).returncode == 0
    for args in (["--split", "test"], ["--split", "dev", "--threshold-split", "test",
                                       "--min-agreement", "0.01"], []):
        result = run_cli(["judges", "eval", str(root), *args], env=env)
        assert result.returncode == 0, result.stderr
    ledger = open_ledger(cache)
    assert ledger.test_evaluations("helpful") == {}
    assert (cache / "evaluations.sqlite3").exists()  # the dev rows' outcomes are kept
    ledger.close()


def test_an_old_ledger_carries_over_only_the_rows_this_recipe_holds_once(
        tmp_path: Path, stub: StubModelServer) -> None:
    # 24 rows of each: enough for the anytime-valid bound a second look is decided with.
    root = _recipe(tmp_path / "r", _rows(24, 24))
    cache = tmp_path / "cache"
    ledger_path = write_old_ledger(cache, "helpful", FP_B, [
        *((f"test_pass_{i}", "test", "pass") for i in range(3)),  # this recipe's rows
        ("test_pass_3", "dev", "pass"),  # evaluated in dev: never a look at test
        *((f"elsewhere_{i}", "test", "fail") for i in range(50))])  # another recipe's
    write_old_ledger(cache, "other", FP_B, [("test_pass_4", "test", "pass")])
    result = certify(root, cache, "--format", "json")
    assert result.returncode == 0, result.stderr
    migrated, current = read_looks(root / "judges" / "helpful.exposure.jsonl")
    assert migrated.migrated_from == str(ledger_path)
    assert (migrated.fingerprint, migrated.samples) == (FP_B, None)
    assert [row.conversation_id for row in migrated.rows] == [
        "test_pass_0", "test_pass_1", "test_pass_2"]
    assert current.migrated_from is None
    assert json.loads(result.stdout)["exposure"]["procedures"] == 2  # an earlier rubric looked
    again = certify(root, cache, "--format", "json")  # the file exists: not migrated again
    assert len(read_looks(root / "judges" / "helpful.exposure.jsonl")) == 3
    assert json.loads(again.stdout)["exposure"]["looks"] == 3


def test_an_old_ledger_of_other_recipes_only_migrates_nothing(
        tmp_path: Path, stub: StubModelServer) -> None:
    root = _recipe(tmp_path / "r", _rows(16, 16))
    cache = tmp_path / "cache"
    write_old_ledger(cache, "helpful", FP_B, [(f"elsewhere_{i}", "test", "pass")
                                              for i in range(534)])
    assert certify(root, cache).returncode == 0
    (look,) = read_looks(root / "judges" / "helpful.exposure.jsonl")
    assert look.migrated_from is None and _seen(root) == _held(root)
    report = check(root, "--require-certified")
    assert report["returncode"] == 0, report["diagnostics"]


def test_a_row_moved_to_dev_before_the_migration_still_counts_as_seen(
        tmp_path: Path, stub: StubModelServer) -> None:
    # The old ledger saw test_pass_0 and _1 in test under the judge's current version; the
    # user then moved test_pass_0 to dev and ran eval on dev, which must not erase that
    # look. 29/29 pass rows left: certified at this second look even by the anytime-valid
    # bound, but with the row moved out after being seen.
    root = _recipe(tmp_path / "r", _rows(30, 30))
    cache = tmp_path / "cache"
    env = {"INTROSPECTION_CACHE_DIR": str(cache)}
    fingerprint = json.loads(run_cli(["judges", "status", str(root), "--format", "json"],
                                     env=env).stdout)["judges"][0]["fingerprint"]
    write_old_ledger(cache, "helpful", fingerprint, [("test_pass_0", "test", "pass"),
                                                     ("test_pass_1", "test", "pass")])
    calibration = root / "judges" / "helpful.calibration.jsonl"
    lines = calibration.read_text().splitlines(keepends=True)
    lines[0] = lines[0].replace('"split": "test"', '"split": "dev"')
    calibration.write_text("".join(lines))
    assert run_cli(["judges", "eval", str(root)], env=env).returncode == 0
    result = certify(root, cache, "--format", "json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["exposure"]["moved"] == ["test_pass_0"]
    report = check(root, "--require-certified")
    assert report["returncode"] == 1
    assert any("1 row(s) seen in test, then moved out" in d["message"]
               for d in report["diagnostics"])
