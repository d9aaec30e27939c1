"""PPI++ against ``ppi_python``, the rate over strata against its definition, and the design
check against scipy.

Oracles: ``ppi_python``'s ``ppi_mean_ci`` and ``ppi_mean_pointestimate`` (with the λ
they tune, and with a fixed λ), scipy's ``chi2.sf`` and ``chi2_contingency``, and the
stratified estimator written out here from its estimating equation.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import chi2, chi2_contingency

from introspection_cli.estimation.ppi import Stratum, ppi_mean, ppi_rate, tuned_lambda
from introspection_cli.statistics import Z_95, chi_square_sf, homogeneity_test

with warnings.catch_warnings():  # ppi_py's dependencies warn about their own imports
    warnings.simplefilter("ignore")
    from ppi_py import ppi_mean_ci, ppi_mean_pointestimate
    from ppi_py.ppi import _calc_lam_glm


def _generated(seed: int, n: int, big_n: int, theta: float, accuracy: float,
               binary: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    if binary:
        y = (rng.random(n) < theta).astype(float)
        f = np.where(rng.random(n) < accuracy, y, 1 - y)
        truth = (rng.random(big_n) < theta).astype(float)
        fu = np.where(rng.random(big_n) < accuracy, truth, 1 - truth)
    else:  # a continuous score with noise: PPI++ is for any mean
        y = rng.normal(theta, 1.0, n)
        f = y + rng.normal(0.0, 1.0 - accuracy + 0.05, n)
        fu = rng.normal(theta, 1.0, big_n) + rng.normal(0.0, 1.0 - accuracy + 0.05, big_n)
    return y, f, fu


@given(seed=st.integers(0, 10_000), n=st.integers(10, 300), big_n=st.integers(1, 3000),
       theta=st.floats(0.05, 0.95), accuracy=st.floats(0.5, 1.0), binary=st.booleans())
def test_ppi_mean_matches_ppi_python(seed: int, n: int, big_n: int, theta: float,
                                     accuracy: float, binary: bool) -> None:
    y, f, fu = _generated(seed, n, big_n, theta, accuracy, binary)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a constant prediction: ppi_python divides 0 by 0
        oracle_low, oracle_high = (float(b[0]) for b in ppi_mean_ci(y, f, fu, alpha=0.05))
        grads_hat = f - f.mean()
        oracle_lambda = _calc_lam_glm(y - y.mean(), grads_hat, fu - f.mean(), np.eye(1),
                                      clip=True)
    ours = ppi_mean(y, f, fu)
    if np.isnan(oracle_lambda):  # no variation in the predictions: nothing to gain from them
        assert ours.lam == 0.0
        return
    assert ours.lam == pytest.approx(float(oracle_lambda), abs=1e-9)
    low, high = ours.bounds()
    assert low == pytest.approx(oracle_low, abs=1e-6)
    assert high == pytest.approx(oracle_high, abs=1e-6)
    point = float(np.atleast_1d(ppi_mean_pointestimate(y, f, fu))[0])
    assert ours.value == pytest.approx(point, abs=1e-9)


@pytest.mark.parametrize("lam", [0.0, 0.3, 1.0])
def test_a_fixed_lambda_matches_ppi_python(lam: float) -> None:
    y, f, fu = _generated(1, 80, 900, 0.7, 0.85, binary=True)
    low, high = ppi_mean_ci(y, f, fu, alpha=0.05, lam=lam)
    ours = ppi_mean(y, f, fu, lam=lam)
    assert ours.bounds() == pytest.approx((float(low[0]), float(high[0])), abs=1e-9)


def _binary_stratum(y: np.ndarray, f: np.ndarray, fu: np.ndarray, weight: float = 1.0
                    ) -> Stratum:
    ones, ones_u = np.ones(len(y)), np.ones(len(fu))
    return Stratum(np.column_stack([y, ones, f, ones]), np.column_stack([fu, ones_u]), weight)


def test_the_rate_with_nothing_not_applicable_is_ppi_mean() -> None:
    for seed in range(20):
        y, f, fu = _generated(seed, 100, 2000, 0.8, 0.88, binary=True)
        rate = ppi_rate([_binary_stratum(y, f, fu)])
        mean = ppi_mean(y, f, fu)
        assert rate is not None
        assert rate.value == pytest.approx(mean.value, abs=1e-12)
        assert rate.standard_error == pytest.approx(mean.standard_error, abs=1e-12)
        assert rate.lambdas[0] == pytest.approx(mean.lam, abs=1e-12)
        assert rate.labels_only == pytest.approx(y.mean(), abs=1e-12)
        assert rate.labels_only_error == pytest.approx(np.std(y) / np.sqrt(len(y)), abs=1e-12)


def _stratum_with_na(seed: int, n: int, big_n: int, weight: float) -> Stratum:
    """Labels pass/fail/na at 0.6/0.25/0.15; the verdict is right 85% of the time."""
    rng = np.random.default_rng(seed)

    def draw(size: int) -> tuple[np.ndarray, np.ndarray]:
        label = rng.choice(3, size=size, p=[0.6, 0.25, 0.15])
        verdict = np.where(rng.random(size) < 0.85, label, rng.choice(3, size=size))
        return label, verdict

    label, verdict = draw(n)
    _, verdict_u = draw(big_n)
    labelled = np.column_stack([label == 0, label < 2, verdict == 0, verdict < 2]).astype(float)
    unlabelled = np.column_stack([verdict_u == 0, verdict_u < 2]).astype(float)
    return Stratum(labelled, unlabelled, weight)


def _definition(strata: list[Stratum], lambdas: list[float]) -> tuple[float, float]:
    """θ solving Σ w·(λ·mean(ĝ_unlabelled) + mean(g − λ·ĝ)) = 0 by bisection, and its
    sandwich standard error from per-stratum variances and the equation's slope."""
    def equation(theta: float) -> float:
        total = 0.0
        for stratum, lam in zip(strata, lambdas, strict=True):
            lab, un = stratum.labelled, stratum.unlabelled
            g = lab[:, 0] - theta * lab[:, 1]
            g_hat = lab[:, 2] - theta * lab[:, 3]
            g_un = un[:, 0] - theta * un[:, 1]
            total += stratum.weight * (lam * g_un.mean() + (g - lam * g_hat).mean())
        return total

    low, high = 0.0, 1.0
    for _ in range(200):
        middle = (low + high) / 2
        low, high = (middle, high) if equation(middle) > 0 else (low, middle)
    theta = (low + high) / 2
    variance = 0.0
    for stratum, lam in zip(strata, lambdas, strict=True):
        lab, un = stratum.labelled, stratum.unlabelled
        rectified = (lab[:, 0] - theta * lab[:, 1]) - lam * (lab[:, 2] - theta * lab[:, 3])
        variance += stratum.weight ** 2 * (np.var(rectified) / len(lab)
                                           + np.var(lam * (un[:, 0] - theta * un[:, 1]))
                                           / len(un))
    slope = (equation(theta - 1e-6) - equation(theta + 1e-6)) / 2e-6
    return theta, float(np.sqrt(variance) / slope)


