"""When a candidate rubric is kept: the dev comparison and the keep rules, pure functions.

A candidate is compared with the current rubric on the ``dev`` rows scored
under both (a row that is an ``error`` under either has no verdict to compare;
rows are paired by conversation id and snapshot hash). It is kept only when
every rule below holds; each refusal names the rules that did not:

``gained-over-lost``
    More dev rows now agree with their label than stopped agreeing. Agreement
    here is the report's per-row rule (``gated`` agrees with
    ``not_applicable``), so rows labelled ``not_applicable`` count too.
``applicable-agreement-rises``
    Applicable agreement (:func:`applicable_agreement`: rows labelled ``pass``
    or ``fail`` only; any other outcome on them is a disagreement) is higher
    under the candidate, on the same paired rows.
``tpr-holds`` / ``tnr-holds``
    Neither class loses more than one row's worth: of the paired rows
    labelled ``pass`` (``fail``), at most one fewer has the outcome ``pass``
    (``fail``). An edit that buys agreement by collapsing one class fails here.
``tpr-holds-since-start`` / ``tnr-holds-since-start``
    The same bound against the rubric the run started from, once an edit has
    been kept (before that the current rubric is the start): on the dev rows
    scored under both, at most one fewer in each class is right. Per round
    alone, three kept edits could each give up one pass row and take TPR from
    3/3 to 0/3; the run as a whole gives up one row's worth at most.
``untargeted-flips``
    At most :data:`FLIP_LIMIT` of the untargeted rows change outcome. A dev
    row is *targeted* when the current rubric disagrees with its label (the
    rows an edit is meant to change); every other paired row is untargeted,
    and a change there is a side effect of the edit.
``no-new-errors``
    No dev row that the current rubric scored is an ``error`` under the
    candidate: an error leaves the comparison, so a rubric that made hard
    rows unanswerable would otherwise look better.

The counts are integers compared exactly; the mid-p McNemar test and the
Newcombe interval describe the change in applicable agreement and decide nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from introspection_cli.evaluation.outcomes import RowOutcome
from introspection_cli.statistics import (
    Interval,
    mcnemar_mid_p,
    paired_difference,
    wilson_interval,
)

#: The largest share of untargeted dev rows whose outcome a kept edit may change.
FLIP_LIMIT = 0.10
#: The labels applicable agreement is over.
APPLICABLE = ("pass", "fail")


def agrees(expected: str, outcome: str) -> bool:
    """Whether an outcome agrees with the label; ``gated`` agrees with ``not_applicable``."""
    return outcome == expected or (outcome == "gated" and expected == "not_applicable")


def applicable_agreement(rows: Iterable[RowOutcome]) -> Interval | None:
    """Agreement over the rows labelled ``pass`` or ``fail`` (Wilson 95% interval).

    A ``not_applicable``, ``gated`` or other-class outcome on such a row is a
    disagreement; ``error`` rows are left out; rows labelled
    ``not_applicable`` are not counted at all. ``None`` without such a row.
    """
    scored = [row for row in rows if row.expected in APPLICABLE and row.outcome != "error"]
    return wilson_interval(sum(row.outcome == row.expected for row in scored), len(scored))


@dataclass(frozen=True, slots=True)
class Tally:
    """How many of ``rows`` paired rows were right before (current) and after (candidate)."""

    before: int
    after: int
    rows: int

    def as_json(self) -> dict[str, int | float | None]:
        return {"before": self.before, "after": self.after, "rows": self.rows,
                "value_before": self.before / self.rows if self.rows else None,
                "value_after": self.after / self.rows if self.rows else None}


@dataclass(frozen=True, slots=True)
class DevComparison:
    """The current rubric against a candidate on the dev rows (see the module docstring)."""

    paired: int
    #: Dev rows of the current run left out: an error under either rubric, or not in
    #: the candidate's run.
    unpaired: int
    new_errors: int
    gained: int
    lost: int
    applicable: Tally
    tpr: Tally
    tnr: Tally
    targeted: int
    untargeted: int
    untargeted_flips: int
    #: Applicable rows right only under the candidate / only under the current rubric.
    improved: int
    regressed: int
    #: Mid-p McNemar p over the applicable paired rows.
    p_value: float
    #: Applicable agreement, candidate minus current, with Newcombe's 95% interval.
    difference: Interval | None

    def as_json(self) -> dict[str, Any]:
        return {"paired": self.paired, "unpaired": self.unpaired,
                "new_errors": self.new_errors, "gained": self.gained, "lost": self.lost,
                "applicable_agreement": self.applicable.as_json(),
                "tpr": self.tpr.as_json(), "tnr": self.tnr.as_json(),
                "targeted": self.targeted, "untargeted": self.untargeted,
                "untargeted_flips": self.untargeted_flips,
                "mcnemar": {"improved": self.improved, "regressed": self.regressed,
                            "p_value": self.p_value},
                "difference": None if self.difference is None else self.difference.as_json()}


def _key(row: RowOutcome) -> tuple[str, str | None]:
    return row.conversation_id, row.snapshot_hash


def compare_dev(current: Sequence[RowOutcome], candidate: Sequence[RowOutcome]) -> DevComparison:
    """Pair ``current`` and ``candidate`` dev outcomes and count what the rules need."""
    after = {_key(row): row for row in candidate}
    pairs = [(row, after[_key(row)]) for row in current if _key(row) in after]
    new_errors = sum(before.outcome != "error" and now.outcome == "error"
                     for before, now in pairs)
    scored = [(before, now) for before, now in pairs
              if "error" not in (before.outcome, now.outcome)]
    gained = sum(not agrees(b.expected, b.outcome) and agrees(n.expected, n.outcome)
                 for b, n in scored)
    lost = sum(agrees(b.expected, b.outcome) and not agrees(n.expected, n.outcome)
               for b, n in scored)
    untargeted = [(b, n) for b, n in scored if agrees(b.expected, b.outcome)]
    applicable = [(b, n) for b, n in scored if b.expected in APPLICABLE]
    right = [(b.outcome == b.expected, n.outcome == n.expected) for b, n in applicable]
    both = sum(was and now for was, now in right)
    improved = sum(now and not was for was, now in right)
    regressed = sum(was and not now for was, now in right)
    return DevComparison(
        paired=len(scored), unpaired=len(current) - len(scored),
        new_errors=new_errors, gained=gained, lost=lost,
        applicable=_tally(applicable), tpr=_tally(applicable, "pass"),
        tnr=_tally(applicable, "fail"), targeted=len(scored) - len(untargeted),
        untargeted=len(untargeted),
        untargeted_flips=sum(b.outcome != n.outcome for b, n in untargeted),
        improved=improved, regressed=regressed,
        p_value=mcnemar_mid_p(regressed, improved),
        difference=paired_difference(both, improved, regressed,
                                     len(right) - both - improved - regressed))


def _tally(pairs: Sequence[tuple[RowOutcome, RowOutcome]], label: str | None = None) -> Tally:
    chosen = [(b, n) for b, n in pairs if label is None or b.expected == label]
    return Tally(sum(b.outcome == b.expected for b, _ in chosen),
                 sum(n.outcome == n.expected for _, n in chosen), len(chosen))


@dataclass(frozen=True, slots=True)
class RuleCheck:
    """One keep rule (or a refusal before evaluation) and whether it held, in a sentence."""

    rule: str
    met: bool
    detail: str

    def as_json(self) -> dict[str, Any]:
        return {"rule": self.rule, "met": self.met, "detail": self.detail}


def keep_rules(dev: DevComparison,
               since_start: DevComparison | None = None) -> tuple[RuleCheck, ...]:
    """Every keep rule applied to ``dev``, in the order the docs list them; with
    ``since_start`` (the run's first rubric against the candidate, once the current
    rubric is no longer that one), the class rules against the start too."""
    applicable, tpr, tnr = dev.applicable, dev.tpr, dev.tnr
    cumulative = () if since_start is None else (
        _class_rule("tpr-holds-since-start", "TPR", "pass", since_start.tpr,
                    " since the start of the run"),
        _class_rule("tnr-holds-since-start", "TNR", "fail", since_start.tnr,
                    " since the start of the run"))
    return (
        RuleCheck("gained-over-lost", dev.gained > dev.lost,
                  f"dev rows gained {dev.gained}, lost {dev.lost} (a kept edit gains more "
                  "than it loses)"),
        RuleCheck("applicable-agreement-rises", applicable.after > applicable.before,
                  f"applicable agreement {applicable.before}/{applicable.rows} -> "
                  f"{applicable.after}/{applicable.rows} (it must rise)"),
        _class_rule("tpr-holds", "TPR", "pass", tpr),
        _class_rule("tnr-holds", "TNR", "fail", tnr),
        *cumulative,
        RuleCheck("untargeted-flips", dev.untargeted_flips <= FLIP_LIMIT * dev.untargeted,
                  f"{dev.untargeted_flips} of {dev.untargeted} untargeted dev rows changed "
                  f"outcome (at most {FLIP_LIMIT:.0%} may)"),
        RuleCheck("no-new-errors", dev.new_errors == 0,
                  f"{dev.new_errors} dev row(s) scored under the current rubric are errors "
                  "under the candidate"),
    )


def _class_rule(rule: str, name: str, label: str, tally: Tally, since: str = "") -> RuleCheck:
    return RuleCheck(rule, tally.after >= tally.before - 1,
                     f"{name} {tally.before}/{tally.rows} -> {tally.after}/{tally.rows} rows "
                     f"labelled {label}{since} (it may fall by one row at most)")


def failed(checks: Iterable[RuleCheck]) -> tuple[RuleCheck, ...]:
    """The checks that did not hold: why a candidate was refused (empty: kept)."""
    return tuple(check for check in checks if not check.met)
