"""Prediction-powered inference (PPI++; Angelopoulos, Duchi and Zrnic 2023) of a pass rate.

When the labelled rows are a random sample of the production rows, the judge's
verdicts on the unlabelled ones carry information, and its mistakes are measured
on the labelled ones. PPI++ for a mean: ``λ·mean(f(unlabelled)) + mean(y − λ·f)``
over the labelled rows, with λ tuned to make the variance smallest (clipped to
[0, 1]: λ = 0 is the labels alone, λ = 1 plain PPI); a normal 95% interval.
:func:`ppi_mean` is that estimator, as ``ppi_python``'s ``ppi_mean_ci`` computes it.

θ, the share labelled ``pass`` among rows labelled ``pass`` or ``fail``, is a
ratio of two means. It is the root of the estimating equation
``E[1{y = pass} − θ·1{y ∈ pass, fail}] = 0``, and :func:`ppi_rate` solves that
equation the PPI++ way over strata (segments weighted by their share of the
rows). With no ``not_applicable`` label or verdict it is exactly :func:`ppi_mean`
of ``1{y = pass}`` with predictions ``1{verdict = pass}``. Its interval
(:meth:`RateEstimate.interval`) is PPI++'s normal one on the log-odds scale.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from introspection_cli.estimation.simplex import Array
from introspection_cli.statistics import Z_95


@dataclass(frozen=True)
class MeanEstimate:
    """A PPI++ estimate of a mean: its value, standard error and the λ it used."""

    value: float
    standard_error: float
    lam: float

    def bounds(self, z: float = Z_95) -> tuple[float, float]:
        return self.value - z * self.standard_error, self.value + z * self.standard_error


def tuned_lambda(residuals: Array, predictions: Array, unlabelled: Array) -> float:
    """The λ that minimises the PPI++ variance, clipped to [0, 1].

    ``residuals`` and ``predictions`` are the labelled rows' outcome and prediction
    (each centred or not: only their covariance counts), ``unlabelled`` the
    predictions on the unlabelled rows. λ = Cov(y, f) / ((1 + n/N)·Var(f)), with
    Var over all predictions; 0 when the predictions do not vary or there are no
    unlabelled rows (nothing to gain from them).
    """
    n, big_n = len(residuals), len(unlabelled)
    pooled = np.concatenate([predictions, unlabelled])
    if big_n == 0 or n == 0 or len(pooled) < 2:
        return 0.0
    variance = float(np.var(pooled, ddof=1))
    if variance <= 0.0:
        return 0.0
    covariance = float(np.mean((residuals - residuals.mean())
                               * (predictions - predictions.mean())))
    return min(1.0, max(0.0, covariance / ((1 + n / big_n) * variance)))


def ppi_mean(labels: Array, predictions: Array, unlabelled: Array,
             lam: float | None = None) -> MeanEstimate:
    """PPI++ for the mean of ``labels``, with ``predictions`` on the same rows and
    ``unlabelled`` predictions on rows without a label; λ tuned when not given."""
    if lam is None:
        lam = tuned_lambda(labels, predictions, unlabelled)
    imputed = lam * unlabelled.mean() if len(unlabelled) else 0.0
    rectifier = labels - lam * predictions
    variance = float(np.var(rectifier)) / len(labels)
    if len(unlabelled):
        variance += float(np.var(lam * unlabelled)) / len(unlabelled)
    return MeanEstimate(float(imputed + rectifier.mean()), math.sqrt(variance), lam)


@dataclass(frozen=True)
class Stratum:
    """One segment's rows, and its share of all rows.

    ``labelled`` columns: 1{label = pass}, 1{label ∈ pass, fail}, 1{verdict = pass},
    1{verdict ∈ pass, fail}; ``unlabelled``: the last two.
    """

    labelled: Array  # (n, 4)
    unlabelled: Array  # (N, 2)
    weight: float


@dataclass(frozen=True)
class RateEstimate:
    """θ by PPI++ and by the labels alone (λ = 0), with their standard errors."""

    value: float
    standard_error: float
    labels_only: float
    labels_only_error: float
    lambdas: tuple[float, ...]

    def interval(self, z: float = Z_95) -> tuple[float, float] | None:
        """The 95% interval: the normal one taken on the log-odds scale (the same standard
        error, by the delta method). It stays inside (0, 1) and keeps its coverage near
        the edges, where the plain normal interval falls short or leaves [0, 1]. None
        when θ is at or beyond an edge or has no standard error (nothing to take)."""
        if not 0.0 < self.value < 1.0 or self.standard_error <= 0.0:
            return None
        log_odds = math.log(self.value / (1 - self.value))
        spread = z * self.standard_error / (self.value * (1 - self.value))
        return _expit(log_odds - spread), _expit(log_odds + spread)

    @property
    def effective_labels_ratio(self) -> float:
        """How many labels alone would give the same variance, per label used."""
        if self.standard_error <= 0.0:
            return math.inf
        return (self.labels_only_error / self.standard_error) ** 2


def ppi_rate(strata: Sequence[Stratum]) -> RateEstimate | None:
    """θ over the strata, PPI++ and labels-only; None when the rows cannot give one (no
    labelled row is pass or fail)."""
    zeros = tuple(0.0 for _ in strata)
    classical = _solve(strata, zeros)
    if classical is None:
        return None
    # As ppi_python does: λ tuned at the plain-PPI (λ = 1) estimate.
    start = _solve(strata, tuple(1.0 for _ in strata))
    lambdas = tuple(tuned_lambda(*_gradients(stratum, classical if start is None else start))
                    for stratum in strata)
    theta = _solve(strata, lambdas)
    if theta is None:
        return None
    return RateEstimate(theta, _standard_error(strata, lambdas, theta), classical,
                        _standard_error(strata, zeros, classical), lambdas)


def _expit(log_odds: float) -> float:
    return 1.0 / (1.0 + math.exp(-log_odds))


def _solve(strata: Sequence[Stratum], lambdas: Sequence[float]) -> float | None:
    """The root of the stratified PPI estimating equation, linear in θ."""
    numerator = denominator = 0.0
    for stratum, lam in zip(strata, lambdas, strict=True):
        a, b = _means(stratum, lam)
        numerator += stratum.weight * a
        denominator += stratum.weight * b
    if denominator <= 0.0:
        return None
    return numerator / denominator


def _means(stratum: Stratum, lam: float) -> tuple[float, float]:
    """PPI estimates of E[1{y = pass}] and E[1{y ∈ pass, fail}] in the stratum."""
    labelled, unlabelled = stratum.labelled, stratum.unlabelled
    imputed = unlabelled.mean(axis=0) if len(unlabelled) else np.zeros(2)
    pass_mean = lam * imputed[0] + float(np.mean(labelled[:, 0] - lam * labelled[:, 2]))
    judged_mean = lam * imputed[1] + float(np.mean(labelled[:, 1] - lam * labelled[:, 3]))
    return pass_mean, judged_mean


def _gradients(stratum: Stratum, theta: float) -> tuple[Array, Array, Array]:
    """The estimating function at θ: on labels, on predictions, on unlabelled predictions."""
    labelled, unlabelled = stratum.labelled, stratum.unlabelled
    return (labelled[:, 0] - theta * labelled[:, 1], labelled[:, 2] - theta * labelled[:, 3],
            unlabelled[:, 0] - theta * unlabelled[:, 1])


def _standard_error(strata: Sequence[Stratum], lambdas: Sequence[float], theta: float) -> float:
    """The sandwich standard error: the estimating equation's variance over its slope."""
    variance = slope = 0.0
    for stratum, lam in zip(strata, lambdas, strict=True):
        on_labels, on_predictions, on_unlabelled = _gradients(stratum, theta)
        part = float(np.var(on_labels - lam * on_predictions)) / len(on_labels)
        if len(on_unlabelled):
            part += float(np.var(lam * on_unlabelled)) / len(on_unlabelled)
        variance += stratum.weight ** 2 * part
        slope += stratum.weight * _means(stratum, lam)[1]
    return math.sqrt(variance) / slope
