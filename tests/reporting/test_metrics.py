"""The agreement statistics: hand-computed cases, scikit-learn/scipy as oracles, properties."""

from __future__ import annotations

import math
import warnings

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score, confusion_matrix

from introspection_cli.evaluation.outcomes import OUTCOMES, VERDICTS, RowOutcome
from introspection_cli.reporting.metrics import (
    REPORT_SPLITS,
    agrees,
    cohen_kappa,
    split_stats,
    stats_by_split,
)
from introspection_cli.statistics import Interval, wilson_interval

Z = 1.959963984540054


def row(expected: str, outcome: str, *, split: str | None = "dev", line: int = 1,
        unstable: bool = False) -> RowOutcome:
    return RowOutcome(line=line, conversation_id=f"conv_{line}", split=split,
                      expected=expected, outcome=outcome, unstable=unstable)  # type: ignore[arg-type]


verdicts = st.sampled_from(VERDICTS)
scored_outcomes = st.sampled_from(tuple(o for o in OUTCOMES if o != "error"))
rows_strategy = st.lists(
    st.builds(row, verdicts, st.sampled_from(OUTCOMES),
              split=st.sampled_from(("train", "dev", "test", None)),
              unstable=st.booleans()),
    max_size=60,
)


# --- Wilson -----------------------------------------------------------------------------

@pytest.mark.parametrize(("successes", "n", "low", "high"), [
    # 8/10: p = 0.8, z²/n = 0.38415; centre = (0.8 + 0.19207) / 1.38415 = 0.71679;
    # half = 1.95996/1.38415 · sqrt(0.016 + 0.0096036) = 1.41600 · 0.16001 = 0.22658.
    (8, 10, 0.4902, 0.9433),
    # 0/10: centre = 0.19207/1.38415 = 0.13877 and half = 1.41600 · 0.098 = 0.13877.
    (0, 10, 0.0, 0.2775),
    # 10/10 mirrors 0/10.
    (10, 10, 0.7225, 1.0),
    # 1/1: low = 1 / (1 + z²) = 1 / 4.84146 = 0.2065.
    (1, 1, 0.2065, 1.0),
    # 6/12: centre 0.5; half = (1.95996/1.32013) · sqrt(0.25/12 + 3.84146/576) = 1.48468 · 0.16503.
    (6, 12, 0.2538, 0.7462),
])
def test_wilson_matches_hand_computed_bounds(successes: int, n: int, low: float,
                                             high: float) -> None:
    interval = wilson_interval(successes, n)
    assert interval is not None
    assert interval.value == successes / n
    assert interval.low == pytest.approx(low, abs=5e-5)
    assert interval.high == pytest.approx(high, abs=5e-5)


def test_wilson_is_null_without_observations() -> None:
    assert wilson_interval(0, 0) is None


@pytest.mark.parametrize(("successes", "n"), [(-1, 3), (4, 3), (0, -1)])
def test_wilson_rejects_impossible_counts(successes: int, n: int) -> None:
    with pytest.raises(ValueError, match="successes"):
        wilson_interval(successes, n)


@given(st.integers(min_value=1, max_value=100_000).flatmap(
    lambda n: st.tuples(st.integers(min_value=0, max_value=n), st.just(n))))
def test_wilson_contains_the_estimate_and_stays_in_unit_interval(case: tuple[int, int]) -> None:
    successes, n = case
    interval = wilson_interval(successes, n)
    assert interval is not None
    assert 0.0 <= interval.low <= interval.value <= interval.high <= 1.0
    # Textbook closed form, computed independently of the implementation's algebra.
    p = successes / n
    centre = (successes + Z * Z / 2) / (n + Z * Z)
    half = Z * math.sqrt(n * p * (1 - p) + Z * Z / 4) / (n + Z * Z)
    assert interval.low == pytest.approx(max(0.0, centre - half), abs=1e-9)
    assert interval.high == pytest.approx(min(1.0, centre + half), abs=1e-9)


def test_interval_json_has_exactly_value_low_high() -> None:
    assert Interval(0.5, 0.25, 0.75).as_json() == {"value": 0.5, "low": 0.25, "high": 0.75}


# --- Cohen's kappa ----------------------------------------------------------------------

