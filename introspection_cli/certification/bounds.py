"""The bounds a rate is certified with, by the name a certificate records.

``wilson``: the Wilson bound, for the first look at a split's rows under a
procedure (a fixed-sample bound, as a single certification always was).
``beta-binomial``: the anytime-valid bound of :mod:`.sequential`, once the
exposure file shows earlier looks at those rows under the same procedure, so
that certifying after every labelling round keeps the level.

Each method gives the interval of a count, the fewest agreeing rows of n whose
lower bound reaches a bar (what plans are computed from) and the fewest rows a
judge agreeing on all of them needs. :func:`method_for` picks one from the
number of looks. Standard library only: ``check`` recomputes certificates with
these.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING

from introspection_cli.certification import sequential
from introspection_cli.statistics import Z_95, Interval, wilson_interval

if TYPE_CHECKING:
    from introspection_cli.certification.power import PowerPlan

#: The one-sided level of each lower bound by default: the lower end of a two-sided 95%
#: interval. A wrong certificate needs a bound above a true rate below the bar.
DEFAULT_ALPHA = 0.025
#: No number of rows past this is searched for a floor: "more than that" is the answer.
_FLOOR_LIMIT = 100_000


def z_for(alpha: float) -> float:
    """The normal quantile ``Φ⁻¹(1 − alpha)`` a one-sided level ``alpha`` puts the bound at."""
    if alpha == DEFAULT_ALPHA:
        return Z_95
    if not 0 < alpha < 0.5:
        raise ValueError(f"a one-sided level must be in (0, 0.5), got {alpha}")
    from statistics import NormalDist  # the standard library's; only for another level

    # Φ⁻¹(1 − α) as −Φ⁻¹(α): 1 − α rounds to 1 for a level below ~1e-17 (a hand-edited
    # certificate), where the quantile is undefined; α itself never rounds away.
    return -NormalDist().inv_cdf(alpha)


def _wilson(successes: int, n: int, alpha: float) -> Interval | None:
    return wilson_interval(successes, n, z_for(alpha))


# The plans' module is imported only by what plans: ``check`` recomputes bounds, never k*.
def _wilson_threshold(n: int, bar: float, alpha: float, _hint: int | None) -> int:
    from introspection_cli.certification.power import threshold

    return threshold(n, bar, z_for(alpha))


def _wilson_floor(bar: float, alpha: float) -> int | None:
    from introspection_cli.certification.power import threshold_floor

    return threshold_floor(bar, z_for(alpha)) if bar < 1.0 else None


#: (bar, alpha) -> n -> k*(n) of the anytime bound: a plan asks for both classes' n alike.
_ANYTIME_THRESHOLDS: dict[tuple[float, float], dict[int, int]] = {}


def _anytime_threshold(n: int, bar: float, alpha: float, hint: int | None) -> int:
    known = _ANYTIME_THRESHOLDS.setdefault((bar, alpha), {})
    if n not in known:
        known[n] = _anytime_search(n, bar, alpha, hint)
    return known[n]


def _anytime_search(n: int, bar: float, alpha: float, hint: int | None) -> int:
    def reaches(successes: int) -> bool:
        return sequential.reaches(successes, n, bar, alpha)

    if not reaches(n):
        return n + 1
    if hint is None:  # the bound rises with the count: bisect between a miss and a hit
        low, high = math.floor(bar * n), n
        while high - low > 1:
            middle = (low + high) // 2
            low, high = (low, middle) if reaches(middle) else (middle, high)
        return high
    k = min(max(hint, 0), n)  # a plan asks for n, n + 1, ...: the answer moves by a row
    while not reaches(k):
        k += 1
    while k > 0 and reaches(k - 1):
        k -= 1
    return k


@lru_cache(maxsize=64)
def _anytime_floor(bar: float, alpha: float) -> int | None:
    if not sequential.reaches(_FLOOR_LIMIT, _FLOOR_LIMIT, bar, alpha):
        return None
    low, high = 0, _FLOOR_LIMIT  # the n-of-n bound rises with n: bisect
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if sequential.reaches(middle, middle, bar, alpha) \
            else (middle, high)
    return high


@dataclass(frozen=True, eq=False)
class BoundMethod:
    """One way of bounding a rate: its name, what it is called in output, its fixed
    parameters (recorded in certificates), its interval, and the counts plans need."""

    name: str
    #: "95% interval" reads "95% <label>" ("interval", "anytime-valid interval").
    label: str
    parameters: Mapping[str, str] | None
    bound: Callable[[int, int, float], Interval | None] = field(repr=False)
    #: (n, bar, alpha, hint) -> the fewest of n agreeing rows whose lower bound reaches
    #: bar (n + 1 when even n of n does not); hint: the answer for a nearby n.
    threshold_of: Callable[[int, float, float, int | None], int] = field(repr=False)
    floor_of: Callable[[float, float], int | None] = field(repr=False)

    def interval(self, successes: int, n: int, alpha: float) -> Interval | None:
        """The rate ``successes / n`` with its interval, each end at one-sided ``alpha``."""
        return self.bound(successes, n, alpha)

    def interval_name(self, alpha: float) -> str:
        """``95% interval`` at the default level; else the two-sided level it is the end of."""
        return f"{100 * (1 - 2 * alpha):.4g}% {self.label}"

    def threshold(self, n: int, bar: float, alpha: float, hint: int | None = None) -> int:
        """The fewest of ``n`` agreeing rows whose lower bound reaches ``bar`` (``n + 1``
        when even n of n does not)."""
        return self.threshold_of(n, bar, alpha, hint)

    def floor(self, bar: float, alpha: float) -> int | None:
        """The fewest rows whose n-of-n lower bound reaches ``bar`` (a judge agreeing on
        every row); None past a hundred thousand rows."""
        return self.floor_of(bar, alpha)


WILSON = BoundMethod("wilson", "interval", None, _wilson, _wilson_threshold, _wilson_floor)
ANYTIME = BoundMethod(sequential.METHOD, "anytime-valid interval", sequential.PARAMETERS,
                      sequential.interval, _anytime_threshold, _anytime_floor)
#: Every method a certificate may name, by name.
METHODS: Mapping[str, BoundMethod] = {method.name: method for method in (WILSON, ANYTIME)}


def method_for(looks: int) -> BoundMethod:
    """The bound for a look at a split's rows that is the ``looks``-th under its procedure:
    Wilson for the first, the anytime-valid bound once there were earlier ones."""
    return WILSON if looks <= 1 else ANYTIME


def plan_for(method: BoundMethod, rates: Mapping[str, float], held: Mapping[str, int], *,
             bar: float, alpha: float, test_share: float, class_mix: Mapping[str, float],
             power: float | None = None) -> PowerPlan:
    """:func:`.power.plan_with_power` for a certification with ``method`` at ``alpha``
    (``power``: the plans' default, 80%, when None)."""
    from introspection_cli.certification.power import PLAN_POWER, plan_with_power

    def kstar(n: int, hint: int | None) -> int:
        return method.threshold(n, bar, alpha, hint)

    return plan_with_power(rates, held, bar=bar, test_share=test_share, class_mix=class_mix,
                           power=PLAN_POWER if power is None else power, z=z_for(alpha),
                           kstar=kstar,
                           floor=method.floor(bar, alpha), bound=method.name)
