"""Sequential certification (issue 22 item 2): the anytime-valid bound, its level over many
looks, the plans made for it, and certify deciding a later look with it.

Oracles: scipy's incomplete beta and ``brentq`` for the mixture and its bound
(tests/certification/anytime_oracle.py), and the exact probability of ever
crossing the bar over a schedule of looks, propagated over the binomial counts
with numpy; every rate claimed is also a seeded simulation.
"""

from __future__ import annotations

import itertools
import json
import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binom

from introspection_cli.certification import sequential
from introspection_cli.certification.bounds import ANYTIME, METHODS, WILSON, method_for, plan_for
from introspection_cli.certification.certificate import Certificate, Sequential
from introspection_cli.certification.validator import intrinsic_problem
from introspection_cli.statistics import wilson_interval
from tests.certification.anytime_oracle import (
    oracle_anytime_plan,
    oracle_log_mixture,
    oracle_lower,
    oracle_threshold,
)
from tests.certification.test_certify_cli import _recipe, _rows, certify, check
from tests.certification.test_validator import _built
from tests.conftest import run_cli
from tests.evaluation.conftest import fixture_row
from tests.evaluation.stub_model_server import StubModelServer

ALPHA = 0.025
JOINT = math.sqrt(0.8)  # each of two classes, for 80% together


@pytest.mark.parametrize("n", [1, 2, 5, 16, 24, 54, 200, 3000])
def test_the_mixture_and_its_bound_match_scipy(n: int) -> None:
    for successes in sorted({0, 1, n // 2, int(0.8 * n), int(0.95 * n), n - 1, n} & set(
            range(n + 1))):
        for rate in (0.05, 0.5, 0.8, 0.95):
            expected = oracle_log_mixture(successes, n, rate)
            if not math.isfinite(expected):  # scipy's tail underflows far above S/n
                assert rate > successes / n + 0.1
                continue
            assert sequential.log_mixture(successes, n, rate) == pytest.approx(
                expected, rel=1e-9, abs=1e-9)
        assert sequential.lower_bound(successes, n, ALPHA) == pytest.approx(
            oracle_lower(successes, n, ALPHA), abs=1e-9)


@settings(max_examples=200, deadline=None)
@given(n=st.integers(1, 400), data=st.data(), alpha=st.sampled_from([0.025, 0.0125, 0.05]))
def test_every_interval_holds_its_value_and_is_wider_than_wilsons(
        n: int, data: st.DataObject, alpha: float) -> None:
    successes = data.draw(st.integers(0, n))
    interval = ANYTIME.interval(successes, n, alpha)
    wilson = WILSON.interval(successes, n, alpha)
    assert interval is not None and wilson is not None
    assert 0.0 <= interval.low <= interval.value <= interval.high <= 1.0
    # Valid at every look at once costs width at each one.
    assert interval.low <= wilson.low + 1e-12 and interval.high >= wilson.high - 1e-12


