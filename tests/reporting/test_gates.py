"""Gates: lower bounds for agreement/TPR/TNR, kappa's value, the error ceiling, a judged row."""

from __future__ import annotations

import math
from typing import Any

import pytest

from introspection_cli.errors import UsageError
from introspection_cli.evaluation.outcomes import EvalRun, JudgeRun, RowOutcome
from introspection_cli.reporting.assemble import build_report
from introspection_cli.reporting.gates import GateSettings, evaluate_gates, gate_failures
from introspection_cli.statistics import wilson_lower


def _report(rows: tuple[RowOutcome, ...], held_out: int | None = None) -> dict[str, Any]:
    return build_report(EvalRun("r", (JudgeRun("tone", "openai", "m", rows,
                                               held_out=held_out),)))


def _rows(expected: str, outcome: str, count: int, start: int = 1,
          split: str = "dev") -> tuple[RowOutcome, ...]:
    return tuple(RowOutcome(i, f"c{i}", split, expected, outcome,  # type: ignore[arg-type]
                            error="boom" if outcome == "error" else None)
                 for i in range(start, start + count))


def _gates(report: dict[str, Any], **bars: Any) -> dict[str, Any]:
    return {gate.statistic: gate for gate in evaluate_gates(report, GateSettings(**bars))}


def test_eight_of_eight_does_not_pass_an_agreement_bar_of_085() -> None:
    report = _report(_rows("pass", "pass", 8))
    gate = _gates(report, min_agreement=0.85)["agreement"]
    # 8/8 = 1.000 but its Wilson 95% interval is 0.676–1.000: the lower bound is compared.
    assert gate.value == pytest.approx(8 / (8 + 1.959964 ** 2), abs=1e-6)
    assert not gate.met
    (message,) = gate_failures(report, [gate])
    assert message == ("judge tone: agreement on split scored is 1.000 with 95% interval "
                       "0.676–1.000; its lower bound 0.676 is below --min-agreement 0.85")


def test_sixteen_of_sixteen_clears_080_and_fifteen_does_not() -> None:
    assert _gates(_report(_rows("pass", "pass", 16)), min_tpr=0.8)["tpr"].met
    assert not _gates(_report(_rows("pass", "pass", 15)), min_tpr=0.8)["tpr"].met


def test_tpr_and_tnr_gates_compare_their_own_lower_bounds() -> None:
    rows = (*_rows("pass", "pass", 18), *_rows("pass", "fail", 2, start=19),
            *_rows("fail", "fail", 5, start=21))
    gates = _gates(_report(rows), min_tpr=0.6, min_tnr=0.6)
    assert gates["tpr"].value == pytest.approx(wilson_lower(18, 20))  # 0.699
    assert gates["tpr"].met
    assert gates["tnr"].value == pytest.approx(wilson_lower(5, 5))  # 0.566
    assert not gates["tnr"].met


def test_bars_are_inclusive() -> None:
    rows = _rows("pass", "pass", 10)
    assert _gates(_report(rows), min_tpr=wilson_lower(10, 10))["tpr"].met


def test_kappa_compares_its_value() -> None:
    rows = (*_rows("pass", "pass", 4), *_rows("fail", "pass", 1, start=5),
            *_rows("fail", "fail", 4, start=6))
    # p_o = 8/9, p_e = (4·5 + 5·4)/81 = 40/81: kappa = (8/9 − 40/81)/(1 − 40/81) = 0.7805.
    gate = _gates(_report(rows), min_kappa=0.5)["kappa"]
    assert gate.bound == "value" and gate.met and gate.value == pytest.approx(0.7805, abs=1e-4)


def test_a_null_statistic_misses_and_says_why() -> None:
    report = _report(_rows("pass", "pass", 20))  # no fail rows: TNR null
    gate = _gates(report, min_tnr=0.1)["tnr"]
    assert gate.value is None and not gate.met
    assert gate_failures(report, [gate]) == [
        "judge tone: tnr on split scored is null (no non-error row is labelled fail), which "
        "does not meet --min-tnr 0.1"]