def test_the_stratified_rate_solves_its_estimating_equation() -> None:
    strata = [_stratum_with_na(1, 120, 1500, 0.5), _stratum_with_na(2, 60, 600, 0.3),
              _stratum_with_na(3, 40, 900, 0.2)]
    rate = ppi_rate(strata)
    assert rate is not None
    theta, error = _definition(strata, list(rate.lambdas))
    assert rate.value == pytest.approx(theta, abs=1e-9)
    assert rate.standard_error == pytest.approx(error, rel=1e-5)
    classical_theta, classical_error = _definition(strata, [0.0, 0.0, 0.0])
    assert rate.labels_only == pytest.approx(classical_theta, abs=1e-9)
    assert rate.labels_only_error == pytest.approx(classical_error, rel=1e-5)
    # Each λ is the one that makes its stratum's variance smallest, at the λ = 1 estimate.
    start, _ = _definition(strata, [1.0, 1.0, 1.0])
    for stratum, lam in zip(strata, rate.lambdas, strict=True):
        lab, un = stratum.labelled, stratum.unlabelled
        expected = tuned_lambda(lab[:, 0] - start * lab[:, 1], lab[:, 2] - start * lab[:, 3],
                                un[:, 0] - start * un[:, 1])
        assert lam == pytest.approx(expected, abs=1e-12)


def test_no_labelled_pass_or_fail_row_has_no_rate() -> None:
    labelled = np.array([[0.0, 0.0, 1.0, 1.0]] * 5)
    assert ppi_rate([Stratum(labelled, np.ones((10, 2)), 1.0)]) is None


@given(x=st.floats(0.0, 200.0), df=st.integers(1, 9))
def test_chi_square_survival_matches_scipy(x: float, df: int) -> None:
    assert chi_square_sf(x, df) == pytest.approx(float(chi2.sf(x, df)), abs=1e-12)


@given(st.lists(st.tuples(st.integers(0, 300), st.integers(0, 3000)), min_size=2, max_size=4))
def test_homogeneity_matches_scipy(columns: list[tuple[int, int]]) -> None:
    first, second = [a for a, _ in columns], [b for _, b in columns]
    test = homogeneity_test(first, second)
    used = [(a, b) for a, b in columns if a + b]
    if sum(first) == 0 or sum(second) == 0 or len(used) < 2:
        assert test is None
        return
    statistic, p, df, _ = chi2_contingency(np.array(used).T, correction=False)
    assert test is not None and test.df == df
    assert test.statistic == pytest.approx(statistic, rel=1e-9, abs=1e-9)
    assert test.p_value == pytest.approx(p, abs=1e-9)


def test_the_normal_quantile() -> None:
    from scipy.stats import norm

    assert abs(Z_95 - float(norm.ppf(0.975))) < 1e-12
