"""The certification decision: certified, not certified, or insufficient data.

Pure functions over the outcomes of one split. With TPR and TNR and their
Wilson intervals at the one-sided level ``alpha`` (0.025 by default: the lower
end of the two-sided 95% interval):

* **certified** when both lower bounds are at least the bar and the error rows
  are at most ``max_error_rate`` of the rows (and, with ``bar_na``, the lower
  bound of ``na_recall`` reaches it too);
* **insufficient data** when the split holds too few *scorable* ``pass`` or
  ``fail`` rows (error rows left out: they measure nothing) for even a judge
  that agrees on every one of them to reach the bar (the smallest n whose
  n-of-n lower bound reaches it: 16 at 0.80), with how many more of each are
  needed;
* **not certified** otherwise, naming each bound that missed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from introspection_cli.certification.bounds import DEFAULT_ALPHA as DEFAULT_ALPHA
from introspection_cli.certification.bounds import WILSON, BoundMethod
from introspection_cli.certification.bounds import z_for as z_for
from introspection_cli.evaluation.outcomes import RowOutcome
from introspection_cli.statistics import Interval

Decision = Literal["certified", "not_certified", "insufficient_data"]
#: The classes certification needs enough of, and the rate each one measures.
CLASSES: Mapping[str, str] = {"pass": "tpr", "fail": "tnr"}
LABELS = ("pass", "fail", "not_applicable")


@dataclass(frozen=True, slots=True)
class Rate:
    """A rate over ``n`` non-error rows with its interval (``successes`` of ``n``)."""

    interval: Interval
    n: int
    successes: int

    def as_json(self) -> dict[str, Any]:
        return {**self.interval.as_json(), "n": self.n}


@dataclass(frozen=True)
class Certification:
    """The decision on one split and everything it was made from."""

    decision: Decision
    bar: float
    max_error_rate: float
    rows: int  # labelled rows of the split
    errors: int
    tpr: Rate | None
    tnr: Rate | None
    na_recall: Rate | None
    #: label -> rows of it the split holds (error rows included).
    labelled: Mapping[str, int]
    #: label -> rows of it that are not errors (what the rates are measured on).
    scorable: Mapping[str, int] = field(default_factory=dict)
    #: label -> more scorable rows of it before a perfect judge could reach the bar.
    needed_perfect: Mapping[str, int] = field(default_factory=dict)
    #: Why it is not certified, one sentence each.
    reasons: tuple[str, ...] = ()
    alpha: float = DEFAULT_ALPHA
    bar_na: float | None = None
    #: How the bounds were computed (Wilson, or the anytime-valid bound after earlier looks).
    bound: BoundMethod = WILSON

    @property
    def certified(self) -> bool:
        return self.decision == "certified"


def rows_needed(scorable: Mapping[str, int], bar: float, alpha: float = DEFAULT_ALPHA,
                bound: BoundMethod = WILSON) -> dict[str, int]:
    """For ``pass`` and ``fail``: how many more scorable rows a perfect judge would need."""
    floor = bound.floor(bar, alpha)
    if floor is None:  # a bar of 1 (or one past the planning limit)
        raise ValueError(f"no number of rows reaches a bar of {bar:g}")
    return {label: max(0, floor - scorable.get(label, 0)) for label in CLASSES}


def insufficient(scorable: Mapping[str, int], bar: float, *, errors: int = 0,
                 alpha: float = DEFAULT_ALPHA, labelled: Mapping[str, int] | None = None,
                 bound: BoundMethod = WILSON) -> Certification | None:
    """The ``insufficient_data`` decision when the scorable rows cannot reach the bar, else
    None. Before a run every labelled row may be scorable, so a split that cannot be
    certified is known from the labels alone and costs no call."""
    needed = rows_needed(scorable, bar, alpha, bound)
    if not any(needed.values()):
        return None
    held = dict(labelled if labelled is not None else scorable)
    reason = _needed_sentence(scorable, needed, bar, errors, alpha, bound)
    return Certification("insufficient_data", bar, 0.0, sum(held.values()), errors, None, None,
                         None, held, dict(scorable), needed, (reason,), alpha, bound=bound)


def rejected_rows(labelled: Mapping[str, int], bar: float, lines: Sequence[int], *,
                  alpha: float = DEFAULT_ALPHA) -> Certification:
    """``not_certified`` from the file alone: rows of it are rejected. A rejected row's
    split cannot be trusted, so it may be one of this split's, with a label nobody can
    check: no decision rests on the file until it is fixed."""
    shown = ", ".join(map(str, lines[:10])) + (", ..." if len(lines) > 10 else "")
    reason = (f"{len(lines)} calibration row(s) rejected (lines {shown}): a rejected row may "
              "belong to this split, so no decision rests on the file until they are fixed "
              "(`introspection check` lists them)")
    return Certification("not_certified", bar, 0.0, sum(labelled.values()), 0, None, None,
                         None, dict(labelled), dict(labelled),
                         rows_needed(labelled, bar, alpha), (reason,), alpha)


def _needed_sentence(scorable: Mapping[str, int], needed: Mapping[str, int], bar: float,
                     errors: int, alpha: float, bound: BoundMethod) -> str:
    floor = bound.floor(bar, alpha)
    # Rows of this split, not labels: most new labels land in other splits (the plan says
    # how many to collect).
    short = " and ".join(f"{count} {label}" for label, count in needed.items() if count)
    held = (f"{scorable.get('pass', 0)} scorable pass and {scorable.get('fail', 0)} scorable "
            f"fail rows ({errors} error row{'s' if errors != 1 else ''} left out)" if errors
            else f"{scorable.get('pass', 0)} pass and {scorable.get('fail', 0)} fail rows")
    level = "" if alpha == DEFAULT_ALPHA else f" at one-sided level {alpha:.4g}"
    if bound is not WILSON:
        level += (" with the anytime-valid bound (its test rows were looked at before under "
                  "this procedure)")
    return (f"the split holds {held}; even a judge that agrees on all of them needs {floor} "
            f"of each to reach the bar {bar:g}{level}: the split is short of {short} rows")


def _rate(rows: Sequence[RowOutcome], label: str, agreeing: tuple[str, ...],
          bound: BoundMethod, alpha: float) -> Rate | None:
    scored = [row for row in rows if row.expected == label and row.outcome != "error"]
    successes = sum(row.outcome in agreeing for row in scored)
    interval = bound.interval(successes, len(scored), alpha)
    return None if interval is None else Rate(interval, len(scored), successes)


def decide(rows: Sequence[RowOutcome], *, bar: float, max_error_rate: float,
           bar_na: float | None = None, alpha: float = DEFAULT_ALPHA,
           bound: BoundMethod = WILSON) -> Certification:
    """The decision over ``rows`` (every labelled row of the split, error rows included),
    each bound at the one-sided level ``alpha``, computed with ``bound`` (Wilson for a
    first look, the anytime-valid bound after earlier looks)."""
    labelled = {label: sum(row.expected == label for row in rows) for label in LABELS}
    scorable = {label: sum(row.expected == label and row.outcome != "error" for row in rows)
                for label in LABELS}
    errors = sum(row.outcome == "error" for row in rows)
    tpr = _rate(rows, "pass", ("pass",), bound, alpha)
    tnr = _rate(rows, "fail", ("fail",), bound, alpha)
    na_recall = _rate(rows, "not_applicable", ("not_applicable", "gated"), bound, alpha)
    early = insufficient(scorable, bar, errors=errors, alpha=alpha, labelled=labelled,
                         bound=bound)
    if early is not None:
        # Too few rows to decide, but the run measured what it measured: the figures are
        # printed and the plan is made from them.
        return replace(early, max_error_rate=max_error_rate, tpr=tpr, tnr=tnr,
                       na_recall=na_recall, bar_na=bar_na)
    reasons = [_missed(name, rate, bar, alpha, bound) for name, rate in
               (("tpr", tpr), ("tnr", tnr)) if rate is None or rate.interval.low < bar]
    if bar_na is not None and (na_recall is None or na_recall.interval.low < bar_na):
        reasons.append(_missed("na_recall", na_recall, bar_na, alpha, bound, "--bar-na",
                               "not_applicable", labelled["not_applicable"]))
    rate = errors / len(rows) if rows else 0.0
    if rate > max_error_rate:
        reasons.append(f"{errors} of {len(rows)} rows are errors ({rate:.3f}), above "
                       f"--max-error-rate {max_error_rate:g}")
    return Certification("not_certified" if reasons else "certified", bar, max_error_rate,
                         len(rows), errors, tpr, tnr, na_recall, labelled, scorable,
                         rows_needed(scorable, bar, alpha, bound), tuple(reasons), alpha,
                         bar_na, bound)


def interval_name(alpha: float) -> str:
    """``95% interval`` at the default level; else the two-sided level it is the end of."""
    return WILSON.interval_name(alpha)


def _missed(name: str, rate: Rate | None, bar: float, alpha: float, bound: BoundMethod,
            flag: str = "the bar", label: str = "", labelled: int = 1) -> str:
    if rate is None and not labelled:
        return f"{name} is null: no row of the split is labelled {label}, so {flag} {bar:g} " \
               "cannot be reached"
    if rate is None:
        return f"{name} is null: every row labelled {label} is an error" if label else \
            f"{name} is null: every row it needs is an error"
    interval = rate.interval
    return (f"{name} is {interval.value:.3f} over {rate.n} rows with "
            f"{bound.interval_name(alpha)} {interval.low:.3f}–{interval.high:.3f}; its lower "
            f"bound is below {flag} {bar:g}")
