"""The evaluation ledger: recorded outcomes outside test (dev figures), an old version's test
rows (the exposure file's migration), and that it never blocks."""

from __future__ import annotations

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
from tests.evaluation.old_ledger import write_old_ledger
from tests.evaluation.stub_model_server import StubModelServer

FP_A, FP_B = "sha256:" + "a" * 64, "sha256:" + "b" * 64


def _run(fingerprint: str, rows: tuple[RowOutcome, ...]) -> EvalRun:
    return EvalRun("r", (JudgeRun("billing", "openai", "m", rows, fingerprint=fingerprint),))


ROWS = (RowOutcome(1, "c1", "dev", "pass", "pass"),
        RowOutcome(2, "c2", "dev", "fail", "error", error="boom"))


def test_rows_are_recorded_per_fingerprint_and_errors_are_not(tmp_path: Path) -> None:
    ledger = open_ledger(tmp_path)
    assert record_run(ledger, _run(FP_A, ROWS)) == []
    assert ledger.outcomes("billing", FP_A) == {"c1": "pass"}  # the error row is none
    assert ledger.outcomes("billing", FP_B) == {}
    assert ledger.outcomes("other-judge", FP_A) == {}
    ledger.close()


def test_no_test_row_is_recorded(tmp_path: Path) -> None:
    # The exposure file in the recipe records the looks at test; the ledger keeps dev figures.
    ledger = open_ledger(tmp_path)
    record_run(ledger, _run(FP_A, (RowOutcome(1, "c1", "test", "pass", "pass"),
                                   RowOutcome(3, "c3", "train", "pass", "fail"))))
    assert ledger.outcomes("billing", FP_A) == {"c3": "fail"}
    assert ledger.test_evaluations("billing") == {}
    ledger.close()


def test_test_evaluations_are_an_old_versions_test_rows_per_fingerprint(
        tmp_path: Path) -> None:
    write_old_ledger(tmp_path, "billing", FP_A, [("c1", "test", "pass"), ("c3", "dev", "pass")])
    write_old_ledger(tmp_path, "billing", FP_B, [("c1", "test", "fail")])
    write_old_ledger(tmp_path, "other-judge", FP_B, [("c2", "test", "fail")])
    ledger = open_ledger(tmp_path)
    found = {fp: [(cid, outcome) for cid, outcome, _ in rows]
             for fp, rows in ledger.test_evaluations("billing").items()}
    assert found == {FP_A: [("c1", "pass")], FP_B: [("c1", "fail")]}
    ledger.close()


def test_an_old_versions_test_row_is_never_overwritten(tmp_path: Path) -> None:
    # Moved to dev and evaluated there before the judge's exposure file existed: the look
    # at test the old version recorded still waits for the migration.
    write_old_ledger(tmp_path, "billing", FP_A, [("c1", "test", "pass")])
    ledger = open_ledger(tmp_path)
    record_run(ledger, _run(FP_A, (RowOutcome(1, "c1", "dev", "pass", "fail"),)))
    ((cid, outcome, _),) = ledger.test_evaluations("billing")[FP_A]
    assert (cid, outcome) == ("c1", "pass")
    ledger.close()


def test_the_latest_outcome_wins_and_an_unchanged_row_is_not_written_again(
        tmp_path: Path) -> None:
    def recorded() -> list[tuple[str, str, str]]:
        with sqlite3.connect(tmp_path / LEDGER_FILE) as db:
            return db.execute("SELECT split, outcome, evaluated_at FROM evaluations").fetchall()

    ledger = open_ledger(tmp_path)
    record_run(ledger, _run(FP_A, ROWS))
    with sqlite3.connect(tmp_path / LEDGER_FILE) as db:
        db.execute("UPDATE evaluations SET evaluated_at = '2000-01-01T00:00:00Z'")
    record_run(ledger, _run(FP_A, ROWS))  # a re-run, same outcome: left as it is
    assert recorded() == [("dev", "pass", "2000-01-01T00:00:00Z")]
    record_run(ledger, _run(FP_A, (RowOutcome(1, "c1", "train", "pass", "fail"),)))
    assert ledger.outcomes("billing", FP_A) == {"c1": "fail"}
    ((split, outcome, evaluated_at),) = recorded()
    assert (split, outcome) == ("train", "fail") and evaluated_at != "2000-01-01T00:00:00Z"
    ledger.close()


