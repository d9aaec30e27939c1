"""The evaluation ledger: exposure of test rows, recorded outcomes, and that it never blocks."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from introspection_cli.evaluation.ledger import (
    LEDGER_FILE,
    EvaluatedRow,
    open_ledger,
    record_run,
)
from introspection_cli.evaluation.outcomes import EvalRun, JudgeRun, RowOutcome
from tests.conftest import run_cli
from tests.evaluation.conftest import GATED_JUDGE, fixture_row, write_recipe
from tests.evaluation.stub_model_server import StubModelServer

FP_A, FP_B = "sha256:" + "a" * 64, "sha256:" + "b" * 64


def _run(fingerprint: str, rows: tuple[RowOutcome, ...]) -> EvalRun:
    return EvalRun("r", (JudgeRun("billing", "openai", "m", rows, fingerprint=fingerprint),))


TEST_ROWS = (RowOutcome(1, "c1", "test", "pass", "pass"),
             RowOutcome(2, "c2", "test", "fail", "error", error="boom"))


def test_rows_are_recorded_per_fingerprint_and_errors_are_not(tmp_path: Path) -> None:
    ledger = open_ledger(tmp_path)
    assert record_run(ledger, _run(FP_A, TEST_ROWS)) == []
    assert ledger.outcomes("billing", FP_A) == {"c1": "pass"}
    assert ledger.fingerprints_seen("billing", {"c1", "c2"}) == {FP_A}
    assert ledger.fingerprints_seen("billing", {"c2"}) == set()
    assert ledger.fingerprints_seen("other-judge", {"c1"}) == set()
    ledger.close()


def test_a_second_fingerprint_on_the_test_rows_warns_that_they_are_optimistic(
        tmp_path: Path) -> None:
    ledger = open_ledger(tmp_path)
    record_run(ledger, _run(FP_A, TEST_ROWS))
    assert record_run(ledger, _run(FP_A, TEST_ROWS)) == []  # the same version again: fine
    (warning,) = record_run(ledger, _run(FP_B, TEST_ROWS))
    assert warning.startswith("judge billing: its test rows have now been evaluated under 2 "
                              "different judge versions")
    assert "optimistic" in warning and "fresh test rows" in warning
    ledger.close()


def test_the_latest_outcome_wins_and_an_unchanged_row_is_not_written_again(
        tmp_path: Path) -> None:
    def recorded() -> list[tuple[str, str, str]]:
        with sqlite3.connect(tmp_path / LEDGER_FILE) as db:
            return db.execute("SELECT split, outcome, evaluated_at FROM evaluations").fetchall()

    ledger = open_ledger(tmp_path)
    record_run(ledger, _run(FP_A, TEST_ROWS))
    with sqlite3.connect(tmp_path / LEDGER_FILE) as db:
        db.execute("UPDATE evaluations SET evaluated_at = '2000-01-01T00:00:00Z'")
    record_run(ledger, _run(FP_A, TEST_ROWS))  # a re-run, same outcome: left as it is
    assert recorded() == [("test", "pass", "2000-01-01T00:00:00Z")]
    record_run(ledger, _run(FP_A, (RowOutcome(1, "c1", "dev", "pass", "fail"),)))
    assert ledger.outcomes("billing", FP_A) == {"c1": "fail"}
    ((split, outcome, evaluated_at),) = recorded()
    assert (split, outcome) == ("dev", "fail") and evaluated_at != "2000-01-01T00:00:00Z"
    ledger.close()


def test_a_row_recorded_twice_in_one_call_keeps_its_last_outcome(tmp_path: Path) -> None:
    ledger = open_ledger(tmp_path)
    ledger.record("billing", FP_A, [EvaluatedRow("c1", "dev", "pass")])
    ledger.record("billing", FP_A, [EvaluatedRow("c1", "dev", "fail"),
                                    EvaluatedRow("c1", "dev", "pass")])
    assert ledger.outcomes("billing", FP_A) == {"c1": "pass"}
    ledger.record("billing", FP_A, [EvaluatedRow("c1", "dev", "pass"),
                                    EvaluatedRow("c1", "test", "fail")])
    assert ledger.outcomes("billing", FP_A) == {"c1": "fail"}
    assert ledger.fingerprints_seen("billing", {"c1"}) == {FP_A}
    ledger.close()


def test_a_row_tuned_against_in_dev_and_moved_to_test_counts_as_exposed(tmp_path: Path) -> None:
    ledger = open_ledger(tmp_path)
    record_run(ledger, _run(FP_A, (RowOutcome(1, "c1", "dev", "pass", "pass"),)))
    (warning,) = record_run(ledger, _run(FP_B, (RowOutcome(1, "c1", "test", "pass", "pass"),)))
    assert "under 2 different judge versions" in warning
    ledger.close()


def test_a_corrupt_ledger_is_moved_aside_with_a_warning_and_a_fresh_one_started(
        tmp_path: Path) -> None:
    (tmp_path / LEDGER_FILE).write_bytes(b"this is not a database" * 100)
    ledger = open_ledger(tmp_path)
    warnings = record_run(ledger, _run(FP_A, TEST_ROWS))
    assert len(warnings) == 1 and "was corrupt: moved aside" in warnings[0]
    assert ledger.outcomes("billing", FP_A) == {"c1": "pass"}
    ledger.close()
    assert [p.name for p in tmp_path.iterdir() if ".corrupt-" in p.name]


def test_a_corrupt_ledger_read_only_is_a_warning_and_no_data(tmp_path: Path) -> None:
    (tmp_path / LEDGER_FILE).write_bytes(b"garbage" * 500)
    ledger = open_ledger(tmp_path)
    assert ledger.fingerprints_seen("billing", {"c1"}) == set()
    assert any("corrupt" in warning for warning in ledger.warnings)


def test_a_ledger_directory_that_cannot_be_made_warns_and_never_raises(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("not a directory")
    ledger = open_ledger(tmp_path / "file" / "cache")
    (warning,) = record_run(ledger, _run(FP_A, TEST_ROWS))
    assert "could not record" in warning
    assert ledger.fingerprints_seen("billing", {"c1"}) == set()


def test_a_ledger_path_that_is_a_directory_warns_and_never_raises(tmp_path: Path) -> None:
    (tmp_path / LEDGER_FILE).mkdir()
    ledger = open_ledger(tmp_path)
    warnings = record_run(ledger, _run(FP_A, TEST_ROWS))
    assert len(warnings) == 1 and "evaluation ledger" in warnings[0]
    assert ledger.fingerprints_seen("billing", {"c1"}) == set()


def test_a_ledger_locked_by_another_writer_warns_within_seconds(tmp_path: Path) -> None:
    first = open_ledger(tmp_path)
    first.record("billing", FP_A, [EvaluatedRow("c0", "dev", "pass")])
    first.close()
    holder = sqlite3.connect(tmp_path / LEDGER_FILE, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        ledger = open_ledger(tmp_path)
        warnings = record_run(ledger, _run(FP_A, TEST_ROWS))
        assert warnings and "locked" in warnings[0]
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_eval_records_the_run_and_warns_on_the_second_rubric(tmp_path: Path,
                                                               stub: StubModelServer) -> None:
    rows = [fixture_row("conv_t", "refund VERDICT:pass", expected="pass", split="test"),
            fixture_row("conv_d", "refund VERDICT:pass", expected="pass", split="dev")]
    root = write_recipe(tmp_path / "r", {"billing": (GATED_JUDGE, rows)})
    env = {"INTROSPECTION_CACHE_DIR": str(tmp_path / "cache")}
    first = run_cli(["judges", "eval", str(root), "--split", "test"], env=env)
    assert first.returncode == 0, first.stderr
    assert "optimistic" not in first.stderr
    default = run_cli(["judges", "eval", str(root)], env=env)  # test held out: not exposed
    assert default.returncode == 0 and "optimistic" not in default.stderr
    judge_file = root / "judges" / "billing.yaml"
    judge_file.write_text(judge_file.read_text().replace("billing request", "refund request"))
    second = run_cli(["judges", "eval", str(root), "--split", "test", "--format", "json"],
                     env=env)
    assert second.returncode == 0, second.stderr  # a warning, not a failure
    assert ("warning: judge billing: its test rows have now been evaluated under 2 "
            "different judge versions") in second.stderr
    assert json.loads(second.stdout)["judges"][0]["splits"]["test"]["n"] == 1


def test_eval_with_a_corrupt_ledger_still_succeeds(tmp_path: Path, stub: StubModelServer) -> None:
    rows = [fixture_row("conv_d", "refund VERDICT:pass", expected="pass", split="dev")]
    root = write_recipe(tmp_path / "r", {"billing": (GATED_JUDGE, rows)})
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / LEDGER_FILE).write_bytes(b"\x00garbage" * 1000)
    result = run_cli(["judges", "eval", str(root)], env={"INTROSPECTION_CACHE_DIR": str(cache)})
    assert result.returncode == 0, result.stderr
    assert "warning: the evaluation ledger" in result.stderr and "moved aside" in result.stderr


def test_fingerprints_seen_counts_only_the_versions_that_saw_a_wanted_row(
        tmp_path: Path) -> None:
    ledger = open_ledger(tmp_path)
    ledger.record("billing", FP_A, [EvaluatedRow(f"c{i}", "dev", "pass") for i in range(50)])
    ledger.record("billing", FP_B, [EvaluatedRow("c49", "test", "fail")])
    ledger.record("other-judge", FP_B, [EvaluatedRow("c1", "test", "fail")])
    assert ledger.fingerprints_seen("billing", {"c49"}) == {FP_A, FP_B}
    assert ledger.fingerprints_seen("billing", ["c1", "c1"]) == {FP_A}
    assert ledger.fingerprints_seen("billing", {"c50"}) == set()
    ledger.close()
