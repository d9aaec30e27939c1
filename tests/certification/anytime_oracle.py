"""An independent implementation of the anytime-valid bound, for the tests to check against.

The mixture M_n(p) = ∫_p^1 (π/p)^S ((1−π)/(1−p))^F dπ / (1 − p) is computed here
from scipy's regularized incomplete beta (the integral is a Beta function times
its upper tail), and its lower bound by scipy's ``brentq``; the implementation
sums a binomial tail and bisects instead. Plans are computed by brute force:
each n's threshold from the mixture, its power from scipy's binomial pmf.
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np
from scipy.optimize import brentq
from scipy.special import betainc, betaln
from scipy.stats import binom


def oracle_log_mixture(successes: int, n: int, rate: float) -> float:
    """log M_n(rate); -inf where scipy's tail underflows (far above S/n)."""
    failures = n - successes
    upper = betainc(failures + 1, successes + 1, 1 - rate)  # P(π >= rate) under the posterior
    if upper == 0.0:
        return -math.inf
    return float(betaln(successes + 1, failures + 1) + np.log(upper) - np.log1p(-rate)
                 - successes * np.log(rate) - failures * np.log1p(-rate))


def oracle_lower(successes: int, n: int, alpha: float) -> float:
    if successes == 0:
        return 0.0
    target = math.log(1 / alpha)
    top = successes / n
    if oracle_log_mixture(successes, n, min(top, 1 - 1e-12)) >= target:  # pragma: no cover
        raise AssertionError("the mixture at S/n is at most 1")
    if oracle_log_mixture(successes, n, 1e-12) < target:
        return 0.0
    return float(brentq(lambda p: oracle_log_mixture(successes, n, p) - target, 1e-12,
                        min(top, 1 - 1e-12), xtol=1e-14))


@cache
def oracle_threshold(n: int, bar: float, alpha: float) -> int:
    """The fewest agreeing rows of n whose anytime lower bound reaches ``bar``."""
    target = math.log(1 / alpha)
    for k in range(math.floor(bar * n) + 1, n + 1):
        if oracle_log_mixture(k, n, bar) >= target:
            return k
    return n + 1


def oracle_power(n: int, rate: float, bar: float, alpha: float = 0.025) -> float:
    k = oracle_threshold(n, bar, alpha)
    return float(binom.sf(k - 1, n, rate)) if k <= n else 0.0


def oracle_anytime_plan(rate: float, bar: float, power: float, upto: int = 600,
                        alpha: float = 0.025) -> int:
    """The n from which the single-look power of the anytime bound stays >= ``power``."""
    misses = [n for n in range(1, upto + 1) if oracle_power(n, rate, bar, alpha) < power]
    assert misses[-1] < upto // 2, "the oracle's scan is too short for this rate"
    return misses[-1] + 1