def test_kappa_two_class_hand_case() -> None:
    # expected 5 pass, 5 fail; outcomes: 4 of the passes pass, 3 of the fails fail.
    # p_o = 7/10; outcome totals pass 6, fail 4; p_e = (5·6 + 5·4)/100 = 0.5;
    # kappa = (0.7 - 0.5) / (1 - 0.5) = 0.4.
    pairs = ([("pass", "pass")] * 4 + [("pass", "fail")]
             + [("fail", "fail")] * 3 + [("fail", "pass")] * 2)
    assert cohen_kappa(pairs) == pytest.approx(0.4)


def test_kappa_counts_gated_as_not_applicable() -> None:
    # As verdicts: (pass,pass) (fail,fail) (na,na) (na,pass). Diagonal 3 of 4.
    # Expected totals pass 1, fail 1, na 2; outcome totals pass 2, fail 1, na 1.
    # Σ e·o = 2 + 1 + 2 = 5; kappa = (4·3 - 5) / (16 - 5) = 7/11.
    pairs = [("pass", "pass"), ("fail", "fail"), ("not_applicable", "gated"),
             ("not_applicable", "pass")]
    assert cohen_kappa(pairs) == pytest.approx(7 / 11)
    assert cohen_kappa(pairs) == cohen_kappa(
        [(e, "not_applicable" if o == "gated" else o) for e, o in pairs])


def test_kappa_is_minus_one_for_perfect_disagreement() -> None:
    # Diagonal 0; totals 1/1 each way crossed: Σ e·o = 1·1 + 1·1 = 2; (0 - 2)/(4 - 2) = -1.
    assert cohen_kappa([("pass", "fail"), ("fail", "pass")]) == pytest.approx(-1.0)


@pytest.mark.parametrize("pairs", [
    [],
    # p_e = 1: one class on both sides, kappa = 0/0.
    [("pass", "pass")] * 5,
    [("not_applicable", "gated"), ("not_applicable", "not_applicable")],
])
def test_kappa_is_null_when_undefined(pairs: list[tuple[str, str]]) -> None:
    assert cohen_kappa(pairs) is None


def test_kappa_refuses_error_rows() -> None:
    with pytest.raises(ValueError, match="error"):
        cohen_kappa([("pass", "error")])


@given(st.lists(st.tuples(verdicts, scored_outcomes), max_size=80))
def test_kappa_matches_scikit_learn(pairs: list[tuple[str, str]]) -> None:
    ours = cohen_kappa(pairs)
    if not pairs:
        assert ours is None
        return
    expected = [e for e, _ in pairs]
    outcome = ["not_applicable" if o == "gated" else o for _, o in pairs]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # sklearn warns on 0/0 and returns nan
        oracle = cohen_kappa_score(expected, outcome, labels=list(VERDICTS))
    if math.isnan(oracle):
        assert ours is None
    else:
        assert ours is not None
        assert ours == pytest.approx(oracle, abs=1e-12)
        assert -1.0 <= ours <= 1.0


# --- split statistics -------------------------------------------------------------------

def test_split_stats_hand_case() -> None:
    rows = [
        row("pass", "pass"), row("pass", "pass"), row("pass", "fail"),
        row("fail", "fail"), row("fail", "not_applicable"),
        row("not_applicable", "gated"), row("not_applicable", "pass", unstable=True),
        row("pass", "error", unstable=True), row("fail", "error"),
    ]
    stats = split_stats(rows)
    # 9 rows = 6 judged + 1 gated + 2 errors; the two unstable rows include a tie error.
    assert (stats.n, stats.judged, stats.gated, stats.errors, stats.unstable) == (9, 6, 1, 2, 2)
    # Applicable agreement: 5 non-error rows labelled pass or fail, agreeing pass/pass ×2
    # and fail/fail = 3. na_agreement: na/gated of the 2 rows labelled not_applicable.
    assert stats.agreement is not None
    assert stats.agreement.value == pytest.approx(3 / 5)
    assert stats.na_agreement is not None and stats.na_agreement.value == 0.5
    # TPR: non-error expected pass = 3, outcome pass 2. TNR: non-error expected fail = 2, 1.
    assert stats.tpr is not None and stats.tpr.value == pytest.approx(2 / 3)
    assert stats.tnr is not None and stats.tnr.value == pytest.approx(1 / 2)
    # kappa over the 6 judged rows (gated left out): expected totals pass 3, fail 2, na 1;
    # outcomes pass 3, fail 2, na 1; diagonal 3; Σ e·o = 9 + 4 + 1 = 14;
    # kappa = (6·3 - 14) / (36 - 14) = 2/11.
    assert stats.kappa == pytest.approx(2 / 11)
    assert stats.confusion["pass"] == {"pass": 2, "fail": 1, "not_applicable": 0,
                                       "gated": 0, "error": 1}
    assert stats.confusion["not_applicable"]["gated"] == 1


