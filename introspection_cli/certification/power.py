"""Plans with power: how many test rows make a certificate likely, not merely possible.

The floor (16 rows of each class at 0.80) is what a judge that agrees on every
row needs. A real judge at rate r on n rows is certified when its Wilson lower
bound reaches the bar, which happens with probability

    power(n) = P(X >= k*(n)),   X ~ Binomial(n, r),

k*(n) being the fewest agreeing rows whose lower bound reaches the bar. That is
computed exactly here (no normal approximation), and it saw-tooths: each time
k*(n) steps up, power drops. So a plan is the n **from which** power stays at
least the target at that n and every larger one (checked over the next n rows
or more), not the first n that touches it: at 0.95 the first n with 80% power
for both classes together is 47, the plan 54.

Both classes must reach the bar, independently, so each gets power
``target ** (1/2)`` (0.894 for 0.80): together at least the target, at the plan
and any larger number of rows of either class. The rate planned at is shrunk
(:func:`shrunk_rate`: the 20th percentile of the Beta(½, ½) posterior of the dev
figures), because a dev rate that looks good is more often lucky than not.

Standard library only: ``judges status`` plans on every run and must stay as
fast as ``check``; ``judges plan`` reuses these functions.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from introspection_cli.statistics import Z_95, wilson_interval

#: The chance of a certificate a plan is made for, both classes together.
PLAN_POWER = 0.8
#: The posterior quantile a dev rate is shrunk to before planning.
SHRINK_QUANTILE = 0.2
#: No plan goes past this many test rows of one class: "more than that" is the answer.
PLAN_LIMIT = 10_000
#: The rate a plan assumes when nothing has been measured (``judges plan``'s default).
ASSUMED_RATE = 0.9
#: The share of new labels that reach ``test`` at the default split ratios 20:40:40.
DEFAULT_TEST_SHARE = 0.4
DEFAULT_DEV_TRAIN_SHARE = {"dev": 0.4, "train": 0.2}


def regularized_beta(x: float, a: float, b: float) -> float:
    """I_x(a, b), the Beta(a, b) distribution function at ``x`` (a continued fraction)."""
    if not (a > 0 and b > 0):
        raise ValueError(f"Beta parameters must be positive, got a={a}, b={b}")
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = (a * math.log(x) + b * math.log1p(-x)
                 + math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b))
    # The fraction converges fast on the side of the mean it is evaluated on.
    if x < (a + 1) / (a + b + 2):
        return math.exp(log_front) * _beta_fraction(x, a, b) / a
    return 1.0 - math.exp(log_front) * _beta_fraction(1.0 - x, b, a) / b


def _beta_fraction(x: float, a: float, b: float) -> float:
    """The continued fraction of I_x(a, b), by the modified Lentz method."""
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    fraction = d
    for m in range(1, 500):
        for numerator in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                          -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            fraction *= c * d
        if abs(c * d - 1.0) < 1e-15:
            break
    return fraction


def beta_quantile(q: float, a: float, b: float) -> float:
    """The ``q`` quantile of Beta(a, b), by bisection on :func:`regularized_beta`."""
    if not 0.0 < q < 1.0:
        raise ValueError(f"a quantile needs 0 < q < 1, got {q}")
    low, high = 0.0, 1.0
    for _ in range(60):  # 2**-60: far below any difference a plan can see
        middle = (low + high) / 2
        if regularized_beta(middle, a, b) < q:
            low = middle
        else:
            high = middle
    return (low + high) / 2


def shrunk_rate(successes: int, n: int, quantile: float = SHRINK_QUANTILE) -> float:
    """The rate a plan assumes after ``successes`` of ``n``: the ``quantile`` of the
    Beta(successes + ½, n − successes + ½) posterior (Jeffreys' prior)."""
    if n < 0 or not 0 <= successes <= n:
        raise ValueError(f"need 0 <= successes <= n, got successes={successes}, n={n}")
    return beta_quantile(quantile, successes + 0.5, n - successes + 0.5)


def threshold(n: int, bar: float, z: float = Z_95) -> int:
    """k*(n): the fewest of ``n`` agreeing rows whose Wilson lower bound reaches ``bar``
    (``n + 1`` when even n of n does not). The same comparison as the certification."""
    k = min(n + 1, max(0, math.ceil(n * bar + z * math.sqrt(n * bar * (1 - bar)))))

    def reaches(successes: int) -> bool:
        interval = wilson_interval(successes, n, z)
        return interval is not None and interval.low >= bar

    # The score-test form above is exact but for rounding: settle it with the bound itself.
    while k <= n and not reaches(k):
        k += 1
    while k > 0 and reaches(k - 1):
        k -= 1
    return k


def _binomial_pmf(n: int, k: int, rate: float) -> float:
    if not 0 <= k <= n:
        return 0.0
    log_pmf = (math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
               + k * math.log(rate) + (n - k) * math.log1p(-rate))
    return math.exp(log_pmf)


#: (n, hint) -> k*(n), the fewest agreeing rows of n whose lower bound reaches the bar (hint:
#: k* of a nearby n). Wilson's (:func:`threshold`) unless a plan is for another bound.
Kstar = Callable[[int, "int | None"], int]


def power_curve(rate: float, bar: float, z: float = Z_95, *, start: int = 1,
                kstar: Kstar | None = None) -> Iterator[tuple[int, float]]:
    """``(n, P(certified on n rows at rate))`` for n = ``start``, ``start`` + 1, ...

    Exact: from one binomial tail, each next n costs O(1) (P_{n+1}(X >= k) =
    P_n(X >= k) + rate·P_n(X = k − 1); a step of k* removes P_n(X = k)).
    ``0 < rate < 1``. ``kstar``: the bound's k*(n) (default Wilson's at ``z``).
    """
    if not 0.0 < rate < 1.0:
        raise ValueError(f"the rate must be in (0, 1), got {rate}")
    k_of: Kstar = kstar or (lambda n, _: threshold(n, bar, z))
    n = max(1, start)
    k = k_of(n, None)
    tail, pmf = _tail_and_point(n, k, rate)
    odds = rate / (1 - rate)
    while True:
        yield n, min(1.0, max(0.0, tail))
        tail += rate * pmf
        pmf *= (n + 1) / (n + 2 - k) * (1 - rate)  # P_{n+1}(X = k - 1); k <= n + 1
        n += 1
        step = k_of(n, k)
        if step < k:  # k* fell (no bound here does, but nothing else would be exact)
            k = step
            tail, pmf = _tail_and_point(n, k, rate)
        while k < step:
            pmf *= (n - k + 1) / k * odds  # now P_n(X = k)
            tail -= pmf
            k += 1


def _tail_and_point(n: int, k: int, rate: float) -> tuple[float, float]:
    """(P_n(X >= k), P_n(X = k - 1)) for X ~ Binomial(n, rate)."""
    return (math.fsum(_binomial_pmf(n, j, rate) for j in range(k, n + 1)),
            _binomial_pmf(n, k - 1, rate))


def power_at(n: int, rate: float, bar: float, z: float = Z_95) -> float:
    """P(the Wilson lower bound of Binomial(n, rate) successes of n reaches ``bar``)."""
    if rate >= 1.0:
        return 1.0 if threshold(n, bar, z) <= n else 0.0
    if rate <= 0.0:
        return 1.0 if threshold(n, bar, z) == 0 else 0.0
    return next(power_curve(rate, bar, z, start=n))[1]


def rows_for_power(rate: float, bar: float, power: float, z: float = Z_95,
                   limit: int = PLAN_LIMIT, *, kstar: Kstar | None = None,
                   floor: int | None = None) -> int | None:
    """The n from which P(certified) >= ``power`` at n and every larger n (checked up to
    at least twice n); None when the rate is not above the bar or past ``limit`` rows.
    ``kstar`` and ``floor``: the bound's k*(n) and n-of-n floor (default Wilson's)."""
    if not 0.0 < power < 1.0:
        raise ValueError(f"the power must be in (0, 1), got {power}")
    if rate <= bar:
        return None
    if kstar is None:
        floor = threshold_floor(bar, z)
    if floor is None or floor > limit:
        return None
    if rate >= 1.0:
        return floor
    candidate: int | None = None
    for n, chance in power_curve(rate, bar, z, start=floor, kstar=kstar):
        if chance < power:
            candidate = None
            if n > limit:
                return None
        elif candidate is None:
            candidate = n
        if candidate is not None and n >= 2 * candidate + 64:
            return candidate if candidate <= limit else None
    raise AssertionError("unreachable: the curve is endless")  # pragma: no cover


def threshold_floor(bar: float, z: float = Z_95) -> int:
    """The fewest rows whose n-of-n lower bound reaches ``bar`` (16 at 0.80)."""
    n = max(1, math.floor(z * z * bar / (1 - bar)))  # n/(n + z²) >= bar, less rounding
    while n > 1 and threshold(n - 1, bar, z) <= n - 1:
        n -= 1
    while threshold(n, bar, z) > n:
        n += 1
    return n


@dataclass(frozen=True, slots=True)
class ClassPlan:
    """One class's part of a plan: test rows needed at ``rate``, how many the split holds."""

    label: str
    rate: float
    rows: int | None  # None: the bar is out of reach at this rate (or past PLAN_LIMIT)
    held: int

    @property
    def more(self) -> int | None:
        return None if self.rows is None else max(0, self.rows - self.held)

    def as_json(self) -> dict[str, Any]:
        return {"rate": self.rate, "rows": self.rows, "held": self.held, "more": self.more}


@dataclass(frozen=True, slots=True)
class PowerPlan:
    """Test rows per class for ``power`` together, and the labels that takes."""

    bar: float
    power: float
    classes: Mapping[str, ClassPlan]
    test_share: float
    #: label -> its share of the labelled rows (new labels are assumed to come alike).
    class_mix: Mapping[str, float]
    #: Labels to collect, and about how many of them reach ``test``; None when a class
    #: out of reach or absent from the labels so far makes it unknowable.
    labels: int | None
    reach_test: int | None
    #: The bound the plan is for (``wilson``, or the anytime-valid one after earlier looks).
    bound: str = "wilson"

    def as_json(self) -> dict[str, Any]:
        return {"bar": self.bar, "power": self.power, "bound": self.bound,
                "classes": {label: plan.as_json() for label, plan in self.classes.items()},
                "test_share": self.test_share, "class_mix": dict(self.class_mix),
                "labels": self.labels, "reach_test": self.reach_test}


def plan_with_power(rates: Mapping[str, float], held: Mapping[str, int], *, bar: float,
                    test_share: float, class_mix: Mapping[str, float],
                    power: float = PLAN_POWER, z: float = Z_95, kstar: Kstar | None = None,
                    floor: int | None = None, bound: str = "wilson") -> PowerPlan:
    """Per class of ``rates`` (label -> the rate to plan at), the test rows from which the
    chance that every class reaches ``bar`` is at least ``power``; and the labels to
    collect for the missing ones at ``test_share`` of labels reaching test. ``kstar``,
    ``floor``: another bound's (named ``bound``) instead of Wilson's at ``z``."""
    per_class = power ** (1 / len(rates))
    classes = {label: ClassPlan(label, rate, rows_for_power(rate, bar, per_class, z,
                                                            kstar=kstar, floor=floor),
                                held.get(label, 0)) for label, rate in rates.items()}
    labels, reach = labels_to_collect({label: plan.more for label, plan in classes.items()},
                                      test_share, class_mix)
    return PowerPlan(bar, power, classes, test_share, dict(class_mix), labels, reach, bound)


def labels_to_collect(more: Mapping[str, int | None], test_share: float,
                      class_mix: Mapping[str, float]) -> tuple[int | None, int | None]:
    """How many new labels put ``more[label]`` new rows of each class into ``test``, when
    ``test_share`` of them reach test and they come in ``class_mix``; and how many of them
    reach test. ``(None, None)`` when a count is unknown or a class never comes."""
    if any(count is None for count in more.values()) or not 0 < test_share <= 1:
        return None, None
    wanted = {label: count for label, count in more.items() if count}
    if not wanted:
        return 0, 0
    if any(class_mix.get(label, 0.0) <= 0 for label in wanted):
        return None, None
    labels = max(math.ceil(count / (test_share * class_mix[label]) - 1e-9)
                 for label, count in wanted.items() if count is not None)
    return labels, round(labels * test_share)


#: Table = split -> label -> labelled rows (``unsplit`` for rows without a split).
Table = Mapping[str, Mapping[str, int]]
_LABELS = ("pass", "fail", "not_applicable")


def share_reaching(table: Table, split: str = "test") -> float:
    """The share of labelled rows with a split that are in ``split``: where new labels go
    at the ratios used so far (for ``test``, :data:`DEFAULT_TEST_SHARE` before any split)."""
    held = sum(table.get(s, {}).get(label, 0) for label in _LABELS
               for s in ("train", "dev", "test"))
    chosen = sum(table.get(split, {}).get(label, 0) for label in _LABELS)
    if held and chosen:
        return chosen / held
    return DEFAULT_TEST_SHARE if split == "test" else DEFAULT_DEV_TRAIN_SHARE[split]


def class_mix(table: Table) -> dict[str, float]:
    """label -> its share of the labelled rows (half pass, half fail before any label)."""
    labelled = {label: sum(row.get(label, 0) for row in table.values()) for label in _LABELS}
    total = sum(labelled.values())
    if not total:
        return {"pass": 0.5, "fail": 0.5, "not_applicable": 0.0}
    return {label: count / total for label, count in labelled.items()}


def describe_plan(power: PowerPlan, sources: Mapping[str, str], split: str = "test"
                  ) -> list[str]:
    """The plan with power in words (``sources``: label -> where its rate comes from)."""
    per_class = []
    for label, plan in power.classes.items():
        at = f"at {plan.rate:.3f} ({sources[label]})"
        if plan.rows is None:
            per_class.append(f"{label}: out of reach {at}: no number of rows would do, the "
                             "rubric has to improve")
        else:
            per_class.append(f"{plan.rows} {label} {at}, {plan.more} more")
    bound = "" if power.bound == "wilson" else (
        " with the anytime-valid bound (these rows were looked at before)")
    lines = [f"to be certified with probability {power.power:.0%}{bound}: "
             + "; ".join(per_class)]
    if power.labels:
        lines.append(f"label about {power.labels} more rows; at your split ratios about "
                     f"{power.reach_test} reach {split} ({power.test_share:.0%} of labelled rows "
                     f"with a split are in {split})")
    elif power.labels == 0:
        lines.append("the split holds enough rows of each class for that")
    return lines
