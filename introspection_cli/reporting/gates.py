"""Gates on a report: the bars a judge must clear for ``judges eval`` to succeed.

Part of the report model layer: gates read the typed report, never a renderer.
Every gate compares one number with one bar and is listed in the report's
``gates``, met or not:

* ``--min-agreement``, ``--min-tpr``, ``--min-tnr`` compare the **lower bound**
  of the statistic's Wilson 95% interval with the bar (8 of 8 agreeing is
  0.676–1.000: it does not clear 0.85, however good 1.000 looks); agreement is
  applicable agreement, over rows labelled pass or fail, so a gate's hits on rows
  labelled not_applicable cannot clear it;
* ``--min-kappa`` compares kappa itself (it has no interval);
* ``--max-error-rate`` (always on, default 0.1) is a ceiling on the share of a
  judge's evaluated rows that are errors;
* every judge must have at least one judged row: an all-error (or all-gated)
  run measured nothing and is never a success.

A null statistic never clears a bar. Bars are inclusive.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from introspection_cli.errors import UsageError
from introspection_cli.reporting.metrics import REPORT_SPLITS, SCORED, SPLIT_ALIASES, SplitStats
from introspection_cli.reporting.report import (
    EvalReport,
    HeldOut,
    JSONObject,
    JudgeEntry,
    as_report,
)

#: ``--max-error-rate`` when not given.
DEFAULT_MAX_ERROR_RATE = 0.1

#: statistic -> (flag, which number is compared); ``low`` is the Wilson lower bound.
_LOWER_BOUND_GATES: Mapping[str, str] = {
    "agreement": "--min-agreement", "tpr": "--min-tpr", "tnr": "--min-tnr"}


@dataclass(frozen=True)
class GateSettings:
    """The bars of one run; None leaves a gate off."""

    min_agreement: float | None = None
    min_tpr: float | None = None
    min_tnr: float | None = None
    min_kappa: float | None = None
    max_error_rate: float = DEFAULT_MAX_ERROR_RATE
    #: The split the ``--min-*`` gates apply to; errors are always counted over ``scored``
    #: (every evaluated row). ``all``, its name before report version 3, is taken as it.
    split: str = SCORED

    def __post_init__(self) -> None:
        object.__setattr__(self, "split", SPLIT_ALIASES.get(self.split, self.split))

    def check(self) -> None:
        """UsageError for a split that does not exist or a bar that is not a number in range."""
        if self.split not in REPORT_SPLITS:
            raise UsageError(f"unknown --threshold-split {self.split!r}; use one of: "
                             f"{', '.join(REPORT_SPLITS)} (all is taken as scored)")
        bars = (("--min-agreement", self.min_agreement, 0.0), ("--min-tpr", self.min_tpr, 0.0),
                ("--min-tnr", self.min_tnr, 0.0), ("--min-kappa", self.min_kappa, -1.0),
                ("--max-error-rate", self.max_error_rate, 0.0))
        for flag, value, lowest in bars:
            # NaN passes every range check and no statistic is ever below it: a gate that
            # never shuts.
            if value is not None and not (math.isfinite(value) and lowest <= value <= 1.0):
                raise UsageError(f"{flag} {value} is not a number from {lowest:g} to 1; "
                                 "pass a value like 0.8")


@dataclass(frozen=True, slots=True)
class Gate:
    """One bar and what the judge reached; ``value`` is None when the statistic is null."""

    judge: str
    split: str
    statistic: str  # agreement, tpr, tnr, kappa, error_rate or judged
    bound: str  # "low" (the Wilson lower bound) or "value"
    bar: float
    value: float | None
    met: bool
    flag: str

    def as_json(self) -> dict[str, Any]:
        return {"judge": self.judge, "split": self.split, "statistic": self.statistic,
                "bound": self.bound, "bar": self.bar, "value": self.value, "met": self.met}

    @property
    def is_ceiling(self) -> bool:
        return self.statistic == "error_rate"


def evaluate_gates(report: EvalReport | JSONObject, settings: GateSettings) -> list[Gate]:
    """Every gate of every judge in ``report`` (the value or its JSON), in judge order."""
    return [gate for judge in as_report(report).judges for gate in judge_gates(judge, settings)]


def judge_gates(judge: JudgeEntry, settings: GateSettings) -> list[Gate]:
    """The gates of one judge's report entry."""
    name = judge.name
    stats = judge.splits[settings.split]
    scored = None if isinstance(stats, HeldOut) else stats
    gates: list[Gate] = []
    for statistic, flag in _LOWER_BOUND_GATES.items():
        bar = getattr(settings, f"min_{statistic}")
        if bar is not None:
            interval = None if scored is None else getattr(scored, statistic)
            low = None if interval is None else float(interval.low)
            gates.append(Gate(name, settings.split, statistic, "low", bar, low,
                              low is not None and low >= bar, flag))
    if settings.min_kappa is not None:
        kappa = None if scored is None else scored.kappa
        gates.append(Gate(name, settings.split, "kappa", "value", settings.min_kappa, kappa,
                          kappa is not None and kappa >= settings.min_kappa, "--min-kappa"))
    everything = judge.scored
    rate = everything.errors / everything.n if everything.n else None
    gates.append(Gate(name, SCORED, "error_rate", "value", settings.max_error_rate, rate,
                      rate is not None and rate <= settings.max_error_rate, "--max-error-rate"))
    gates.append(Gate(name, SCORED, "judged", "value", 1, everything.judged,
                      everything.judged >= 1, "a judged row"))
    return gates


