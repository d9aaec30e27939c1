"""The certification decision over one split's outcomes."""

from __future__ import annotations

import pytest

from introspection_cli.certification.decision import decide, insufficient, rows_needed
from introspection_cli.evaluation.outcomes import RowOutcome
from introspection_cli.statistics import wilson_lower


def _rows(expected: str, outcome: str, count: int, start: int = 0) -> list[RowOutcome]:
    return [RowOutcome(i, f"c{i}", "test", expected, outcome)  # type: ignore[arg-type]
            for i in range(start, start + count)]


def test_sixteen_of_each_agreeing_is_certified_at_080() -> None:
    rows = _rows("pass", "pass", 16) + _rows("fail", "fail", 16, start=100)
    decision = decide(rows, bar=0.8, max_error_rate=0.05)
    assert decision.decision == "certified" and decision.reasons == ()
    assert decision.tpr is not None and decision.tpr.n == 16
    assert decision.tpr.interval.low == pytest.approx(wilson_lower(16, 16))
    assert decision.needed_perfect == {"pass": 0, "fail": 0}


def test_fifteen_pass_rows_is_insufficient_data_whatever_the_judge_says() -> None:
    rows = _rows("pass", "pass", 15) + _rows("fail", "fail", 20, start=100)
    decision = decide(rows, bar=0.8, max_error_rate=0.05)
    assert decision.decision == "insufficient_data"
    assert decision.needed_perfect == {"pass": 1, "fail": 0}
    (reason,) = decision.reasons
    assert reason == ("the split holds 15 pass and 20 fail rows; even a judge that agrees on "
                      "all of them needs 16 of each to reach the bar 0.8: the split is short of 1 pass rows")


def test_insufficient_is_known_from_the_labels_alone() -> None:
    assert insufficient({"pass": 16, "fail": 16}, 0.8) is None
    early = insufficient({"pass": 3, "fail": 0}, 0.9)
    assert early is not None and early.needed_perfect == rows_needed({"pass": 3, "fail": 0}, 0.9)
    assert early.needed_perfect == {"pass": 32, "fail": 35}  # 35 of 35 is the first to reach 0.90


def test_a_missed_bound_is_named() -> None:
    rows = (_rows("pass", "pass", 18) + _rows("pass", "fail", 2, start=50)
            + _rows("fail", "fail", 16, start=100))
    decision = decide(rows, bar=0.8, max_error_rate=0.05)
    assert decision.decision == "not_certified"
    (reason,) = decision.reasons
    assert reason.startswith("tpr is 0.900 over 20 rows with 95% interval 0.699–0.972; its "
                             "lower bound is below the bar 0.8")


def test_too_many_errors_is_not_certified_and_errors_are_not_scored() -> None:
    rows = (_rows("pass", "pass", 16) + _rows("pass", "error", 2, start=50)
            + _rows("fail", "fail", 16, start=100))
    decision = decide(rows, bar=0.8, max_error_rate=0.05)
    assert decision.tpr is not None and decision.tpr.n == 16  # the 2 errors left out
    assert decision.errors == 2
    assert decision.reasons == ("2 of 34 rows are errors (0.059), above --max-error-rate 0.05",)
    assert decide(rows, bar=0.8, max_error_rate=0.06).certified


def test_na_recall_counts_gated_and_is_a_condition_only_with_bar_na() -> None:
    rows = (_rows("pass", "pass", 16) + _rows("fail", "fail", 16, start=100)
            + _rows("not_applicable", "gated", 3, start=200)
            + _rows("not_applicable", "pass", 1, start=300))
    decision = decide(rows, bar=0.8, max_error_rate=0.05)
    assert decision.certified
    assert decision.na_recall is not None and decision.na_recall.interval.value == 0.75
    strict = decide(rows, bar=0.8, max_error_rate=0.05, bar_na=0.5)
    assert strict.decision == "not_certified"
    assert "na_recall" in strict.reasons[0] and "--bar-na 0.5" in strict.reasons[0]


def test_insufficient_data_is_decided_on_scorable_rows() -> None:
    # Issue 20 item 9: P->P 15, P->error 1, F->F 16 was "not certified ... below the bar" with
    # needed 0. Only 15 pass rows can be scored: even a perfect judge needs 16.
    rows = (_rows("pass", "pass", 15) + _rows("pass", "error", 1, start=50)
            + _rows("fail", "fail", 16, start=100))
    decision = decide(rows, bar=0.8, max_error_rate=0.05)
    assert decision.decision == "insufficient_data"
    assert decision.needed_perfect == {"pass": 1, "fail": 0}
    assert decision.scorable == {"pass": 15, "fail": 16, "not_applicable": 0}
    assert decision.errors == 1
    (reason,) = decision.reasons
    assert reason.startswith("the split holds 15 scorable pass and 16 scorable fail rows (1 "
                             "error row left out)")


def test_insufficient_data_after_a_run_still_states_what_it_measured() -> None:
    # The run measured 15 of 15 pass rows and 16 of 16 fail rows: an insufficient-data
    # decision once said TPR and TNR were null ("no non-error row") and the error ceiling
    # 0, and planned at an assumed 0.90 instead of the rates the run measured.
    rows = (_rows("pass", "pass", 15) + _rows("pass", "error", 1, start=50)
            + _rows("fail", "fail", 16, start=100))
    decision = decide(rows, bar=0.8, max_error_rate=0.05, bar_na=0.5)
    assert decision.decision == "insufficient_data"
    assert decision.tpr is not None and (decision.tpr.successes, decision.tpr.n) == (15, 15)
    assert decision.tnr is not None and (decision.tnr.successes, decision.tnr.n) == (16, 16)
    assert decision.na_recall is None  # no row labelled not_applicable
    assert (decision.max_error_rate, decision.bar_na) == (0.05, 0.5)


def test_bar_na_without_not_applicable_rows_says_there_are_none() -> None:
    # It said "every row it needs is an error" with no row labelled not_applicable at all.
    rows = _rows("pass", "pass", 16) + _rows("fail", "fail", 16, start=100)
    decision = decide(rows, bar=0.8, max_error_rate=0.05, bar_na=0.5)
    assert decision.decision == "not_certified"
    (reason,) = decision.reasons
    assert "no row of the split is labelled not_applicable" in reason
    assert "error" not in reason
    errors = rows + _rows("not_applicable", "error", 2, start=200)
    (reason,) = decide(errors, bar=0.8, max_error_rate=0.1, bar_na=0.5).reasons
    assert "every row labelled not_applicable is an error" in reason
