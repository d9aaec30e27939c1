"""Certifying several judges at once without multiplying the chance of a wrong certificate.

Each judge's decision is a test: "its TPR (and its TNR) is at or above the
bar", at one-sided level alpha (0.025). A judge is certified when *both* of its
bounds reach the bar, so its chance of being certified while either true rate
is below the bar is at most alpha: the per-judge level is the per-statistic
level. Ten judges each tested at 0.025 are, together, wrongly certified up to
1 − 0.975¹⁰ ≈ 22% of the time when all sit at the bar.

``--family-wise bonferroni`` tests each of m judges at alpha/m; ``holm`` steps
down (Holm 1979): judges ordered by p-value, the i-th (from 0) at alpha/(m − i),
stopping at the first that is not certified. Either keeps the chance of any
wrong certificate among the m at or below alpha; Holm certifies at least as
many. A judge's p-value is that of its weakest bound: the largest one-sided
score-test p-value of its conditions (the Wilson bound is the inversion of
that test, so the bound at level a reaches the bar exactly when p <= a); for a
judge certified with the anytime-valid bound (earlier looks at its test rows),
that bound's own p-value (:func:`.sequential.p_value`), for the same reason.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from introspection_cli.certification import sequential
from introspection_cli.certification.bounds import WILSON
from introspection_cli.certification.decision import Certification

METHODS = ("holm", "bonferroni")


def score_p_value(successes: int, n: int, bar: float) -> float:
    """One-sided p-value of "rate <= bar" against "rate > bar" (the score test)."""
    if n == 0:
        return 1.0
    statistic = (successes / n - bar) / math.sqrt(bar * (1 - bar) / n)
    return 0.5 * math.erfc(statistic / math.sqrt(2))


def judge_p_value(decision: Certification) -> float:
    """The judge's p-value: its weakest condition's (1 when a condition is no test: too
    many errors, or a rate with no scorable row)."""
    if decision.decision == "insufficient_data" or (
            decision.rows and decision.errors / decision.rows > decision.max_error_rate):
        return 1.0
    rates = [decision.tpr, decision.tnr]
    bars = [decision.bar, decision.bar]
    if decision.bar_na is not None:
        rates.append(decision.na_recall)
        bars.append(decision.bar_na)
    if any(rate is None for rate in rates):
        return 1.0
    p_value = score_p_value if decision.bound is WILSON else sequential.p_value
    return max(p_value(rate.successes, rate.n, bar)
               for rate, bar in zip(rates, bars, strict=True) if rate is not None)


@dataclass(frozen=True, slots=True)
class Level:
    """The one-sided level one judge of a family is tested at, and its place in the order."""

    alpha: float
    rank: int  # 0 first (Holm: the smallest p-value); Bonferroni: every rank alike


def family_levels(p_values: Mapping[str, float], *, method: str,
                  alpha: float) -> dict[str, Level]:
    """judge -> the level it is tested at, for a family of ``len(p_values)`` judges."""
    if method not in METHODS:
        raise ValueError(f"unknown family-wise method {method!r}")
    m = len(p_values)
    order = sorted(p_values, key=lambda name: (p_values[name], name))
    if method == "bonferroni":
        return {name: Level(alpha / m, index) for index, name in enumerate(order)}
    return {name: Level(alpha / (m - index), index) for index, name in enumerate(order)}


def family_decisions(names: Sequence[str], decide_at: Callable[[str, float], Certification],
                     *, method: str, alpha: float) -> dict[str, Certification]:
    """Each judge's decision in a family of ``names``: ``decide_at(name, level)`` decides
    one judge at one level. Holm stops at the first judge of its order not certified at
    its level: no judge after it can be certified."""
    p_values = {name: judge_p_value(decide_at(name, alpha)) for name in names}
    levels = family_levels(p_values, method=method, alpha=alpha)
    decisions: dict[str, Certification] = {}
    stopped: str | None = None
    for name in sorted(names, key=lambda name: levels[name].rank):
        decision = decide_at(name, levels[name].alpha)
        if stopped is not None and decision.certified:
            decision = replace(decision, decision="not_certified", reasons=(
                f"holm: the step-down stopped at judge {stopped}, which was not certified at "
                "its level, so no judge after it in the order can be",))
        if method == "holm" and not decision.certified and stopped is None:
            stopped = name
        decisions[name] = decision
    return decisions
