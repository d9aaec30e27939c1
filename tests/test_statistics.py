"""Every statistic in introspection_cli.statistics against an independent oracle.

Oracles: scipy (Wilson via ``binomtest(...).proportion_ci(method="wilson")``, the
binomial distribution for McNemar), the method-10 limits published in Newcombe
(1998), Statistics in Medicine 17:2635-2650, hand computations written out in
the comments, and closed forms the implementation does not use (Agresti–Coull).
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import binom, binomtest

from introspection_cli.statistics import (
    PLANNING_LIMIT,
    Z_95,
    NoBetterThanChance,
    corrected_pass_rate,
    holm_adjusted,
    mcnemar_mid_p,
    paired_difference,
    rows_to_reach,
    wilson_interval,
    wilson_lower,
)

# --- Wilson and its lower bound ---------------------------------------------------------


@given(st.integers(min_value=1, max_value=5_000).flatmap(
    lambda n: st.tuples(st.integers(min_value=0, max_value=n), st.just(n))))
def test_wilson_matches_scipy(case: tuple[int, int]) -> None:
    successes, n = case
    oracle = binomtest(successes, n).proportion_ci(confidence_level=0.95, method="wilson")
    interval = wilson_interval(successes, n)
    assert interval is not None
    assert interval.low == pytest.approx(oracle.low, abs=1e-9)
    assert interval.high == pytest.approx(oracle.high, abs=1e-9)
    assert wilson_lower(successes, n) == pytest.approx(oracle.low, abs=1e-9)


@pytest.mark.parametrize(("successes", "n", "low"), [
    # k = n: low = n / (n + z²); z² = 3.841459.
    (15, 15, 15 / (15 + 3.841459)),  # 0.79612: just under 0.80
    (16, 16, 16 / (16 + 3.841459)),  # 0.80639: the first n of n to reach 0.80
    (8, 8, 8 / (8 + 3.841459)),  # 0.67561: the 8-of-8 that must not pass a 0.85 gate
    (1, 1, 1 / (1 + 3.841459)),
])
def test_wilson_lower_at_n_of_n_is_n_over_n_plus_z_squared(successes: int, n: int,
                                                           low: float) -> None:
    assert wilson_lower(successes, n) == pytest.approx(low, abs=1e-6)


def test_wilson_lower_rejects_impossible_counts() -> None:
    for successes, n in ((1, 0), (-1, 3), (4, 3)):
        with pytest.raises(ValueError):
            wilson_lower(successes, n)


# --- the insufficient-data threshold and the planning -------------------------------------


def test_a_perfect_judge_needs_16_rows_at_bar_080() -> None:
    assert rows_to_reach(0.80) == 16
    assert binomtest(15, 15).proportion_ci(method="wilson").low < 0.80
    assert binomtest(16, 16).proportion_ci(method="wilson").low >= 0.80


@pytest.mark.parametrize("bar", [0.5, 0.7, 0.8, 0.85, 0.9, 0.95, 0.99])
def test_rows_to_reach_for_a_perfect_judge_is_the_first_n_scipy_accepts(bar: float) -> None:
    first = next(n for n in range(1, 10_000)
                 if binomtest(n, n).proportion_ci(method="wilson").low >= bar)
    assert rows_to_reach(bar) == first


def _lower_at_rate(rate: float, n: int) -> float:
    """The Wilson lower bound for a fractional rate·n of n, in the textbook form."""
    z2 = Z_95 ** 2
    centre = (rate * n + z2 / 2) / (n + z2)
    half = Z_95 * math.sqrt(n * rate * (1 - rate) + z2 / 4) / (n + z2)
    return centre - half


@pytest.mark.parametrize(("bar", "rate"), [(0.8, 0.9), (0.8, 0.95), (0.8, 0.85), (0.7, 0.8),
                                           (0.9, 0.97)])
def test_rows_to_reach_at_a_rate_is_the_first_n_whose_bound_reaches(bar: float,
                                                                     rate: float) -> None:
    expected = next(n for n in range(1, 100_000) if _lower_at_rate(rate, n) >= bar)
    assert rows_to_reach(bar, rate) == expected


def test_rows_to_reach_hand_case() -> None:
    # rate 0.9, bar 0.8: at n = 61 the bound is 0.79997 (short), at n = 62 it is 0.80046.
    assert _lower_at_rate(0.9, 61) < 0.8 <= _lower_at_rate(0.9, 62)
    assert rows_to_reach(0.8, 0.9) == 62


def test_a_rate_at_or_below_the_bar_never_reaches_it() -> None:
    assert rows_to_reach(0.8, 0.8) is None
    assert rows_to_reach(0.8, 0.5) is None
    assert rows_to_reach(0.8, 0.8000001) is None  # beyond the planning limit
    assert PLANNING_LIMIT >= 1_000_000


# --- McNemar mid-p --------------------------------------------------------------------


@pytest.mark.parametrize(("b", "c", "p"), [
    (0, 0, 1.0),  # nothing changed: no evidence
    (0, 5, 1 / 32),  # 2·0 + C(5,0) = 1, over 2^5
    (1, 9, (2 * 1 + 10) / 1024),  # 2·C(10,0) + C(10,1) = 12, over 2^10
    (2, 4, (2 * (1 + 6) + 15) / 64),  # 29/64 = 0.453125 (the exact test says 0.6875)
    (3, 3, 1.0),  # a tie: 2·P(X<3) + P(X=3) = 1 exactly
    (0, 1, 0.5),  # one flip: P(X=0) = 1/2
])
def test_mid_p_hand_computed(b: int, c: int, p: float) -> None:
    assert mcnemar_mid_p(b, c) == pytest.approx(p)
    assert mcnemar_mid_p(c, b) == mcnemar_mid_p(b, c)


@given(st.integers(min_value=0, max_value=400), st.integers(min_value=0, max_value=400))
def test_mid_p_matches_scipy_binomial(b: int, c: int) -> None:
    n, k = b + c, min(b, c)
    if n == 0:
        assert mcnemar_mid_p(b, c) == 1.0
        return
    oracle = min(1.0, 2 * binom.cdf(k - 1, n, 0.5) + binom.pmf(k, n, 0.5))
    # The mid-p is the exact two-sided p minus the probability of the observed value.
    exact = binomtest(k, n, 0.5).pvalue
    assert mcnemar_mid_p(b, c) == pytest.approx(oracle, rel=1e-9, abs=1e-300)
    if b != c:
        assert mcnemar_mid_p(b, c) == pytest.approx(exact - binom.pmf(k, n, 0.5),
                                                    rel=1e-9, abs=1e-300)


def test_mid_p_handles_large_counts_and_rejects_negative_ones() -> None:
    assert 0.0 <= mcnemar_mid_p(0, 5000) < 1e-300
    with pytest.raises(ValueError, match="discordant"):
        mcnemar_mid_p(-1, 2)


# --- Newcombe (1998) method 10 ---------------------------------------------------------

#: (a, b, c, d) and the method-10 95% limits for p1 − p2 = (b − c)/n, as published in
#: Newcombe (1998), Statistics in Medicine 17:2635-2650, to four decimals.
NEWCOMBE_1998 = [
    ((36, 12, 2, 0), (0.0569, 0.3404)),
    ((20, 12, 2, 16), (0.0562, 0.3292)),
    ((18, 12, 2, 18), (0.0562, 0.3290)),
    ((36, 14, 0, 0), (0.1528, 0.4167)),
    ((35, 14, 0, 1), (0.1461, 0.4175)),
    ((18, 14, 0, 18), (0.1441, 0.3963)),
    ((2, 97, 1, 0), (0.8721, 0.9854)),
]


@pytest.mark.parametrize(("table", "limits"), NEWCOMBE_1998)
def test_paired_difference_reproduces_newcombe_1998(table: tuple[int, int, int, int],
                                                    limits: tuple[float, float]) -> None:
    a, b, c, d = table
    interval = paired_difference(a, b, c, d)
    assert interval is not None
    assert interval.value == pytest.approx((b - c) / (a + b + c + d))
    assert interval.low == pytest.approx(limits[0], abs=5e-5)
    assert interval.high == pytest.approx(limits[1], abs=5e-5)


def test_paired_difference_mirrors_and_is_null_without_pairs() -> None:
    forward = paired_difference(36, 12, 2, 0)
    backward = paired_difference(36, 2, 12, 0)
    assert forward is not None and backward is not None
    assert (backward.value, backward.low, backward.high) == pytest.approx(
        (-forward.value, -forward.high, -forward.low))
    assert paired_difference(0, 0, 0, 0) is None
    with pytest.raises(ValueError):
        paired_difference(-1, 0, 0, 1)


@given(st.lists(st.integers(min_value=0, max_value=60), min_size=4, max_size=4).filter(sum))
def test_paired_difference_contains_the_estimate_within_minus_one_one(counts: list[int]) -> None:
    interval = paired_difference(*counts)
    assert interval is not None
    assert -1.0 <= interval.low <= interval.value + 1e-12
    assert interval.value - 1e-12 <= interval.high <= 1.0


# --- Rogan–Gladen and the Lee et al. (2025) interval -----------------------------------


def test_the_documented_check_value() -> None:
    # p = 0.80 on N = 500, TPR 0.92 (m1 = 50), TNR 0.88 (m0 = 50): 0.850 (0.769–0.973).
    estimate = corrected_pass_rate(0.80, 500, 0.92, 0.88, pass_rows=50, fail_rows=50)
    assert round(estimate.value, 3) == 0.850
    assert round(estimate.low, 3) == 0.769
    assert round(estimate.high, 3) == 0.973


@pytest.mark.parametrize(("p", "tpr", "tnr", "theta"), [
    (0.8, 0.92, 0.88, (0.8 + 0.88 - 1) / (0.92 + 0.88 - 1)),  # 0.68/0.80 = 0.85
    (0.5, 0.9, 0.9, 0.5),  # symmetric errors leave 1/2 where it is
    (0.3, 1.0, 1.0, 0.3),  # a perfect judge needs no correction
    (0.05, 0.9, 0.9, 0.0),  # (0.05 − 0.1)/0.8 < 0: clipped to 0
    (0.98, 0.9, 0.9, 1.0),  # (0.98 − 0.1)/0.8 = 1.1: clipped to 1
])
def test_rogan_gladen_hand_cases(p: float, tpr: float, tnr: float, theta: float) -> None:
    estimate = corrected_pass_rate(p, 400, tpr, tnr, pass_rows=40, fail_rows=40)
    assert estimate.value == pytest.approx(theta)
    assert 0.0 <= estimate.low <= estimate.high <= 1.0


def test_the_interval_in_a_symmetric_case_worked_by_hand() -> None:
    # p = 0.5 on N = 400, TPR = TNR = 0.9 on m0 = m1 = 40. Then p' = (200 + z²/2)/(400 + z²)
    # = 0.5 exactly, q0 = q1 = q = (36 + 1)/42 = 37/42, so t = (q − 0.5)/(2q − 1) = 0.5,
    # and dt = 2z²(−0.5·q(1−q)/42 + 0.5·q(1−q)/42) = 0: the interval is centred on 0.5.
    # q(1−q) = 185/1764 = 0.104875, N' = 403.841459, 2q − 1 = 32/42 = 0.761905;
    # se = 0.5·√(1/403.841459 + 2·0.104875/42)/0.761905 = 0.5·√0.0074702/0.761905 = 0.056720;
    # z·se = 0.111170: 0.388830–0.611170.
    estimate = corrected_pass_rate(0.5, 400, 0.9, 0.9, pass_rows=40, fail_rows=40)
    assert estimate.value == pytest.approx(0.5)
    assert estimate.low == pytest.approx(0.388830, abs=1e-6)
    assert estimate.high == pytest.approx(0.611170, abs=1e-6)


def test_with_a_perfectly_known_perfect_judge_the_interval_is_agresti_coull() -> None:
    # TPR = TNR = 1 measured on (practically) infinitely many rows: q0, q1 -> 1, the
    # bias term vanishes, and t ± z·se is the Agresti–Coull interval for p itself.
    successes, n = 37, 120
    estimate = corrected_pass_rate(successes / n, n, 1.0, 1.0, pass_rows=10 ** 12,
                                   fail_rows=10 ** 12)
    z2 = Z_95 ** 2
    centre = (successes + z2 / 2) / (n + z2)
    half = Z_95 * math.sqrt(centre * (1 - centre) / (n + z2))
    assert estimate.low == pytest.approx(centre - half, abs=1e-6)
    assert estimate.high == pytest.approx(centre + half, abs=1e-6)


def test_fewer_calibration_rows_widen_the_interval() -> None:
    few = corrected_pass_rate(0.8, 500, 0.92, 0.88, pass_rows=20, fail_rows=20)
    many = corrected_pass_rate(0.8, 500, 0.92, 0.88, pass_rows=500, fail_rows=500)
    assert few.high - few.low > many.high - many.low


@pytest.mark.parametrize(("tpr", "tnr"), [(0.5, 0.5), (0.4, 0.6), (0.3, 0.2), (0.0, 1.0)])
def test_a_judge_no_better_than_chance_is_refused(tpr: float, tnr: float) -> None:
    with pytest.raises(NoBetterThanChance):
        corrected_pass_rate(0.6, 100, tpr, tnr, pass_rows=30, fail_rows=30)


@pytest.mark.parametrize("args", [(1.2, 10, 0.9, 0.9, 5, 5), (0.5, 0, 0.9, 0.9, 5, 5),
                                  (0.5, 10, 0.9, 0.9, 0, 5)])
def test_impossible_inputs_are_refused(args: tuple[float, int, float, float, int, int]) -> None:
    with pytest.raises(ValueError):
        corrected_pass_rate(*args[:4], pass_rows=args[4], fail_rows=args[5])


# --- Holm's step-down adjustment ----------------------------------------------------------

@given(st.lists(st.floats(min_value=0.0, max_value=1.0), min_size=1, max_size=12))
def test_holm_matches_statsmodels(p_values: list[float]) -> None:
    from statsmodels.stats.multitest import multipletests

    oracle = multipletests(p_values, method="holm")[1]
    assert holm_adjusted(p_values) == pytest.approx(list(oracle), abs=1e-12)


def test_holm_hand_case_in_the_given_order() -> None:
    # Sorted 0.01, 0.04, 0.03 -> 0.01·3 = 0.03, then max(0.03, 0.03·2) = 0.06, then
    # max(0.06, 0.04·1) = 0.06; each in the place it was given.
    assert holm_adjusted([0.04, 0.01, 0.03]) == pytest.approx([0.06, 0.03, 0.06])
    assert holm_adjusted([]) == []


@pytest.mark.parametrize("p_values", [[-0.1], [1.5], [math.nan]])
def test_holm_rejects_what_is_not_a_p_value(p_values: list[float]) -> None:
    with pytest.raises(ValueError, match="p-value"):
        holm_adjusted(p_values)


@pytest.mark.parametrize("bar", [0.999999, 0.9999999999])
def test_a_perfect_judge_reaches_any_bar_below_one_in_finitely_many_rows(bar: float) -> None:
    # n of n has Wilson lower bound n / (n + z²): past the planning limit of a real rate
    # the perfect judge's floor is still a number (certify --bar 0.999999 and status
    # --bar 0.999999 were internal errors when it came back None).
    n = rows_to_reach(bar)
    assert n is not None and n > 1_000_000
    # n / (n + z²) >= bar  <=>  n >= z²·bar / (1 − bar); the bound itself settles rounding
    # (near 1 a double resolves n / (n + z²) only to about 1e-16).
    closed = Z_95 ** 2 * bar / (1 - bar)
    assert abs(n - closed) <= 1e-6 * closed + 1
    assert wilson_lower(n, n) >= bar > wilson_lower(n - 1, n - 1)