def test_empty_split_has_zero_counts_and_null_statistics() -> None:
    stats = split_stats([])
    assert (stats.n, stats.judged, stats.gated, stats.errors, stats.unstable) == (0, 0, 0, 0, 0)
    assert stats.agreement is None and stats.kappa is None
    assert stats.tpr is None and stats.tnr is None
    assert stats.confusion == {label: dict.fromkeys(OUTCOMES, 0) for label in VERDICTS}


def test_all_error_rows_give_null_statistics_not_zero() -> None:
    stats = split_stats([row("pass", "error"), row("fail", "error")])
    assert stats.n == stats.errors == 2
    assert stats.agreement is None and stats.kappa is None
    assert stats.tpr is None and stats.tnr is None


def test_rate_is_null_when_its_label_is_absent() -> None:
    stats = split_stats([row("pass", "pass"), row("pass", "fail")])
    assert stats.tpr is not None and stats.tpr.value == 0.5
    assert stats.tnr is None  # no expected-fail rows: null, never 0


def test_gated_agrees_only_with_not_applicable() -> None:
    assert agrees("not_applicable", "gated")
    assert not agrees("pass", "gated")
    assert not agrees("fail", "gated")
    stats = split_stats([row("not_applicable", "gated"), row("pass", "gated")])
    assert stats.agreement is not None and stats.agreement.value == 0.0
    assert stats.na_agreement is not None and stats.na_agreement.value == 1.0


@given(rows_strategy, st.lists(st.builds(row, verdicts, st.just("error")), max_size=10))
def test_error_rows_change_no_statistic(rows: list[RowOutcome],
                                       errors: list[RowOutcome]) -> None:
    clean, noisy = split_stats(rows), split_stats(rows + errors)
    assert noisy.n == clean.n + len(errors)
    assert noisy.errors == clean.errors + len(errors)
    for name in ("agreement", "na_agreement", "kappa", "tpr", "tnr"):
        assert getattr(noisy, name) == getattr(clean, name)


@given(rows_strategy)
def test_split_stats_agree_with_scikit_learn_confusion_and_recount(
        rows: list[RowOutcome]) -> None:
    stats = split_stats(rows)
    assert stats.n == stats.judged + stats.gated + stats.errors == len(rows)
    if rows:
        oracle = confusion_matrix([r.expected for r in rows], [r.outcome for r in rows],
                                  labels=list(OUTCOMES))
        for i, label in enumerate(VERDICTS):
            assert [stats.confusion[label][o] for o in OUTCOMES] == list(oracle[i])
    applicable = [r for r in rows if r.outcome != "error" and r.expected != "not_applicable"]
    if applicable:
        agreeing = sum(r.outcome == r.expected for r in applicable)
        assert stats.agreement is not None
        assert stats.agreement.value == agreeing / len(applicable)
    else:
        assert stats.agreement is None
    if stats.kappa is not None:
        assert -1.0 <= stats.kappa <= 1.0


@given(rows_strategy)
def test_stats_by_split_partitions_rows(rows: list[RowOutcome]) -> None:
    by_split = stats_by_split(rows)
    assert tuple(by_split) == REPORT_SPLITS
    assert by_split["scored"] == split_stats(rows)
    assert sum(by_split[s].n for s in ("train", "dev", "test", "unsplit")) == len(rows)
    assert by_split["unsplit"].n == sum(r.split is None for r in rows)


