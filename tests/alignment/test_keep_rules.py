"""The keep rules and the dev comparison, against hand counts, scipy and a seeded simulation."""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest
from scipy import stats

from introspection_cli.alignment.keep_rules import (
    FLIP_LIMIT,
    applicable_agreement,
    compare_dev,
    failed,
    keep_rules,
)
from introspection_cli.evaluation.outcomes import RowOutcome
from introspection_cli.statistics import paired_difference


def rows(pairs: Sequence[tuple[str, str]]) -> list[RowOutcome]:
    """Rows ``(expected, outcome)``, numbered so both runs pair them up."""
    return [RowOutcome(line, f"c{line}", "dev", expected, outcome,  # type: ignore[arg-type]
                       snapshot_hash=f"sha256:{line}")
            for line, (expected, outcome) in enumerate(pairs, start=1)]


def rules_failed(before: Sequence[tuple[str, str]], after: Sequence[str]) -> list[str]:
    current = rows(before)
    candidate = rows([(expected, outcome) for (expected, _), outcome in
                      zip(before, after, strict=True)])
    return [check.rule for check in failed(keep_rules(compare_dev(current, candidate)))]


def test_applicable_agreement_counts_only_pass_and_fail_labels() -> None:
    value = applicable_agreement(rows([
        ("pass", "pass"), ("pass", "not_applicable"), ("fail", "gated"), ("fail", "fail"),
        ("not_applicable", "pass"), ("not_applicable", "gated"), ("pass", "error")]))
    assert value is not None
    assert value.value == 2 / 4  # an n/a or gated outcome on a pass/fail row disagrees
    assert applicable_agreement(rows([("not_applicable", "not_applicable")])) is None


def test_a_candidate_fixing_rows_and_breaking_none_passes_every_rule() -> None:
    before = [("pass", "fail")] * 3 + [("pass", "pass")] * 10 + [("fail", "fail")] * 10
    assert rules_failed(before, ["pass"] * 13 + ["fail"] * 10) == []


def test_each_rule_fires_on_its_own() -> None:
    base = [("pass", "fail")] * 4 + [("pass", "pass")] * 18 + [("fail", "fail")] * 2
    # Gains 1, loses 1: no net gain, agreement flat (both rules), 1/20 flips allowed.
    assert rules_failed(base, ["pass"] + ["fail"] * 3 + ["pass"] * 17 + ["fail"] * 3) == [
        "gained-over-lost", "applicable-agreement-rises"]
    # Gains 4, both fail rows collapse to pass: TNR falls two rows.
    assert rules_failed(base, ["pass"] * 24) == ["tnr-holds"]
    # Gains 4, loses 3 untargeted rows (15% > 10%), TPR and TNR within a row.
    assert rules_failed(base, ["pass"] * 4 + ["fail"] * 2 + ["pass"] * 16 + ["pass", "fail"]) \
        == ["untargeted-flips"]
    # Gains 4, loses 2 pass rows (10% of the untargeted ones): every rule holds.
    assert rules_failed(base, ["pass"] * 4 + ["fail"] * 2 + ["pass"] * 16 + ["fail"] * 2) == []


def test_tpr_may_fall_by_one_row_and_not_two() -> None:
    base = [("pass", "pass")] * 40 + [("fail", "pass")] * 5 + [("fail", "fail")] * 15
    one = ["fail"] + ["pass"] * 39 + ["fail"] * 20
    two = ["fail"] * 2 + ["pass"] * 38 + ["fail"] * 20
    assert "tpr-holds" not in rules_failed(base, one)
    assert "tpr-holds" in rules_failed(base, two)


def test_the_class_rules_hold_against_the_start_of_the_run_too() -> None:
    # Start: 3 of 3 pass rows right. The current rubric (one kept edit) has 2 of 3; the
    # candidate has 1 of 3: one row from the current rubric, two from the start.
    start = rows([("pass", "pass")] * 3 + [("fail", "pass")] * 4 + [("fail", "fail")] * 10)
    current = rows([("pass", "pass")] * 2 + [("pass", "fail")] + [("fail", "pass")] * 2
                   + [("fail", "fail")] * 12)
    candidate = rows([("pass", "pass")] + [("pass", "fail")] * 2 + [("fail", "fail")] * 14)
    dev = compare_dev(current, candidate)
    assert [c.rule for c in failed(keep_rules(dev))] == []
    since_start = compare_dev(start, candidate)
    checks = keep_rules(dev, since_start)
    assert [c.rule for c in failed(checks)] == ["tpr-holds-since-start"]
    assert [c.rule for c in checks][2:6] == ["tpr-holds", "tnr-holds", "tpr-holds-since-start",
                                             "tnr-holds-since-start"]


