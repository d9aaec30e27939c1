"""An anytime-valid bound for a rate: certify after every labelling round, at one level.

A Wilson bound is a fixed-sample bound: its 2.5% chance of clearing the bar for a
judge whose true rate is the bar holds for one look. Looking again after each
labelling round and stopping at the first look that clears the bar certifies
such a judge far more often (about one campaign in eight over 20 looks). A
*confidence sequence* holds at every look at once, however many there are and
whenever one stops.

This one is the beta-binomial mixture (Robbins 1970; the conjugate mixture of
Howard et al. 2021 and Waudby-Smith & Ramdas 2023, one-sided). For a rate ``p``
and ``S`` agreeing rows of ``n`` (``F = n − S``), the likelihood ratio of
"the rate is π" against "the rate is p", averaged over π uniform on [p, 1],

    M_n(p) = ∫_p^1 (π/p)^S ((1−π)/(1−p))^F dπ / (1 − p),

is a nonnegative martingale with M_0 = 1 when the true rate is p; by Ville's
inequality, P(M_n(p) ≥ 1/α at any n) ≤ α. The lower bound
``L_n = inf{p : M_n(p) < 1/α}`` therefore exceeds the true rate at some look
with probability at most α, and a judge whose rate is at most the bar is
certified (``L_n ≥ bar`` at some look) at most that often. The integral has a
closed form (a Beta integral is a binomial tail): with X ~ Binomial(n + 1, p),

    M_n(p) = P(X ≤ S) / ((n + 1 − S) · P(X = S)).

M_n decreases in p up to S/n (tested over every count up to 3,000 rows), so
``L_n`` is found by bisection. Only the counts enter, not the order of the rows:
a certificate's bound is recomputed from its confusion counts. The upper end of
the interval is the same bound on the disagreeing rows (1 − L_n of F of n).

Standard library only: ``introspection check`` recomputes these bounds.
"""

from __future__ import annotations

import math

from introspection_cli.statistics import Interval

#: The name certificates record in ``sequential.method``.
METHOD = "beta-binomial"
#: What the mixture is made of, as certificates record it (``sequential.parameters``).
PARAMETERS = {"prior": "uniform", "sides": "one"}
#: Bisection steps for a bound: 2**-60, far below any difference a certificate shows.
_STEPS = 60
#: A term this small beside the sum so far ends a binomial tail's sum.
_NEGLIGIBLE = 1e-17


def _log_pmf(k: int, trials: int, p: float) -> float:
    return (math.lgamma(trials + 1) - math.lgamma(k + 1) - math.lgamma(trials - k + 1)
            + k * math.log(p) + (trials - k) * math.log1p(-p))


def _relative_sum(k: int, trials: int, p: float, *, downward: bool) -> float:
    """Σ P(X = j) / P(X = k) over j ≤ k (``downward``) or j > k, X ~ Binomial(trials, p).

    Each term is the one before it times a ratio of neighbouring probabilities;
    summed on the side where those ratios fall below 1 (away from the mean), the
    sum converges in few terms and never overflows.
    """
    total, term = (1.0, 1.0) if downward else (0.0, 1.0)
    j = k
    odds = p / (1 - p)
    while (j > 0) if downward else (j < trials):
        if downward:
            term *= j / ((trials - j + 1) * odds)  # P(X = j - 1) / P(X = j)
            j -= 1
        else:
            term *= (trials - j) * odds / (j + 1)  # P(X = j + 1) / P(X = j)
            j += 1
        total += term
        if term < _NEGLIGIBLE * total:
            break
    return total


def log_mixture(successes: int, n: int, rate: float) -> float:
    """log M_n(rate): the evidence, after ``successes`` agreeing rows of ``n``, against
    "the true rate is ``rate``" in favour of a higher one (``0 < rate < 1``)."""
    if n < 0 or not 0 <= successes <= n:
        raise ValueError(f"need 0 <= successes <= n, got successes={successes}, n={n}")
    if not 0.0 < rate < 1.0:
        raise ValueError(f"the rate must be in (0, 1), got {rate}")
    trials = n + 1
    log_point = _log_pmf(successes, trials, rate)
    if successes >= trials * rate:
        # At or above the mean, P(X <= S) = 1 - P(X > S), and P(X > S) is below about
        # a half: summed from S upward, it converges at once.
        upper = math.exp(log_point) * _relative_sum(successes, trials, rate, downward=False)
        log_cdf = math.log1p(-upper)
    else:
        log_cdf = log_point + math.log(_relative_sum(successes, trials, rate, downward=True))
    return log_cdf - math.log(trials - successes) - log_point


def lower_bound(successes: int, n: int, alpha: float) -> float:
    """L_n: the lowest rate the mixture does not reject at level ``alpha`` (0 when
    ``successes`` is 0). At most ``successes / n``."""
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"a level must be in (0, 1), got {alpha}")
    if n < 1 or not 0 <= successes <= n:
        raise ValueError(f"need n >= 1 and 0 <= successes <= n, got {successes} of {n}")
    if successes == 0:
        return 0.0
    threshold = math.log(1 / alpha)
    # M_n(S/n) <= 1 < 1/alpha (the likelihood is largest at S/n), and M_n grows without
    # bound as the rate falls to 0: the crossing lies in between.
    low, high = 0.0, successes / n
    for _ in range(_STEPS):
        middle = (low + high) / 2
        if middle > 0.0 and log_mixture(successes, n, middle) >= threshold:
            low = middle
        else:
            high = middle
    return low


def interval(successes: int, n: int, alpha: float) -> Interval | None:
    """The rate with its anytime-valid interval, each end at one-sided ``alpha``; None
    when ``n`` is 0."""
    if n == 0:
        return None
    value = successes / n
    low = min(value, lower_bound(successes, n, alpha))
    high = max(value, 1.0 - lower_bound(n - successes, n, alpha))
    return Interval(value, low, high)


def reaches(successes: int, n: int, bar: float, alpha: float) -> bool:
    """Whether the lower bound of ``successes`` of ``n`` reaches ``bar``, without finding
    it: M_n decreases up to S/n, so L_n >= bar exactly when M_n(bar) >= 1/alpha."""
    if successes == 0 or successes <= bar * n:
        return False
    return log_mixture(successes, n, bar) >= math.log(1 / alpha)


def p_value(successes: int, n: int, bar: float) -> float:
    """The anytime-valid p-value of "the rate is at most ``bar``": 1/M_n(bar), at most 1.
    The lower bound at level a reaches ``bar`` exactly when it is at most a."""
    if n == 0 or successes <= bar * n:
        return 1.0
    return min(1.0, math.exp(-log_mixture(successes, n, bar)))