def gate_failures(report: EvalReport | JSONObject, gates: Sequence[Gate]) -> list[str]:
    """One line per missed gate, saying what was reached and why it does not count."""
    splits = {judge.name: judge.splits for judge in as_report(report).judges}
    return [_failure(gate, splits[gate.judge][SPLIT_ALIASES.get(gate.split, gate.split)])
            for gate in gates if not gate.met]


def _failure(gate: Gate, stats: SplitStats | HeldOut) -> str:
    where = f"judge {gate.judge}"
    if isinstance(stats, HeldOut):  # only a --min-* gate's split can be held out
        return (f"{where}: {gate.statistic} on split {gate.split} is null "
                f"({_null_reason(gate.statistic, stats)}), which does not meet "
                f"{gate.flag} {gate.bar:g}")
    if gate.statistic == "judged":
        return (f"{where}: no row was judged ({stats.n} evaluated: {stats.errors} "
                f"error(s), {stats.gated} gated); a run that measured nothing is not a "
                "success")
    if gate.statistic == "error_rate":
        if gate.value is None:
            return f"{where}: no rows were evaluated, so there is no error rate to check"
        return (f"{where}: {stats.errors} of {stats.n} rows are errors "
                f"({gate.value:.3f}), above --max-error-rate {gate.bar:g}")
    subject = f"{gate.statistic} on split {gate.split}"
    if gate.value is None:
        return (f"{where}: {subject} is null ({_null_reason(gate.statistic, stats)}), "
                f"which does not meet {gate.flag} {gate.bar:g}")
    if gate.bound == "low":
        interval = getattr(stats, gate.statistic)
        return (f"{where}: {subject} is {interval.value:.3f} with 95% interval "
                f"{interval.low:.3f}–{interval.high:.3f}; its lower bound "
                f"{gate.value:.3f} is below {gate.flag} {gate.bar:g}")
    return f"{where}: {subject} is {gate.value:.3f}, below {gate.flag} {gate.bar:g}"


def _null_reason(statistic: str, stats: SplitStats | HeldOut) -> str:
    if isinstance(stats, HeldOut):
        return "the test split is held out: pass --split test"
    if stats.n == 0:
        return "no rows in this split"
    if stats.n == stats.errors:
        return "every row is an error"
    if statistic == "tpr":
        return "no non-error row is labelled pass"
    if statistic == "tnr":
        return "no non-error row is labelled fail"
    if statistic == "agreement":
        return "no non-error row is labelled pass or fail"
    if statistic == "kappa" and not stats.judged:
        return "no row was judged by the model; gated and error rows are not in kappa"
    if statistic == "kappa":
        return "every label and outcome is the same class, so kappa is undefined"
    return "no rows to score"
