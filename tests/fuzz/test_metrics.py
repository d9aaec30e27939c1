"""Hypothesis: every report statistic stays in range on any mix of outcomes and splits.

tests/evaluation/test_metrics.py checks the values against scikit-learn and scipy on
small row lists; these properties check the invariants SPEC §3.2 promises on every
split of :func:`stats_by_split`, with cell counts large and lopsided enough to reach
the float edge cases (p = 0, p = 1, one class only, n in the thousands).
"""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from introspection_cli.evaluation.outcomes import OUTCOMES, VERDICTS, RowOutcome
from introspection_cli.reporting.metrics import SplitStats, stats_by_split
from introspection_cli.statistics import Interval, wilson_interval

CELLS = [(split, expected, outcome) for split in ("train", "dev", "test", None)
         for expected in VERDICTS for outcome in OUTCOMES]


@st.composite
def row_sets(draw: st.DrawFn) -> list[RowOutcome]:
    """Rows from a sparse count per (split, expected, outcome) cell; most cells empty."""
    rows: list[RowOutcome] = []
    for split, expected, outcome in draw(st.lists(st.sampled_from(CELLS), unique=True,
                                                  max_size=8)):
        count = draw(st.integers(1, 400))
        rows += [RowOutcome(line=len(rows) + i + 1, conversation_id="c", split=split,
                            expected=expected, outcome=outcome,
                            unstable=draw(st.booleans()) and i == 0) for i in range(count)]
    return rows


def assert_interval(interval: Interval | None, successes: int, n: int) -> None:
    if n == 0:
        assert interval is None  # no data is null, never 0
        return
    assert interval is not None
    assert interval.value == successes / n
    assert 0.0 <= interval.low <= interval.value <= interval.high <= 1.0


def assert_invariants(stats: SplitStats, rows: list[RowOutcome]) -> None:
    assert stats.n == len(rows) == stats.judged + stats.gated + stats.errors
    assert stats.unstable == sum(r.unstable for r in rows)
    assert sum(sum(counts.values()) for counts in stats.confusion.values()) == stats.n
    for expected in VERDICTS:
        for outcome in OUTCOMES:
            assert stats.confusion[expected][outcome] == sum(
                r.expected == expected and r.outcome == outcome for r in rows)
    scored = [r for r in rows if r.outcome != "error"]
    applicable = [r for r in scored if r.expected != "not_applicable"]
    labelled_na = [r for r in scored if r.expected == "not_applicable"]
    assert_interval(stats.agreement, sum(r.outcome == r.expected for r in applicable),
                    len(applicable))
    assert_interval(stats.na_agreement, sum(r.outcome in ("not_applicable", "gated")
                                            for r in labelled_na), len(labelled_na))
    for label, rate in (("pass", stats.tpr), ("fail", stats.tnr)):
        labelled = [r for r in scored if r.expected == label]
        assert_interval(rate, sum(r.outcome == label for r in labelled), len(labelled))
    judged = [r for r in rows if r.outcome in VERDICTS]
    if stats.kappa is None:
        # Undefined only without judged rows or when both sides used one single class.
        assert len({r.expected for r in judged} | {r.outcome for r in judged}) <= 1
    else:
        assert -1.0 <= stats.kappa <= 1.0
        assert (stats.kappa == 1.0) == all(r.outcome == r.expected for r in judged)


@given(row_sets())
def test_every_split_keeps_the_report_invariants(rows: list[RowOutcome]) -> None:
    by_split = stats_by_split(rows)
    for name, stats in by_split.items():
        members = [r for r in rows if name == "scored"
                   or (r.split if r.split is not None else "unsplit") == name]
        assert_invariants(stats, members)
        document = json.loads(json.dumps(stats.as_json(), allow_nan=False))
        assert document["n"] == stats.n  # finite, JSON-serialisable numbers only


@given(st.integers(1, 2**53).flatmap(lambda n: st.tuples(
    st.sampled_from([0, 1, n // 2, n - 1, n]) | st.integers(0, n), st.just(n))))
def test_wilson_holds_at_extreme_counts(case: tuple[int, int]) -> None:
    successes, n = case
    successes = min(max(successes, 0), n)
    assert_interval(wilson_interval(successes, n), successes, n)
