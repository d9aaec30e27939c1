"""Statistics on proportions: the math behind every figure introspection reports.

Pure functions, standard library only, so the commands that need a bound or a
test (eval, split, status, certify, estimate) can use them without loading
anything else. ``docs/statistics.md`` explains each one and why it was chosen.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

#: The two-sided 95% normal quantile, Φ⁻¹(0.975).
Z_95 = 1.959963984540054


@dataclass(frozen=True, slots=True)
class Interval:
    """A proportion with its Wilson score interval; ``low <= value <= high``, all in [0, 1]."""

    value: float
    low: float
    high: float

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
    return Interval(value=p, low=low, high=high)


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value for ``b`` and ``c`` discordant pairs.

    Under "no change", each of the ``b + c`` rows that changed correctness is
    equally likely to have gone either way, so ``min(b, c)`` is
    Binomial(b + c, 1/2); the p-value doubles its lower tail, capped at 1.
    No discordant pairs gives 1.0 (no evidence of a change).
    """
    if b < 0 or c < 0:
        raise ValueError(f"discordant counts must be >= 0, got b={b}, c={c}")
    n = b + c
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, k) for k in range(min(b, c) + 1))
    # Exact integers until the one division, so large n neither overflows nor drifts.
    return min(1.0, 2 * tail / (1 << n))