def test_a_held_out_threshold_split_misses() -> None:
    report = _report(_rows("pass", "pass", 20), held_out=12)
    gate = evaluate_gates(report, GateSettings(min_agreement=0.5, split="test"))[0]
    assert not gate.met
    assert "held out" in gate_failures(report, [gate])[0]


def test_the_error_ceiling_is_on_by_default_and_inclusive() -> None:
    ten_percent = (*_rows("pass", "pass", 9), *_rows("pass", "error", 1, start=10))
    assert _gates(_report(ten_percent))["error_rate"].met
    twenty = (*_rows("pass", "pass", 8), *_rows("pass", "error", 2, start=9))
    report = _report(twenty)
    gate = _gates(report)["error_rate"]
    assert gate.value == pytest.approx(0.2) and not gate.met
    assert gate_failures(report, [gate]) == [
        "judge tone: 2 of 10 rows are errors (0.200), above --max-error-rate 0.1"]
    assert _gates(report, max_error_rate=0.25)["error_rate"].met


def test_an_all_error_run_is_never_a_success() -> None:
    report = _report(_rows("pass", "error", 3))
    gates = _gates(report, max_error_rate=1.0)
    assert gates["error_rate"].met  # the ceiling allows it...
    assert not gates["judged"].met  # ...but nothing was measured
    assert gate_failures(report, [gates["judged"]]) == [
        "judge tone: no row was judged (3 evaluated: 3 error(s), 0 gated); a run that "
        "measured nothing is not a success"]


def test_no_rows_at_all_fails_both_always_on_gates() -> None:
    gates = _gates(_report(()))
    assert not gates["judged"].met and not gates["error_rate"].met


def test_gates_json_has_the_documented_fields() -> None:
    report = _report(_rows("pass", "pass", 16))
    (tpr, error_rate, judged) = evaluate_gates(report, GateSettings(min_tpr=0.8))
    assert tpr.as_json() == {"judge": "tone", "split": "scored", "statistic": "tpr",
                             "bound": "low", "bar": 0.8, "value": pytest.approx(0.8064, abs=1e-4),
                             "met": True}
    assert error_rate.as_json()["statistic"] == "error_rate"
    assert judged.as_json() == {"judge": "tone", "split": "scored", "statistic": "judged",
                                "bound": "value", "bar": 1, "value": 16, "met": True}


@pytest.mark.parametrize("settings", [GateSettings(min_tpr=math.nan),
                                      GateSettings(max_error_rate=math.inf),
                                      GateSettings(min_kappa=-2.0),
                                      GateSettings(split="validation")])
def test_settings_that_cannot_work_are_usage_errors(settings: GateSettings) -> None:
    with pytest.raises(UsageError):
        settings.check()


def test_the_split_of_every_evaluated_row_is_scored_and_all_is_taken_as_it() -> None:
    """``--threshold-split`` keeps working with the old name of the split."""
    report = _report(_rows("pass", "pass", 16))
    assert GateSettings().split == GateSettings(split="all").split == "scored"
    GateSettings(split="all").check()
    (tpr, *_) = evaluate_gates(report, GateSettings(min_tpr=0.8, split="all"))
    assert tpr.split == "scored" and tpr.met


def test_gate_hits_do_not_clear_min_agreement() -> None:
    """The audit's case: 200 gated rows labelled not_applicable and two judged rows, one of
    them wrong. Agreement counted the gate hits (0.995, the bar met); applicable agreement
    is 1 of 2 (Wilson 0.095–0.905), so --min-agreement 0.95 is missed."""
    rows = (*_rows("not_applicable", "gated", 200), *_rows("pass", "pass", 1, start=201),
            *_rows("fail", "pass", 1, start=202))
    report = _report(rows)
    gate = _gates(report, min_agreement=0.95)["agreement"]
    assert gate.value == pytest.approx(wilson_lower(1, 2))
    assert not gate.met
    assert report["judges"][0]["splits"]["scored"]["na_agreement"]["value"] == 1.0
