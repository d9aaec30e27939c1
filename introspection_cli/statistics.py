"""Statistics on proportions: the math behind every figure introspection reports.

Pure functions, standard library only, so the commands that need a bound or a
test (eval, split, status, certify, estimate) can use them without loading
anything else. ``docs/statistics.md`` explains each one and why it was chosen.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

#: The two-sided 95% normal quantile, Φ⁻¹(0.975).
Z_95 = 1.959963984540054


@dataclass(frozen=True, slots=True)
class Interval:
    """An estimate with its 95% interval, ``low <= value <= high``.

    A proportion (a Wilson interval, a corrected pass rate) lies in [0, 1]; a
    difference of two proportions (:func:`paired_difference`) in [-1, 1].
    """

    value: float
    low: float
    high: float

    def __post_init__(self) -> None:
        # Every interval the tool prints goes through here: an inverted or off-centre one
        # is a bug in the method that made it, caught where it is made, never printed.
        if not self.low <= self.value <= self.high:
            raise ValueError(f"an interval needs low <= value <= high, got {self.low!r} <= "
                             f"{self.value!r} <= {self.high!r}")

    def as_json(self) -> dict[str, float]:
        return {"value": self.value, "low": self.low, "high": self.high}


def wilson_interval(successes: int, n: int, z: float = Z_95) -> Interval | None:
    """The Wilson score interval for ``successes`` out of ``n``; ``None`` when ``n == 0``.

    Wilson rather than the textbook ``p ± z·sqrt(p(1-p)/n)``: on the small
    samples calibration sets have, the latter collapses to zero width at
    10/10 and can leave [0, 1]; Wilson does neither.
    """
    if n < 0 or not 0 <= successes <= n:
        raise ValueError(f"need 0 <= successes <= n, got successes={successes}, n={n}")
    if n == 0:
        return None
    p = successes / n
    z2 = z * z
    denominator = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denominator
    half_width = (z / denominator) * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    # Clamp: at p = 0 or 1 rounding can put a bound a hair on the wrong side of p.
    low = max(0.0, min(p, centre - half_width))
    high = min(1.0, max(p, centre + half_width))
    # n of n (0 of n) has the bound n / (n + z²) (z² / (n + z²)) exactly; the general form
    # subtracts two near-equal numbers there and loses digits on very many rows.
    if successes == n:
        low = n / (n + z2)
    if successes == 0:
        high = z2 / (n + z2)
    return Interval(value=p, low=low, high=high)


def wilson_lower(successes: float, n: int, z: float = Z_95) -> float:
    """The Wilson 95% lower bound of ``successes`` out of ``n`` (``n >= 1``).

    ``successes`` may be fractional: planning asks what bound a rate would give
    on ``n`` rows before those rows exist (``rate * n`` successes).
    """
    if n < 1 or not 0 <= successes <= n:
        raise ValueError(f"need n >= 1 and 0 <= successes <= n, got successes={successes}, n={n}")
    p = successes / n
    z2 = z * z
    if successes == n:  # n / (n + z²) exactly, as in wilson_interval
        return n / (n + z2)
    centre = p + z2 / (2 * n)
    half_width = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    return max(0.0, min(p, (centre - half_width) / (1 + z2 / n)))


#: Rows of one class no plan goes beyond: past a million rows the answer is "label far
#: more than anyone will", and the search stays bounded.
PLANNING_LIMIT = 1_000_000


def rows_to_reach(bar: float, rate: float = 1.0, z: float = Z_95) -> int | None:
    """The smallest n whose Wilson lower bound at ``rate`` (``rate * n`` of ``n``) is >= ``bar``.

    ``rate = 1`` is a judge that agrees on every row: for ``bar = 0.80`` that is 16
    (15 of 15 has lower bound 0.796, 16 of 16 has 0.806). ``None`` when no
    number of rows can reach the bar: the rate is not above it (the bound stays
    below the rate), or, for a rate below 1, more than :data:`PLANNING_LIMIT`
    rows would be needed. A judge agreeing on every row reaches any bar below 1.
    """
    if not 0.0 <= bar <= 1.0 or not 0.0 <= rate <= 1.0:
        raise ValueError(f"bar and rate must be in [0, 1], got bar={bar}, rate={rate}")
    if bar <= 0.0:
        return 1
    if rate <= bar:
        return None
    if rate >= 1.0:
        # n of n has lower bound n / (n + z²): the first n is z²·bar / (1 − bar), rounded
        # up, then settled against the bound itself (floating point), with no limit.
        n = max(1, math.ceil(z * z * bar / (1.0 - bar)))
        while n > 1 and wilson_lower(n - 1, n - 1, z) >= bar:
            n -= 1
        while wilson_lower(n, n, z) < bar:
            n += 1
        return n

    def reaches(n: int) -> bool:
        return wilson_lower(rate * n, n, z) >= bar

    if not reaches(PLANNING_LIMIT):
        return None
    # At a fixed rate the lower bound rises with n toward the rate, so the answer is
    # the first n that reaches: bisect between a miss and a hit.
    low, high = 0, PLANNING_LIMIT  # reaches(low) is False by convention, reaches(high) True
    while high - low > 1:
        middle = (low + high) // 2
        if reaches(middle):
            high = middle
        else:
            low = middle
    return high


def mcnemar_mid_p(b: int, c: int) -> float:
    """McNemar's mid-p value for ``b`` and ``c`` discordant pairs (two-sided).

    Under "no change", each of the ``b + c`` rows that changed correctness is
    equally likely to have gone either way, so ``min(b, c)`` is
    Binomial(b + c, 1/2). The exact test doubles its lower tail; the mid-p
    test counts the observed value itself only half (Fagerland, Lydersen and
    Laake 2013): ``2·P(X < k) + P(X = k)``, which is less conservative and
    closer to the nominal level on the small counts calibration sets give. No
    discordant pairs gives 1.0 (no evidence of a change).
    """
    if b < 0 or c < 0:
        raise ValueError(f"discordant counts must be >= 0, got b={b}, c={c}")
    n = b + c
    if n == 0:
        return 1.0
    k = min(b, c)
    below = sum(math.comb(n, i) for i in range(k))
    # Exact integers until the one division, so large n neither overflows nor drifts.
    return min(1.0, (2 * below + math.comb(n, k)) / (1 << n))


def holm_adjusted(p_values: Sequence[float]) -> list[float]:
    """Holm's (1979) step-down adjusted p-values of a family of tests, in the order given.

    The i-th smallest p-value of m is multiplied by m − i + 1 (capped at 1) and made
    no smaller than the adjusted value before it, so rejecting every test whose
    adjusted p-value is below α keeps the chance of any false rejection in the family
    at most α, whatever the tests' dependence (the baseline's three McNemar tests
    share rows). Uniformly more powerful than Bonferroni's m·p.
    """
    for p in p_values:
        if not 0.0 <= p <= 1.0:  # NaN fails this too
            raise ValueError(f"a p-value is between 0 and 1, got {p}")
    count = len(p_values)
    adjusted = [0.0] * count
    running = 0.0
    for rank, index in enumerate(sorted(range(count), key=lambda i: p_values[i])):
        running = max(running, min(1.0, (count - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted


def paired_difference(both: int, first_only: int, second_only: int, neither: int,
                      z: float = Z_95) -> Interval | None:
    """The 95% interval for p1 − p2 from paired data: Newcombe (1998), method 10.

    ``both`` pairs succeed in both measurements, ``first_only`` only in the
    first, ``second_only`` only in the second, ``neither`` in neither; p1 =
    (both + first_only)/n, p2 = (both + second_only)/n. Each marginal
    proportion gets its Wilson interval; the two are combined ("square and
    add") with the correlation between them, estimated with Newcombe's
    correction (phi from ad − bc, lowered by n/2 when positive). ``None``
    with no pairs.
    """
    counts = (both, first_only, second_only, neither)
    if min(counts) < 0:
        raise ValueError(f"paired counts must be >= 0, got {counts}")
    n = sum(counts)
    if n == 0:
        return None
    p1, p2 = (both + first_only) / n, (both + second_only) / n
    first = wilson_interval(both + first_only, n, z)
    second = wilson_interval(both + second_only, n, z)
    assert first is not None and second is not None  # n > 0
    margins = ((both + first_only) * (second_only + neither) * (both + second_only)
               * (first_only + neither))
    phi = 0.0
    if margins:
        cross = both * neither - first_only * second_only
        corrected = cross - n / 2 if cross > n / 2 else min(cross, 0)
        phi = corrected / math.sqrt(margins)
    below_1, above_1 = p1 - first.low, first.high - p1
    below_2, above_2 = p2 - second.low, second.high - p2
    # The radicands cannot go negative for |phi| <= 1; max() guards against rounding.
    delta = math.sqrt(max(0.0, below_1 ** 2 - 2 * phi * below_1 * above_2 + above_2 ** 2))
    epsilon = math.sqrt(max(0.0, above_1 ** 2 - 2 * phi * above_1 * below_2 + below_2 ** 2))
    difference = (first_only - second_only) / n  # = p1 - p2, without the rounding
    return Interval(difference, max(-1.0, difference - delta), min(1.0, difference + epsilon))


class NoBetterThanChance(ValueError):
    """TPR + TNR <= 1: the judge's verdicts carry no information about the true rate."""


def better_than_chance(tpr: float, tnr: float) -> bool:
    """TPR + TNR > 1: the judge passes good conversations more often than bad ones, so its
    pass rate says something about the true one (:func:`corrected_pass_rate` needs it)."""
    return tpr + tnr > 1.0


def _clip(value: float) -> float:
    return min(1.0, max(0.0, value))


def corrected_pass_rate(observed: float, observations: int, tpr: float, tnr: float,
                        pass_rows: int, fail_rows: int, z: float = Z_95) -> Interval:
    """The true pass rate behind an observed one, given the judge's TPR and TNR.

    The point estimate is Rogan and Gladen's (1978): θ = (p + TNR − 1)/(TPR + TNR − 1),
    clipped to [0, 1]. The interval is Lee et al.'s (2025, arXiv 2511.21140),
    which carries the uncertainty of all three measured rates: p over
    ``observations`` rows, TPR over ``pass_rows`` (m1) and TNR over
    ``fail_rows`` (m0) calibration rows, each shrunk toward 1/2 (add z²/2 to
    p's counts, one success and one failure to TPR's and TNR's), with a bias
    term and a delta-method standard error, clipped to [0, 1].

    The interval always holds the point estimate (it is widened to it when the
    bias-corrected interval does not). Raises :class:`NoBetterThanChance` when
    TPR + TNR <= 1, raw or shrunk, and ValueError on impossible inputs.
    """
    if observations < 1 or pass_rows < 1 or fail_rows < 1:
        raise ValueError("the observed rate and both calibration rates need at least one row "
                         f"each, got N={observations}, m1={pass_rows}, m0={fail_rows}")
    if not all(0.0 <= rate <= 1.0 for rate in (observed, tpr, tnr)):
        raise ValueError(f"rates must be in [0, 1], got p={observed}, tpr={tpr}, tnr={tnr}")
    if not better_than_chance(tpr, tnr):
        raise NoBetterThanChance(f"TPR + TNR = {tpr + tnr:.3f} <= 1")
    z2 = z * z
    p_shrunk = (observations * observed + z2 / 2) / (observations + z2)
    q0 = (fail_rows * tnr + 1) / (fail_rows + 2)
    q1 = (pass_rows * tpr + 1) / (pass_rows + 2)
    if q0 + q1 <= 1.0:
        # Shrunk toward 1/2, rates just above chance on unequal row counts can fall to it
        # or below: the interval would divide by zero or come out inverted.
        raise NoBetterThanChance(f"shrunk TPR {q1:.3f} + TNR {q0:.3f} <= 1")
    n_shrunk, m0_shrunk, m1_shrunk = observations + z2, fail_rows + 2, pass_rows + 2
    t = (p_shrunk + q0 - 1) / (q0 + q1 - 1)
    bias = 2 * z2 * (-(1 - t) * q0 * (1 - q0) / m0_shrunk + t * q1 * (1 - q1) / m1_shrunk)
    se = math.sqrt(p_shrunk * (1 - p_shrunk) / n_shrunk
                   + (1 - t) ** 2 * q0 * (1 - q0) / m0_shrunk
                   + t ** 2 * q1 * (1 - q1) / m1_shrunk) / (q0 + q1 - 1)
    point = _clip((observed + tnr - 1) / (tpr + tnr - 1))
    low, high = _clip(t + bias - z * se), _clip(t + bias + z * se)
    # The interval is centred on the shrunk, bias-corrected rate, the point on the raw
    # one; where the point is clipped they can part. Widened to it, never narrowed.
    return Interval(point, min(low, point), max(high, point))


def chi_square_sf(statistic: float, df: int) -> float:
    """P(X >= ``statistic``) for X chi-square with ``df`` (a whole number >= 1) degrees of freedom.

    The regularised upper incomplete gamma function Q(df/2, x/2) in closed form:
    for even df, ``e^(-x/2)·Σ_{i<df/2} (x/2)^i / i!``; for odd df, ``erfc(√(x/2))``
    plus the half-integer terms of the same series.
    """
    if df < 1 or statistic != statistic:
        raise ValueError(f"need df >= 1 and a number, got df={df}, statistic={statistic}")
    if statistic <= 0.0:
        return 1.0
    half = statistic / 2
    if df % 2 == 0:
        term, total = 1.0, 1.0
        for i in range(1, df // 2):
            term *= half / i
            total += term
        return min(1.0, math.exp(-half) * total)
    total = math.erfc(math.sqrt(half))
    term = math.sqrt(half) / math.gamma(1.5)  # (x/2)^(1/2) / Γ(3/2)
    for i in range(1, (df + 1) // 2):
        total += math.exp(-half) * term
        term *= half / (i + 0.5)
    return min(1.0, total)


@dataclass(frozen=True, slots=True)
class Homogeneity:
    """Pearson's chi-square test that two samples come from one distribution over categories."""

    statistic: float
    df: int
    p_value: float


def homogeneity_test(first: Sequence[int], second: Sequence[int]) -> Homogeneity | None:
    """Do two samples' counts over the same categories differ beyond chance?

    Pearson's chi-square on the 2 x k table (categories empty in both are left
    out), df = k − 1. ``None`` when either sample is empty or only one category
    is used (nothing to compare).
    """
    if len(first) != len(second) or min(*first, *second) < 0:
        raise ValueError(f"need two count lists of one length, got {first} and {second}")
    columns = [(a, b) for a, b in zip(first, second, strict=True) if a + b > 0]
    n1, n2 = sum(a for a, _ in columns), sum(b for _, b in columns)
    if n1 == 0 or n2 == 0 or len(columns) < 2:
        return None
    total = n1 + n2
    statistic = 0.0
    for a, b in columns:
        for observed, size in ((a, n1), (b, n2)):
            expected = size * (a + b) / total
            statistic += (observed - expected) ** 2 / expected
    df = len(columns) - 1
    return Homogeneity(statistic, df, chi_square_sf(statistic, df))