@given(rows_strategy)
def test_split_stats_equal_their_row_by_row_definitions(rows: list[RowOutcome]) -> None:
    """split_stats reads counts of (expected, outcome) pairs; each statistic is the same
    value, to the last bit, as its definition over the rows."""
    stats = split_stats(rows)
    scored = [r for r in rows if r.outcome != "error"]

    def share(counted: list[RowOutcome], among: list[RowOutcome]) -> Interval | None:
        return wilson_interval(len(counted), len(among))

    def as_verdict(outcome: str) -> str:
        return "not_applicable" if outcome == "gated" else outcome

    assert stats.judged == sum(r.outcome in VERDICTS for r in rows)
    assert stats.gated == sum(r.outcome == "gated" for r in rows)
    assert stats.unstable == sum(r.unstable for r in rows)
    applicable = [r for r in scored if r.expected != "not_applicable"]
    labelled_na = [r for r in scored if r.expected == "not_applicable"]
    assert stats.agreement == share([r for r in applicable if agrees(r.expected, r.outcome)],
                                    applicable)
    assert stats.na_agreement == share(
        [r for r in labelled_na if agrees(r.expected, r.outcome)], labelled_na)
    assert stats.kappa == cohen_kappa([(r.expected, r.outcome) for r in scored
                                       if r.outcome != "gated"])
    for statistic, label in (("tpr", "pass"), ("tnr", "fail")):
        labelled = [r for r in scored if r.expected == label]
        assert getattr(stats, statistic) == share(
            [r for r in labelled if r.outcome == label], labelled)
    for verdict in VERDICTS:
        given_it = [r for r in scored if as_verdict(r.outcome) == verdict]
        assert stats.precision[verdict] == share(
            [r for r in given_it if r.expected == verdict], given_it)


# --- what each rate counts (gate hits cannot buy agreement) -----------------------------

def _many(expected: str, outcome: str, count: int, start: int) -> list[RowOutcome]:
    return [row(expected, outcome, line=line) for line in range(start, start + count)]


def test_gate_hits_do_not_buy_agreement() -> None:
    """The audit's case: 200 gated rows labelled not_applicable, one pass judged pass, one
    fail judged pass. Applicable agreement is 1 of 2; the gate's 200 hits are na_agreement."""
    rows = [*_many("not_applicable", "gated", 200, 1), row("pass", "pass", line=201),
            row("fail", "pass", line=202)]
    stats = split_stats(rows)
    assert stats.agreement == wilson_interval(1, 2)
    assert stats.na_agreement == wilson_interval(200, 200)
    # Kappa on the two rows the model judged: both said pass, so kappa is 0 (p_o = p_e = 1/2).
    assert stats.kappa == pytest.approx(0.0)


def test_applicable_agreement_counts_na_and_gated_outcomes_on_pass_fail_rows_as_misses() -> None:
    rows = [row("pass", "pass", line=1), row("pass", "not_applicable", line=2),
            row("fail", "gated", line=3), row("fail", "fail", line=4),
            row("not_applicable", "not_applicable", line=5), row("not_applicable", "fail", line=6),
            row("not_applicable", "gated", line=7), row("pass", "error", line=8)]
    stats = split_stats(rows)
    assert stats.agreement == wilson_interval(2, 4)  # lines 1-4; the error row is left out
    assert stats.na_agreement == wilson_interval(2, 3)  # lines 5 and 7 of 5-7
    # Kappa over the five judged rows (lines 1, 2, 4, 5, 6; gated and error rows left out):
    # expected totals pass 2, fail 1, na 2; outcomes pass 1, fail 2, na 2; diagonal 3.
    # Σ e·o = 2·1 + 1·2 + 2·2 = 8; kappa = (5·3 − 8)/(25 − 8) = 7/17.
    assert stats.judged == 5
    assert stats.kappa == pytest.approx(7 / 17)


@given(rows_strategy)
def test_each_rate_counts_what_its_name_says(rows: list[RowOutcome]) -> None:
    """Row by row: agreement over pass/fail labels, na_agreement over not_applicable labels,
    kappa (scikit-learn's) over the rows the model judged."""
    stats = split_stats(rows)
    scored = [r for r in rows if r.outcome != "error"]
    applicable = [r for r in scored if r.expected in ("pass", "fail")]
    assert stats.agreement == wilson_interval(
        sum(r.outcome == r.expected for r in applicable), len(applicable))
    labelled_na = [r for r in scored if r.expected == "not_applicable"]
    assert stats.na_agreement == wilson_interval(
        sum(r.outcome in ("not_applicable", "gated") for r in labelled_na), len(labelled_na))
    judged = [r for r in rows if r.outcome in VERDICTS]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # sklearn warns on 0/0 and returns nan
        oracle = (cohen_kappa_score([r.expected for r in judged], [r.outcome for r in judged],
                                    labels=list(VERDICTS)) if judged else math.nan)
    if math.isnan(oracle):
        assert stats.kappa is None
    else:
        assert stats.kappa == pytest.approx(oracle, abs=1e-12)
