"""--review: which rows an eval report disagrees with, and which it can no longer speak for."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from introspection_cli.errors import UsageError
from introspection_cli.evaluation.outcomes import EvalRun, JudgeRun, RowOutcome
from introspection_cli.labelling.app.review import build_review, load_report_rows
from introspection_cli.labelling.calibration import read_calibration
from introspection_cli.reporting.assemble import build_report
from introspection_cli.reporting.model import report_json
from tests.labelling.recipes import GATED_JUDGE, calibration, row, rows_of, write_recipe


def _outcome(line: int, record: dict[str, object], outcome: str, **extra: object) -> RowOutcome:
    return RowOutcome(line, str(record["source"]["conversation_id"]),  # type: ignore[index]
                      None, record["expected"], outcome,  # type: ignore[arg-type]
                      snapshot_hash=str(record["snapshot_hash"]), **extra)  # type: ignore[arg-type]


def test_disagreements_are_queued_and_everything_else_is_accounted_for(tmp_path: Path) -> None:
    recipe = write_recipe(tmp_path / "r", {"billing": (GATED_JUDGE, [
        row("a", expected="pass"), row("b", expected="fail"), row("c", expected="not_applicable"),
        row("d", expected="pass"), row("e", expected="fail"), row("f", expected="pass")])})
    records = rows_of(calibration(recipe))
    outcomes = [_outcome(1, records[0], "pass"), _outcome(2, records[1], "pass",
                                                          reasoning="looks fine"),
                _outcome(3, records[2], "gated"), _outcome(4, records[3], "error"),
                RowOutcome(5, "e", None, "fail", "pass", snapshot_hash="sha256:" + "1" * 64),
                RowOutcome(6, "f", None, "pass", "fail"),  # a report without hashes
                RowOutcome(7, "gone", None, "pass", "fail", snapshot_hash="sha256:" + "2" * 64)]
    report = build_report(EvalRun("r", (JudgeRun("billing", "openai", "m", tuple(outcomes)),)))
    path = tmp_path / "report.json"
    path.write_text(report_json(report))
    review = build_review(load_report_rows(path, "billing"), read_calibration(calibration(recipe)))
    assert review.lines == [2]
    assert review.rows[2].outcome == "pass" and review.rows[2].reasoning == "looks fine"
    notes = " | ".join(review.notes)
    assert "1 row(s) skipped: the conversation changed" in notes and "line 5" in notes
    assert "1 report row(s) skipped: the report does not record" in notes
    assert "1 report row(s) skipped: their conversation is no longer" in notes
    assert "1 report row(s) with an error outcome left out" in notes


def test_a_file_that_is_not_a_report_is_a_usage_error(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    for content, says in (("{", "cannot be read"), ('{"judges": 3}', "not an eval report"),
                          (json.dumps({"judges": [{"name": "other", "rows": []}]}),
                           "no results for judge billing")):
        path.write_text(content)
        with pytest.raises(UsageError, match=says):
            load_report_rows(path, "billing")
