"""The certification decision: certified, not certified, or insufficient data.

Pure functions over the outcomes of one split. With TPR and TNR and their
Wilson 95% intervals:

* **certified** when both lower bounds are at least the bar and the error rows
  are at most ``max_error_rate`` of the rows (and, with ``bar_na``, the lower
  bound of ``na_recall`` reaches it too);
* **insufficient data** when the split holds too few ``pass`` or ``fail`` rows
  for even a judge that agrees on every one of them to reach the bar (the
  smallest n whose n-of-n lower bound reaches it: 16 at 0.80), with how many
  more of each are needed;
* **not certified** otherwise, naming each bound that missed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from introspection_cli.evaluation.outcomes import RowOutcome
from introspection_cli.statistics import Interval, rows_to_reach, wilson_interval

Decision = Literal["certified", "not_certified", "insufficient_data"]
#: The classes certification needs enough of, and the rate each one measures.
CLASSES: Mapping[str, str] = {"pass": "tpr", "fail": "tnr"}


@dataclass(frozen=True, slots=True)
class Rate:
    """A rate over ``n`` non-error rows with its Wilson 95% interval."""

    interval: Interval
    n: int

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
    #: label -> more rows of it needed before a perfect judge could reach the bar.
    needed: Mapping[str, int] = field(default_factory=dict)
    #: Why it is not certified, one sentence each.
    reasons: tuple[str, ...] = ()

    @property
    def certified(self) -> bool:
        return self.decision == "certified"


def rows_needed(labelled: Mapping[str, int], bar: float) -> dict[str, int]:
    """For ``pass`` and ``fail``: how many more labelled rows a perfect judge would need."""
    floor = rows_to_reach(bar)
    if floor is None:  # a bar of 1 (or one the planning limit cannot reach)
        raise ValueError(f"no number of rows reaches a bar of {bar:g}")
    return {label: max(0, floor - labelled.get(label, 0)) for label in CLASSES}


def insufficient(labelled: Mapping[str, int], bar: float) -> Certification | None:
    """The ``insufficient_data`` decision when the rows cannot reach the bar, else None.

    Decided from the labels alone, so a split that cannot be certified costs no call.
    """
    needed = rows_needed(labelled, bar)
    if not any(needed.values()):
        return None
    return Certification("insufficient_data", bar, 0.0, sum(labelled.values()), 0, None, None,
                         None, dict(labelled), needed, (_needed_sentence(labelled, needed, bar),))


def rejected_rows(labelled: Mapping[str, int], bar: float,
                  lines: Sequence[int]) -> Certification:
    """``not_certified`` from the file alone: rows of it are rejected. A rejected row's
    split cannot be trusted, so it may be one of this split's, with a label nobody can
    check: no decision rests on the file until it is fixed."""
    shown = ", ".join(map(str, lines[:10])) + (", ..." if len(lines) > 10 else "")
    reason = (f"{len(lines)} calibration row(s) rejected (lines {shown}): a rejected row may "
              "belong to this split, so no decision rests on the file until they are fixed "
              "(`introspection check` lists them)")
    return Certification("not_certified", bar, 0.0, sum(labelled.values()), 0, None, None,
                         None, dict(labelled), rows_needed(labelled, bar), (reason,))


def _needed_sentence(labelled: Mapping[str, int], needed: Mapping[str, int], bar: float) -> str:
    floor = rows_to_reach(bar)
    short = " and ".join(f"{count} more {label}" for label, count in needed.items() if count)
    return (f"the split holds {labelled.get('pass', 0)} pass and {labelled.get('fail', 0)} fail "
            f"rows; even a judge that agrees on all of them needs {floor} of each to reach "
            f"the bar {bar:g}: label {short} rows")


def _rate(rows: Sequence[RowOutcome], label: str, agreeing: tuple[str, ...]) -> Rate | None:
    scored = [row for row in rows if row.expected == label and row.outcome != "error"]
    interval = wilson_interval(sum(row.outcome in agreeing for row in scored), len(scored))
    return None if interval is None else Rate(interval, len(scored))


def decide(rows: Sequence[RowOutcome], *, bar: float, max_error_rate: float,
           bar_na: float | None = None) -> Certification:
    """The decision over ``rows`` (every labelled row of the split, error rows included)."""
    labelled = {label: sum(row.expected == label for row in rows)
                for label in ("pass", "fail", "not_applicable")}
    early = insufficient(labelled, bar)
    if early is not None:
        return early
    errors = sum(row.outcome == "error" for row in rows)
    tpr, tnr = _rate(rows, "pass", ("pass",)), _rate(rows, "fail", ("fail",))
    na_recall = _rate(rows, "not_applicable", ("not_applicable", "gated"))
    reasons = [_missed(name, rate, bar) for name, rate in (("tpr", tpr), ("tnr", tnr))
               if rate is None or rate.interval.low < bar]
    if bar_na is not None and (na_recall is None or na_recall.interval.low < bar_na):
        reasons.append(_missed("na_recall", na_recall, bar_na, "--bar-na"))
    rate = errors / len(rows) if rows else 0.0
    if rate > max_error_rate:
        reasons.append(f"{errors} of {len(rows)} rows are errors ({rate:.3f}), above "
                       f"--max-error-rate {max_error_rate:g}")
    return Certification("not_certified" if reasons else "certified", bar, max_error_rate,
                         len(rows), errors, tpr, tnr, na_recall, labelled,
                         rows_needed(labelled, bar), tuple(reasons))


def _missed(name: str, rate: Rate | None, bar: float, flag: str = "the bar") -> str:
    if rate is None:
        return f"{name} is null: every row it needs is an error"
    interval = rate.interval
    return (f"{name} is {interval.value:.3f} over {rate.n} rows with 95% interval "
            f"{interval.low:.3f}–{interval.high:.3f}; its lower bound is below {flag} {bar:g}")