def test_a_row_recorded_twice_in_one_call_keeps_its_last_outcome(tmp_path: Path) -> None:
    ledger = open_ledger(tmp_path)
    ledger.record("billing", FP_A, [EvaluatedRow("c1", "dev", "pass")])
    ledger.record("billing", FP_A, [EvaluatedRow("c1", "dev", "fail"),
                                    EvaluatedRow("c1", "dev", "pass")])
    assert ledger.outcomes("billing", FP_A) == {"c1": "pass"}
    ledger.record("billing", FP_A, [EvaluatedRow("c1", "dev", "fail"),
                                    EvaluatedRow("c1", "test", "pass")])
    assert ledger.outcomes("billing", FP_A) == {"c1": "fail"}  # the test row is not kept
    ledger.close()


def test_a_corrupt_ledger_is_moved_aside_with_a_warning_and_a_fresh_one_started(
        tmp_path: Path) -> None:
    (tmp_path / LEDGER_FILE).write_bytes(b"this is not a database" * 100)
    ledger = open_ledger(tmp_path)
    warnings = record_run(ledger, _run(FP_A, ROWS))
    assert len(warnings) == 1 and "was corrupt: moved aside" in warnings[0]
    assert ledger.outcomes("billing", FP_A) == {"c1": "pass"}
    ledger.close()
    assert [p.name for p in tmp_path.iterdir() if ".corrupt-" in p.name]


def test_a_corrupt_ledger_read_only_is_a_warning_and_no_data(tmp_path: Path) -> None:
    (tmp_path / LEDGER_FILE).write_bytes(b"garbage" * 500)
    ledger = open_ledger(tmp_path)
    assert ledger.test_evaluations("billing") == {}
    assert any("corrupt" in warning for warning in ledger.warnings)


def test_a_ledger_directory_that_cannot_be_made_warns_and_never_raises(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("not a directory")
    ledger = open_ledger(tmp_path / "file" / "cache")
    (warning,) = record_run(ledger, _run(FP_A, ROWS))
    assert "could not record" in warning
    assert ledger.test_evaluations("billing") == {}


def test_a_ledger_path_that_is_a_directory_warns_and_never_raises(tmp_path: Path) -> None:
    (tmp_path / LEDGER_FILE).mkdir()
    ledger = open_ledger(tmp_path)
    warnings = record_run(ledger, _run(FP_A, ROWS))
    assert len(warnings) == 1 and "evaluation ledger" in warnings[0]
    assert ledger.test_evaluations("billing") == {}


def test_a_ledger_locked_by_another_writer_warns_within_seconds(tmp_path: Path) -> None:
    first = open_ledger(tmp_path)
    first.record("billing", FP_A, [EvaluatedRow("c0", "dev", "pass")])
    first.close()
    holder = sqlite3.connect(tmp_path / LEDGER_FILE, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        ledger = open_ledger(tmp_path)
        warnings = record_run(ledger, _run(FP_A, ROWS))
        assert warnings and "locked" in warnings[0]
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_eval_with_a_corrupt_ledger_still_succeeds(tmp_path: Path, stub: StubModelServer) -> None:
    rows = [fixture_row("conv_d", "refund VERDICT:pass", expected="pass", split="dev")]
    root = write_recipe(tmp_path / "r", {"billing": (GATED_JUDGE, rows)})
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / LEDGER_FILE).write_bytes(b"\x00garbage" * 1000)
    result = run_cli(["judges", "eval", str(root)], env={"INTROSPECTION_CACHE_DIR": str(cache)})
    assert result.returncode == 0, result.stderr
    assert "warning: the evaluation ledger" in result.stderr and "moved aside" in result.stderr