@pytest.mark.parametrize("n", [3, 20, 97, 500, 3000])
def test_the_mixture_falls_with_the_rate_up_to_the_observed_rate(n: int) -> None:
    # What lets the bound be found by bisection, and reaches() test the bar alone.
    for successes in range(1, n + 1, max(1, n // 40)):
        rates = np.linspace(1e-6, successes / n, 300)[:-1]
        values = [sequential.log_mixture(successes, n, float(rate)) for rate in rates]
        assert all(b <= a + 1e-9 for a, b in itertools.pairwise(values)), successes


def test_thresholds_floors_and_p_values_agree_with_the_bound() -> None:
    assert ANYTIME.floor(0.8, ALPHA) == 24  # 24 of 24 reaches 0.80; 23 of 23 does not
    assert sequential.lower_bound(23, 23, ALPHA) < 0.8 <= sequential.lower_bound(24, 24, ALPHA)
    assert WILSON.floor(0.8, ALPHA) == 16
    hint = None
    for n in range(1, 260):
        k = ANYTIME.threshold(n, 0.8, ALPHA, hint)
        assert k == oracle_threshold(n, 0.8, ALPHA) == ANYTIME.threshold(n, 0.8, ALPHA)
        hint = k
        for successes in range(max(0, k - 2), min(n, k + 2) + 1):
            low = ANYTIME.interval(successes, n, ALPHA).low  # type: ignore[union-attr]
            assert (low >= 0.8) == (successes >= k) == (
                sequential.p_value(successes, n, 0.8) <= ALPHA)


def test_method_for_the_looks() -> None:
    assert method_for(1) is WILSON and method_for(2) is ANYTIME and method_for(20) is ANYTIME
    assert ANYTIME.name == "beta-binomial" and ANYTIME.interval_name(ALPHA) == \
        "95% anytime-valid interval"


def _ever_crossed(schedule: list[int], rate: float, first_wilson: bool,
                  method_threshold: dict[int, int]) -> float:
    """The exact chance that a class at ``rate`` is certified at some look of ``schedule``
    (rows in test at each look): the count's distribution carried look to look, the paths
    already certified taken out."""
    alive = np.ones(1)
    seen = 0
    crossed = 0.0
    for look, n in enumerate(schedule):
        alive = np.convolve(alive, binom.pmf(np.arange(n - seen + 1), n - seen, rate))
        seen = n
        counts = np.arange(n + 1)
        if look == 0 and first_wilson:
            wins = np.array([wilson_interval(int(k), n).low >= 0.8  # type: ignore[union-attr]
                             for k in counts])
        else:
            wins = counts >= method_threshold[n]
        crossed += float(alive[wins].sum())
        alive = np.where(wins, 0.0, alive)
    return crossed


@pytest.mark.parametrize("first, step", [(16, 10), (24, 10), (16, 5), (40, 20), (25, 1)])
def test_the_anytime_bound_keeps_its_level_over_20_looks_exactly(first: int, step: int) -> None:
    schedule = [first + step * look for look in range(20)]
    anytime = {n: ANYTIME.threshold(n, 0.8, ALPHA) for n in schedule}
    wilson = {n: WILSON.threshold(n, 0.8, ALPHA) for n in schedule}
    # Looking with the anytime-valid bound at every look: at most 2.5%, by Ville's
    # inequality, whatever the schedule...
    assert _ever_crossed(schedule, 0.8, False, anytime) <= ALPHA
    # ...where the Wilson bound looked at 20 times certifies a judge at the bar far more
    # often (this is what the test would catch).
    assert _ever_crossed(schedule, 0.8, False, wilson) > 1.5 * ALPHA
    # Wilson at the first look, the anytime bound after it (what certify does): the looks
    # after the first add at most 0.7 points to the first look's own error.
    first_only = _ever_crossed(schedule[:1], 0.8, True, anytime)
    both = _ever_crossed(schedule, 0.8, True, anytime)
    assert first_only <= both <= first_only + 0.007


def _rounds_campaigns(rng: np.random.Generator, campaigns: int, rate: float,
                      rounds: int = 60, per_round: int = 20) -> np.ndarray:
    """For each simulated campaign of one class: was it ever certified, over at most 20
    looks? Each round labels ``per_round`` rows (half of each class on average) and every
    label goes to test (``judges split --fill-test``); certify looks once both classes hold
    16 rows (fewer is insufficient data, decided without a look), Wilson at the first
    look, the anytime-valid bound after."""
    ours = rng.binomial(per_round, 0.5, (campaigns, rounds))
    n = np.cumsum(ours, axis=1)
    other = np.cumsum(per_round - ours, axis=1)
    agreed = np.cumsum(rng.binomial(ours, rate), axis=1)
    looking = (n >= 16) & (other >= 16)
    look_number = np.cumsum(looking, axis=1)
    certified = np.zeros(campaigns, dtype=bool)
    top = int(n.max())
    wilson = np.array([WILSON.threshold(m, 0.8, ALPHA) for m in range(top + 1)])
    anytime = np.array([ANYTIME.threshold(m, 0.8, ALPHA) for m in range(top + 1)])
    for round_ in range(rounds):
        counts = n[:, round_]
        number = look_number[:, round_]
        needed = np.where(number == 1, wilson[counts], anytime[counts])
        certified |= looking[:, round_] & (number <= 20) & (agreed[:, round_] >= needed)
    return certified


def test_certifying_every_round_stays_at_25_per_mille_per_class() -> None:
    # Issue 22: 20 looks at a true rate of 0.80, rows only added each round.
    rng = np.random.default_rng(22)
    rate = _rounds_campaigns(rng, 40_000, 0.80).mean()
    assert rate <= ALPHA, rate
    # The same campaigns certified by the Wilson bound at every look: far above it.
    ours = rng.binomial(20, 0.5, (40_000, 60))
    n = np.cumsum(ours, axis=1)
    other = np.cumsum(20 - ours, axis=1)
    agreed = np.cumsum(rng.binomial(ours, 0.8), axis=1)
    looking = (n >= 16) & (other >= 16) & (np.cumsum((n >= 16) & (other >= 16), axis=1) <= 20)
    wilson = np.array([WILSON.threshold(m, 0.8, ALPHA) for m in range(int(n.max()) + 1)])
    assert (looking & (agreed >= wilson[n])).any(axis=1).mean() > 2 * ALPHA


@pytest.mark.parametrize("rates", [{"pass": 0.95, "fail": 0.95}, {"pass": 0.92, "fail": 0.97}])
def test_a_plan_for_the_anytime_bound_keeps_its_power(rates: dict[str, float]) -> None:
    plan = plan_for(ANYTIME, rates, {}, bar=0.8, alpha=ALPHA, test_share=1.0,
                    class_mix={"pass": 0.5, "fail": 0.5})
    rows = {label: plan.classes[label].rows for label in rates}
    assert rows == {label: oracle_anytime_plan(rate, 0.8, JOINT) for label, rate in
                    rates.items()}
    assert plan.bound == "beta-binomial"
    rng = np.random.default_rng(2022)
    for extra in (0, 9):  # at the plan, and from there on
        certified = np.ones(4000, dtype=bool)
        for label, rate in rates.items():
            n = rows[label] + extra  # type: ignore[operator]
            certified &= rng.binomial(n, rate, 4000) >= ANYTIME.threshold(n, 0.8, ALPHA)
        assert certified.mean() >= 0.78, (rows, extra, certified.mean())
    # A campaign that keeps looking on the way (rounds of 10 rows of each class after a
    # first look at 16) certifies by the plan at least as often: each look is one more
    # chance, and the last is the plan's.
    looks = [*range(16, min(rows.values()), 10), *[None]]  # type: ignore[type-var]
    certified = np.zeros(4000, dtype=bool)
    passed = {label: np.zeros(4000, dtype=bool) for label in rates}
    agreed = {label: rng.binomial(1, rate, (4000, rows[label])).cumsum(axis=1)  # type: ignore[arg-type]
              for label, rate in rates.items()}
    for number, look in enumerate(looks):
        method = method_for(number + 1)
        for label in rates:
            n = rows[label] if look is None else look
            passed[label] = agreed[label][:, n - 1] >= method.threshold(n, 0.8, ALPHA)  # type: ignore[operator]
        certified |= passed["pass"] & passed["fail"]
    assert certified.mean() >= 0.78, certified.mean()


def _more_rows(passes: int, fails: int) -> list[dict[str, object]]:
    return [*(fixture_row(f"round2_pass_{i}", f"hi {i} VERDICT:pass", expected="pass",
                          split="test") for i in range(passes)),
            *(fixture_row(f"round2_fail_{i}", f"hi {i} VERDICT:fail", expected="fail",
                          split="test") for i in range(fails))]


def test_a_second_look_is_decided_and_recorded_with_the_anytime_bound(
        tmp_path: Path, stub: StubModelServer) -> None:
    # Round 1: TPR 18/20 misses 0.80 (Wilson lower bound 0.699). Round 2 adds 30 pass and 10
    # fail rows: 48/50 and 30/30 clear it even by the anytime-valid bound of a second look.
    root = _recipe(tmp_path / "r", _rows(20, 20, wrong_passes=2))
    first = json.loads(certify(root, tmp_path / "cache", "--format", "json").stdout)
    assert first["decision"] == "not_certified"
    assert first["sequential"] == {"looks": 1, "method": "wilson"}
    calibration = root / "judges" / "helpful.calibration.jsonl"
    with calibration.open("a") as out:
        out.writelines(json.dumps(row) + "\n" for row in _more_rows(30, 10))
    second = certify(root, tmp_path / "cache", "--format", "json")
    assert second.returncode == 0, second.stderr
    payload = json.loads(second.stdout)
    assert payload["sequential"] == {"looks": 2, "method": "beta-binomial"}
    assert payload["tpr"]["low"] == pytest.approx(oracle_lower(48, 50, ALPHA), abs=1e-9)
    assert payload["tnr"]["low"] == pytest.approx(oracle_lower(30, 30, ALPHA), abs=1e-9)
    assert payload["exposure"]["clean"] and payload["exposure"]["looks"] == 2
    written = json.loads((root / "judges" / "helpful.certificate.json").read_text())
    assert written["sequential"] == {"looks": 2, "method": "beta-binomial",
                                     "parameters": {"prior": "uniform", "sides": "one"}}
    assert check(root, "--require-certified")["returncode"] == 0
    text = run_cli(["judges", "certify", str(root), "--judge", "helpful"],
                   env={"INTROSPECTION_CACHE_DIR": str(tmp_path / "cache")}).stdout
    assert "95% anytime-valid interval" in text and "look 3 at these rows" in text
    # The same counts bounded by Wilson, as if the first look had not happened: invalid.
    wilson = WILSON.interval(48, 50, ALPHA)
    assert wilson is not None
    forged = {**written, "sequential": {"looks": 2, "method": "wilson"},
              "tpr": {**written["tpr"], "low": wilson.low, "high": wilson.high}}
    (root / "judges" / "helpful.certificate.json").write_text(json.dumps(forged))
    report = check(root)
    (invalid,) = [d for d in report["diagnostics"] if d["code"] == "certificate-invalid"]
    assert "wilson bounds after 2 look(s)" in invalid["message"]


def test_a_second_look_with_too_few_rows_for_the_anytime_bound_costs_no_call(
        tmp_path: Path, stub: StubModelServer) -> None:
    root = _recipe(tmp_path / "r", _rows(20, 20, wrong_passes=2))
    assert certify(root, tmp_path / "cache").returncode == 1
    before = len(stub.requests)
    again = certify(root, tmp_path / "cache", "--format", "json")
    assert again.returncode == 1 and len(stub.requests) == before
    payload = json.loads(again.stdout)
    assert payload["decision"] == "insufficient_data"
    assert payload["needed_perfect"] == {"pass": 4, "fail": 4}
    assert "needs 24 of each to reach the bar 0.8 with the anytime-valid bound" in \
        payload["reasons"][0]


def _sequential_certificate(looks: int, method: str) -> Certificate:
    """The unit certificate's counts (29/30, 18/18) bounded by ``method``, at a bar of 0.7
    that both bounds reach."""
    built = replace(_built(), bar=0.7)
    bound = METHODS[method]
    tpr, tnr = bound.interval(29, 30, ALPHA), bound.interval(18, 18, ALPHA)
    assert tpr is not None and tnr is not None
    return replace(built, tpr=replace(built.tpr, low=tpr.low, high=tpr.high),
                   tnr=replace(built.tnr, low=tnr.low, high=tnr.high),
                   exposure=replace(built.exposure, looks=looks),
                   sequential=Sequential(looks, method, bound.parameters))


def test_the_validator_asks_each_look_for_its_own_bound() -> None:
    def problem(certificate: Certificate) -> str:
        return str(intrinsic_problem(certificate, min_bar=0.7))

    assert intrinsic_problem(_sequential_certificate(3, "beta-binomial"), min_bar=0.7) is None
    assert "wilson bounds after 3 look(s)" in problem(_sequential_certificate(3, "wilson"))
    assert "beta-binomial bounds after 1 look(s)" in problem(
        _sequential_certificate(1, "beta-binomial"))
    other = replace(_sequential_certificate(2, "beta-binomial"),
                    sequential=Sequential(2, "beta-binomial", {"prior": "jeffreys"}))
    assert "not the method's own" in problem(other)
    moved = _sequential_certificate(2, "beta-binomial")
    assert "do not follow" in problem(
        replace(moved, tpr=replace(moved.tpr, low=moved.tpr.low + 1e-4)))


def test_the_figures_docs_statistics_quotes() -> None:
    # Lines wrap anywhere in the prose: compare with every run of whitespace as one space.
    text = " ".join((Path(__file__).parents[2] / "docs" / "statistics.md").read_text().split())
    floors = ", ".join(str(ANYTIME.floor(bar, ALPHA)) for bar in (0.7, 0.8, 0.85, 0.9))
    assert f"{floors} and {ANYTIME.floor(0.95, ALPHA)} rows of each" in text
    assert f"48 of 50 give {ANYTIME.interval(48, 50, ALPHA).low:.3f} (Wilson " \
           f"{WILSON.interval(48, 50, ALPHA).low:.3f})" in text  # type: ignore[union-attr]
    for rate in (0.90, 0.933, 0.95):
        cells = []
        for method in (WILSON, ANYTIME):
            for rates in ({"pass": rate}, {"pass": rate, "fail": rate}):
                cells.append(plan_for(method, rates, {}, bar=0.8, alpha=ALPHA, test_share=1.0,
                                      class_mix={"pass": 0.5, "fail": 0.5}
                                      ).classes["pass"].rows)
        assert f"| {rate:g} | " + " | ".join(map(str, cells)) + " |" in text.replace(
            "| 0.90 |", "| 0.9 |")
    for first, step, shown in ((16, 10, "16, 26, 36, …, 206"), (24, 10, "24, 34, 44, …, 214"),
                               (40, 20, "40, 60, 80, …, 420")):
        schedule = [first + step * look for look in range(20)]
        anytime = {n: ANYTIME.threshold(n, 0.8, ALPHA) for n in schedule}
        wilson = {n: WILSON.threshold(n, 0.8, ALPHA) for n in schedule}
        figures = [_ever_crossed(schedule, 0.8, False, anytime),
                   _ever_crossed(schedule, 0.8, False, wilson),
                   _ever_crossed(schedule, 0.8, True, anytime),
                   _ever_crossed(schedule[:1], 0.8, True, anytime)]
        assert f"| {shown} | " + " | ".join(f"{100 * f:.1f}%" for f in figures) + " |" in text
    sizes = [1 - _power_at_bar(n) for n in range(16, 121)]
    assert (f"({100 * min(sizes):.1f}% to {100 * max(sizes):.1f}% between 16 and 120 rows, "
            f"{100 * float(np.mean(sizes)):.1f}% on average") in text
    rate = _rounds_campaigns(np.random.default_rng(22), 40_000, 0.80).mean()
    assert f"40,000 campaigns certifies a class whose true rate is 0.80 {100 * rate:.1f}%" in text


def _power_at_bar(n: int) -> float:
    """1 − P(a class at exactly 0.80 is certified by Wilson on n rows)."""
    return float(binom.cdf(WILSON.threshold(n, 0.8, ALPHA) - 1, n, 0.8))
