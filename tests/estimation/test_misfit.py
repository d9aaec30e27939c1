"""The misfit test against independent computations, and its level and power by simulation.

Oracles: the joint maximum likelihood by scipy's general optimiser (L-BFGS-B from
several starts, on a softmax parametrisation of M and π), its closed form in the
two-class case, and Boschloo's exact test of two binomials, which is what the
two-class test at an edge of the simplex asks. The simulations draw the
calibration and production from one judge (nothing drifted) and count how often
"production contradicts the calibration" is said.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize, stats

from introspection_cli.estimation.misfit import LEVEL, best_fit, misfit_test

ISSUE_20 = np.array([[45, 5], [5, 40]])  # verdict by label: TPR 45/50, TNR 40/45


def _oracle_loglik(counts: np.ndarray, verdicts: np.ndarray) -> float:
    """The null's maximum log-likelihood by a general optimiser, best of several starts."""
    n_verdicts, n_labels = counts.shape

    def unpack(theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        logits = theta[: n_verdicts * n_labels].reshape(n_verdicts, n_labels)
        matrix = np.exp(logits - logits.max(axis=0))
        mix = np.exp(theta[n_verdicts * n_labels:] - theta[n_verdicts * n_labels:].max())
        return matrix / matrix.sum(axis=0), mix / mix.sum()

    def negative(theta: np.ndarray) -> float:
        matrix, mix = unpack(theta)
        shares = matrix @ mix
        return -float(np.sum(counts * np.log(np.maximum(matrix, 1e-300)))
                      + np.sum(verdicts * np.log(np.maximum(shares, 1e-300))))

    rng = np.random.default_rng(0)
    starts = [np.concatenate([np.log((counts + 0.5) / (counts + 0.5).sum(axis=0)).ravel(),
                              rng.normal(0, 2, n_labels)]) for _ in range(12)]
    return -min(optimize.minimize(negative, start, method="L-BFGS-B").fun for start in starts)


@pytest.mark.parametrize(("counts", "verdicts"), [
    (ISSUE_20, [480, 20]),
    (ISSUE_20, [455, 45]),
    ([[90, 10], [6, 85], [4, 5]], [380, 5, 15]),  # pass and fail labels, three verdicts
    ([[90, 10], [6, 85], [4, 5]], [300, 80, 20]),
    ([[90, 10, 5], [6, 85, 5], [4, 5, 40]], [360, 10, 30]),  # three of each
])
def test_the_joint_fit_is_the_maximum_likelihood(counts: list[list[int]],
                                                 verdicts: list[int]) -> None:
    counts_, verdicts_ = np.array(counts, dtype=float), np.array(verdicts, dtype=float)
    fit = best_fit(counts_[None], verdicts_[None])
    assert float(fit.loglik[0]) == pytest.approx(_oracle_loglik(counts_, verdicts_), abs=2e-3)


def test_the_two_class_statistic_at_the_edge_is_the_pooled_closed_form() -> None:
    # 480 of 500 pass is above TPR 45/50: the fit puts every conversation in pass and the
    # pass column at the pooled 525/550; the fail column keeps its own 40/45.
    pooled = 525 / 550
    expected = [50 * pooled, 50 * (1 - pooled), 500 * pooled, 500 * (1 - pooled)]
    observed = [45, 5, 480, 20]
    closed = sum((o - e) ** 2 / e for o, e in zip(observed, expected, strict=True))
    result = misfit_test(ISSUE_20, np.array([480, 20]), np.random.default_rng(1), 2000)
    assert result.statistic == pytest.approx(closed, rel=1e-9)


def test_issue_20_is_a_misfit_by_the_evidence_an_exact_test_sees() -> None:
    # TPR 0.90 over 50 rows, TNR 0.889 over 45, production 480 of 500: a judge passing at
    # most ~90% of anything does not pass 96%. Both are samples, so the evidence is that of
    # two binomials, 480/500 above 45/50: Boschloo's exact one-sided p is 0.045.
    boschloo = stats.boschloo_exact([[480, 20], [45, 5]], alternative="greater").pvalue
    result = misfit_test(ISSUE_20, np.array([480, 20]), np.random.default_rng(20251202), 2000)
    assert result.misfit and result.p_value <= LEVEL
    assert result.p_value == pytest.approx(boschloo, abs=0.015)
    assert result.statistic > result.threshold
    # 455 of 500 is within the sampling error of both; 440 of 500 the calibration produces.
    assert not misfit_test(ISSUE_20, np.array([455, 45]), np.random.default_rng(1), 2000).misfit
    inside = misfit_test(ISSUE_20, np.array([440, 60]), np.random.default_rng(1), 2000)
    assert (inside.statistic, inside.p_value, inside.misfit) == (0.0, 1.0, False)


def _false_alarms(matrix: list[list[float]], per_class: int, production: int,
                  mix: list[float], trials: int, seed: int) -> float:
    """How often a judge of ``matrix`` is called a misfit when nothing drifted: each trial
    draws ``per_class`` calibration rows of each label and ``production`` verdicts at
    ``mix``, both from the same judge."""
    rng = np.random.default_rng(seed)
    verdicts_given = np.array(matrix)
    shares = verdicts_given @ np.array(mix)
    fired = 0
    for _ in range(trials):
        counts = np.stack([rng.multinomial(per_class, verdicts_given[:, label])
                           for label in range(len(mix))], axis=1)
        fired += misfit_test(counts, rng.multinomial(production, shares), rng, 400).misfit
    return fired / trials


def test_the_level_holds_when_the_calibration_is_a_sample() -> None:
    # A healthy judge at TPR = TNR = 0.90, calibrated on 50 rows of each class, production
    # of 1,000 at the edge (every conversation good) and near it. The test that took the
    # calibration's M as known said "contradicts" in 20.5% of such samples at the edge.
    healthy = [[0.9, 0.1], [0.1, 0.9]]
    at_edge = _false_alarms(healthy, 50, 1000, [1.0, 0.0], trials=600, seed=5)
    assert at_edge <= LEVEL, at_edge
    assert _false_alarms(healthy, 50, 1000, [0.97, 0.03], trials=300, seed=6) <= LEVEL / 2


def test_the_level_holds_for_a_judge_that_also_says_not_applicable() -> None:
    # Three verdicts for two label classes: production's shares must lie on a segment, a
    # regular test at its level inside (so the rate is the level, within the simulation's
    # error: 200 trials, standard error 1.5%) and at the edge.
    judge = [[0.90, 0.10], [0.06, 0.85], [0.04, 0.05]]
    margin = 2 * math.sqrt(LEVEL * (1 - LEVEL) / 200)
    for mix, seed in (([1.0, 0.0], 31), ([0.8, 0.2], 32)):
        rate = _false_alarms(judge, 100, 400, mix, trials=200, seed=seed)
        assert rate <= LEVEL + margin, (mix, rate)


def test_it_sees_production_the_judge_cannot_give() -> None:
    # The same judge, calibrated on 100 rows a class. Production passing 99% (its TPR is
    # 90%) or saying not_applicable to 20% (it says so to at most 5% of anything) is
    # called a misfit nearly always; passing 97% more often than not, not_applicable to 12%
    # about half the time: the calibration knows the TPR to ±3% and the not_applicable
    # shares to ±2%, and both samples' error counts.
    rng = np.random.default_rng(9)
    judge = np.array([[0.90, 0.10], [0.06, 0.85], [0.04, 0.05]])
    for shares, at_least in (([0.99, 0.005, 0.005], 38), ([0.72, 0.08, 0.20], 38),
                             ([0.97, 0.01, 0.02], 21), ([0.80, 0.08, 0.12], 15)):
        found = sum(misfit_test(np.stack([rng.multinomial(100, judge[:, label])
                                          for label in range(2)], axis=1),
                                rng.multinomial(400, shares), rng, 400).misfit
                    for _ in range(40))
        assert found >= at_least, (shares, found)