def test_flip_limit_is_ten_percent_inclusive() -> None:
    base = [("pass", "fail")] * 5 + [("pass", "pass")] * 10 + [("fail", "fail")] * 10
    one_flip = ["pass"] * 5 + ["fail"] + ["pass"] * 9 + ["fail"] * 10  # 1 of 20 = 5%
    two_flips = ["pass"] * 5 + ["fail"] + ["pass"] * 9 + ["pass"] + ["fail"] * 9  # 10%
    three = ["pass"] * 5 + ["fail"] * 2 + ["pass"] * 8 + ["pass"] + ["fail"] * 9  # 15%
    assert "untargeted-flips" not in rules_failed(base, one_flip)
    assert "untargeted-flips" not in rules_failed(base, two_flips)
    assert "untargeted-flips" in rules_failed(base, three)
    assert FLIP_LIMIT == 0.10


def test_na_rows_count_for_gains_and_flips_but_not_applicable_agreement() -> None:
    base = [("pass", "fail")] * 2 + [("pass", "pass")] * 8 + [("not_applicable", "gated")] * 3
    # Fixes 2 pass rows, breaks 3 n/a rows: agreement rises, yet more rows lost than gained.
    assert rules_failed(base, ["pass"] * 10 + ["pass"] * 3) == [
        "gained-over-lost", "untargeted-flips"]


def test_errors_leave_the_pairing_and_new_errors_refuse() -> None:
    current = rows([("pass", "fail"), ("pass", "error"), ("fail", "fail")])
    candidate = rows([("pass", "pass"), ("pass", "pass"), ("fail", "error")])
    dev = compare_dev(current, candidate)
    assert (dev.paired, dev.unpaired, dev.new_errors) == (1, 2, 1)
    assert [c.rule for c in failed(keep_rules(dev))] == ["no-new-errors"]


def test_the_test_and_interval_match_independent_computations() -> None:
    rng = random.Random(7)
    labels = ["pass", "fail", "not_applicable"]
    for _ in range(200):
        n = rng.randint(1, 40)
        before = [(rng.choice(labels), rng.choice([*labels, "gated"])) for _ in range(n)]
        after = [rng.choice([*labels, "gated"]) for _ in range(n)]
        dev = compare_dev(rows(before), rows([(e, o) for (e, _), o in zip(before, after,
                                                                          strict=True)]))
        applicable = [(o == e, a == e) for (e, o), a in zip(before, after, strict=True)
                      if e in ("pass", "fail")]
        improved = sum(now and not was for was, now in applicable)
        regressed = sum(was and not now for was, now in applicable)
        assert (dev.improved, dev.regressed) == (improved, regressed)
        discordant, k = improved + regressed, min(improved, regressed)
        oracle = 1.0 if not discordant else min(1.0, 2 * stats.binom.cdf(k - 1, discordant, 0.5)
                                                + stats.binom.pmf(k, discordant, 0.5))
        assert dev.p_value == pytest.approx(oracle, abs=1e-12)
        both = sum(was and now for was, now in applicable)
        expected = paired_difference(both, improved, regressed,
                                     len(applicable) - both - improved - regressed)
        assert dev.difference == expected
        if dev.difference is not None:
            assert dev.difference.low <= dev.difference.value <= dev.difference.high
            assert dev.difference.value == pytest.approx(
                (dev.applicable.after - dev.applicable.before) / dev.applicable.rows)


def _kept(rng: random.Random, rows_count: int, redrawn: float, accuracy: float) -> bool:
    """A rubric right on 80% of dev rows and an edit re-drawing each row's outcome with
    probability ``redrawn``, right with probability ``accuracy``, independently."""
    before, after = [], []
    for _ in range(rows_count):
        label = rng.choice(("pass", "fail"))
        other = "fail" if label == "pass" else "pass"
        was = label if rng.random() < 0.8 else other
        now = (label if rng.random() < accuracy else other) if rng.random() < redrawn else was
        before.append((label, was))
        after.append(now)
    return not rules_failed(before, after)


def _keep_rate(rows_count: int, redrawn: float, accuracy: float) -> float:
    rng = random.Random(2024)
    return sum(_kept(rng, rows_count, redrawn, accuracy) for _ in range(2000)) / 2000


@pytest.mark.parametrize(("rows_count", "redrawn", "rate"), [(40, 0.1, 0.31), (100, 0.1, 0.38)])
def test_an_edit_no_better_than_the_rubric_is_kept_about_a_third_of_the_time(
        rows_count: int, redrawn: float, rate: float) -> None:
    """The rules refuse harm, not luck: an edit as accurate as the rubric gains more rows
    than it loses about as often as not, and then passes (docs/align.md states these
    figures, and why the dev figures after a run are optimistic)."""
    assert _keep_rate(rows_count, redrawn, 0.8) == pytest.approx(rate, abs=0.03)


@pytest.mark.parametrize(("rows_count", "rate"), [(40, 0.79), (100, 0.94)])
def test_an_edit_that_fixes_most_of_what_it_touches_is_usually_kept(rows_count: int,
                                                                    rate: float) -> None:
    assert _keep_rate(rows_count, 0.3, 0.95) == pytest.approx(rate, abs=0.03)
