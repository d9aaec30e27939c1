"""Certifying several judges at once (issue 20 item 10): the family-wise false-certification
rate, by seeded simulation, and ``certify --all --family-wise`` end to end.

Oracle for the p-values: scipy's normal distribution (the score test the Wilson bound
inverts); for the levels, Holm (1979) and Bonferroni written out in the tests.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import norm

from introspection_cli.certification.decision import Certification, decide
from introspection_cli.certification.familywise import (
    family_decisions,
    family_levels,
    score_p_value,
)
from introspection_cli.evaluation.outcomes import RowOutcome
from introspection_cli.statistics import wilson_interval
from tests.certification.test_certify_cli import _rows
from tests.conftest import run_cli
from tests.evaluation.conftest import UNGATED_JUDGE, write_recipe
from tests.evaluation.stub_model_server import StubModelServer


@given(st.integers(1, 500).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))),
       st.sampled_from([0.7, 0.8, 0.9]))
def test_the_p_value_is_the_score_tests_and_matches_the_wilson_bound(
        case: tuple[int, int], bar: float) -> None:
    successes, n = case
    z = (successes / n - bar) / np.sqrt(bar * (1 - bar) / n)
    p = score_p_value(successes, n, bar)
    assert p == pytest.approx(float(norm.sf(z)), abs=1e-12)
    # The Wilson bound at level a reaches the bar exactly when p <= a (away from ties).
    for alpha in (0.025, 0.005):
        interval = wilson_interval(successes, n, float(norm.isf(alpha)))
        assert interval is not None
        if abs(p - alpha) > 1e-9:
            assert (interval.low >= bar) == (p <= alpha)


def test_the_levels_are_holms_and_bonferronis() -> None:
    p = {"a": 0.001, "b": 0.02, "c": 0.004, "d": 0.3}
    holm = family_levels(p, method="holm", alpha=0.025)
    assert [(name, level.alpha) for name, level in sorted(holm.items(),
                                                          key=lambda kv: kv[1].rank)] == [
        ("a", 0.025 / 4), ("c", 0.025 / 3), ("b", 0.025 / 2), ("d", 0.025)]
    assert {level.alpha for level in family_levels(p, method="bonferroni",
                                                   alpha=0.025).values()} == {0.025 / 4}


@functools.cache
def _rows_of(passes: int, fails: int, n: int) -> tuple[RowOutcome, ...]:
    rows = [RowOutcome(i, f"p{i}", "test", "pass", "pass" if i < passes else "fail")
            for i in range(n)]
    rows += [RowOutcome(n + i, f"f{i}", "test", "fail", "fail" if i < fails else "pass")
             for i in range(n)]
    return tuple(rows)


@functools.cache
def _decided(passes: int, fails: int, n: int, alpha: float) -> Certification:
    # A decision depends on the counts alone: the same counts are decided once.
    return decide(_rows_of(passes, fails, n), bar=0.8, max_error_rate=0.05, alpha=alpha)


def _wrong(method: str | None, campaigns: int, seed: int) -> float:
    """The share of campaigns in which any of 10 judges at the boundary (TPR at the bar,
    TNR well above it) was certified: every such certificate is wrong."""
    rng = np.random.default_rng(seed)
    any_wrong = 0
    for _ in range(campaigns):
        counts = {f"j{k}": (int(rng.binomial(80, 0.80)), int(rng.binomial(80, 0.99)))
                  for k in range(10)}

        def decide_at(name: str, alpha: float,
                      counts: dict[str, tuple[int, int]] = counts) -> Certification:
            return _decided(*counts[name], 80, alpha)

        if method is None:
            decisions = {name: decide_at(name, 0.025) for name in counts}
        else:
            decisions = family_decisions(list(counts), decide_at, method=method, alpha=0.025)
        any_wrong += any(decision.certified for decision in decisions.values())
    return any_wrong / campaigns


def test_holm_stops_at_the_first_judge_not_certified_at_its_level() -> None:
    # p-values: a (80 of 80) ~0.0008, b (20 of 20) 0.0127, c (18 of 18) 0.0169. Holm tests a
    # at 0.025/3, b at 0.025/2 (missed: at that level even 21 of 21 would be needed), and
    # stops: c would pass its 0.025 alone, but no judge after a miss can be certified.
    sizes = {"a": 80, "b": 20, "c": 18}

    def decide_at(name: str, alpha: float) -> Certification:
        n = sizes[name]
        return _decided(n, n, n, alpha)

    decisions = family_decisions(list(sizes), decide_at, method="holm", alpha=0.025)
    assert decisions["a"].certified
    assert decisions["b"].decision == "insufficient_data"
    assert "needs 21 of each to reach the bar 0.8 at one-sided level 0.0125" \
        in decisions["b"].reasons[0]
    assert not decisions["c"].certified and decide_at("c", 0.025).certified
    assert decisions["c"].reasons[0].startswith("holm: the step-down stopped at judge b")
    bonferroni = family_decisions(list(sizes), decide_at, method="bonferroni", alpha=0.025)
    assert [name for name, d in bonferroni.items() if d.certified] == ["a"]


def test_ten_boundary_judges_are_wrongly_certified_often_per_judge_and_rarely_family_wise(
        ) -> None:
    # Each judge at its own level: about 1 - (1 - 0.028)^10, a quarter of the campaigns
    # (issue 20 item 10 measured 25%).
    assert _wrong(None, 600, 10) > 0.12
    for method in ("holm", "bonferroni"):
        assert _wrong(method, 1200, 11) <= 0.05, method


def _recipe_of(root: Path, judges: dict[str, Sequence[dict[str, object]]]) -> Path:
    return write_recipe(root, {name: (UNGATED_JUDGE.replace("name: helpful", f"name: {name}"),
                                      rows) for name, rows in judges.items()})


def test_certify_all_holm_end_to_end(tmp_path: Path, stub: StubModelServer) -> None:
    # Three judges: one perfect on 40 rows of each class, one perfect on only 16 (its
    # bound clears 0.80 at 2.5% but not at the stricter levels of a family of three), and
    # one with too few rows (insufficient data: decided from the file, not in the family).
    # Each run is the first look at its judges' rows (a fresh recipe): a second look would
    # be decided with the anytime-valid bound.
    def fresh(name: str) -> Path:
        return _recipe_of(tmp_path / name, {"alpha": _rows(40, 40), "bravo": _rows(16, 16),
                                            "tiny": _rows(5, 5)})

    env = {"INTROSPECTION_CACHE_DIR": str(tmp_path / "cache")}
    root = fresh("alone")
    alone = run_cli(["judges", "certify", str(root), "--all", "--format", "json"], env=env)
    assert alone.returncode == 1  # tiny is insufficient
    by_name = {j["judge"]: j for j in json.loads(alone.stdout)["judges"]}
    assert by_name["bravo"]["decision"] == "certified" and by_name["bravo"]["alpha"] == 0.025
    root = fresh("holm")
    family = run_cli(["judges", "certify", str(root), "--all", "--family-wise", "holm",
                      "--format", "json"], env=env)
    document = json.loads(family.stdout)
    by_name = {j["judge"]: j for j in document["judges"]}
    assert document["family_wise"] == "holm"
    assert by_name["tiny"]["decision"] == "insufficient_data"
    assert by_name["alpha"]["decision"] == "certified"
    assert by_name["alpha"]["alpha"] == pytest.approx(0.025 / 2)  # first of a family of 2
    assert by_name["alpha"]["family_wise"] == {"method": "holm", "judges": 2, "alpha": 0.025}
    # Holm's second step is at the full 2.5%: 16 of 16 (p 0.023) still certifies there...
    assert (by_name["bravo"]["decision"], by_name["bravo"]["alpha"]) == ("certified", 0.025)
    certificate = json.loads((root / "judges" / "alpha.certificate.json").read_text())
    assert certificate["alpha"] == pytest.approx(0.0125)
    assert certificate["family_wise"]["method"] == "holm"
    z = float(norm.isf(0.0125))
    interval = wilson_interval(40, 40, z)
    assert interval is not None and certificate["tpr"]["low"] == pytest.approx(interval.low)
    result = run_cli(["check", str(root)])
    assert "alpha.certificate.json" not in result.stdout  # valid: recomputed at its level
    text = run_cli(["judges", "certify", str(fresh("text")), "--all", "--family-wise", "holm"],
                   env=env)
    assert "holm over 2 judges keeps the chance of any wrong certificate among them at " \
           "0.025" in text.stdout
    bonferroni = json.loads(run_cli(["judges", "certify", str(fresh("bonferroni")), "--all",
                                     "--family-wise", "bonferroni", "--format", "json"],
                                    env=env).stdout)
    by_name_b = {j["judge"]: j for j in bonferroni["judges"]}
    # ...but not at Bonferroni's 1.25% for each, where 16 rows cannot reach the bar.
    assert by_name_b["bravo"]["decision"] == "insufficient_data"
    assert by_name_b["alpha"]["decision"] == "certified"


@pytest.mark.parametrize("args", [["--judge", "alpha", "--family-wise", "holm"],
                                  ["--all", "--family-wise", "sidak"],
                                  ["--all", "--judge", "alpha"], []])
def test_family_wise_needs_all_and_a_known_method(tmp_path: Path, args: list[str]) -> None:
    root = _recipe_of(tmp_path / "r", {"alpha": _rows(16, 16)})
    result = run_cli(["judges", "certify", str(root), *args])
    assert result.returncode == 2, result.stderr
