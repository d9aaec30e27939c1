"""The three-way corrected rate against an independent implementation, and its refusals.

Oracles: scipy's ``nnls`` for least squares on the simplex (the sum-to-one
constraint as a heavily weighted extra row), a bootstrap written here from the
definition (its own draws, per-draw ``nnls``), the documented Rogan–Gladen + Lee
check value, and a seeded simulation of the interval's coverage.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.optimize import nnls

from introspection_cli.estimation.counts import Confusion, EstimateRefused, ProductionCounts
from introspection_cli.estimation.misfit import LEVEL
from introspection_cli.estimation.simplex import simplex_least_squares
from introspection_cli.estimation.threeway import corrected_rate, prepare

_WEIGHT = 1e4  # the sum-to-one row's weight in the nnls oracle


def _oracle_simplex(matrix: np.ndarray, target: np.ndarray) -> np.ndarray:
    augmented = np.vstack([matrix, _WEIGHT * np.ones(matrix.shape[1])])
    x, _ = nnls(augmented, np.append(target, _WEIGHT))
    return x / x.sum()


def _objective(matrix: np.ndarray, target: np.ndarray, x: np.ndarray) -> float:
    return float(np.sum((target - matrix @ x) ** 2))


_STOCHASTIC = st.integers(min_value=2, max_value=3).flatmap(lambda k: st.tuples(
    st.lists(st.lists(st.floats(0.0, 1.0), min_size=3, max_size=3).filter(lambda c: sum(c) > 0),
             min_size=k, max_size=k),
    st.lists(st.floats(0.0, 1.0), min_size=3, max_size=3).filter(lambda q: sum(q) > 0)))


@given(_STOCHASTIC)
def test_simplex_least_squares_matches_nnls(case: tuple[list[list[float]], list[float]]) -> None:
    columns, shares = case
    matrix = np.array(columns, dtype=float).T
    matrix /= matrix.sum(axis=0)
    target = np.array(shares) / sum(shares)
    fit = simplex_least_squares(matrix, target)
    oracle = _oracle_simplex(matrix, target)
    assert np.all(fit.x >= 0) and fit.x.sum() == pytest.approx(1.0)
    # The optimum's value is unique even where its point is not (two equal columns).
    assert _objective(matrix, target, fit.x) <= _objective(matrix, target, oracle) + 1e-7
    assert float(fit.residual) == pytest.approx(_objective(matrix, target, fit.x), abs=1e-12)
    if np.linalg.matrix_rank(matrix - matrix[:, :1]) == matrix.shape[1] - 1:
        assert fit.x == pytest.approx(oracle, abs=1e-4)


def test_a_stack_is_solved_as_each_problem_alone() -> None:
    rng = np.random.default_rng(1)
    matrices = rng.dirichlet(np.ones(3), size=(50, 3)).transpose(0, 2, 1)
    targets = rng.dirichlet(np.ones(3), size=50)
    stacked = simplex_least_squares(matrices, targets)
    for i in range(50):
        alone = simplex_least_squares(matrices[i], targets[i])
        assert stacked.x[i] == pytest.approx(alone.x, abs=1e-12)


def _independent_estimate(confusion: dict[str, dict[str, int]], production: list[int],
                          draws: int, seed: int) -> tuple[float, float, float]:
    """θ and its percentile interval, from the definition, with nnls per draw."""
    labels = [label for label in ("pass", "fail", "not_applicable")
              if sum(confusion.get(label, {}).get(v, 0) for v in
                     ("pass", "fail", "not_applicable"))]
    counts = np.array([[confusion.get(label, {}).get(v, 0)
                        for v in ("pass", "fail", "not_applicable")] for label in labels],
                      dtype=float).T
    observed = len(production)
    q = np.array(production, dtype=float)

    def theta(columns: np.ndarray, shares: np.ndarray) -> float:
        seen = columns[:observed]
        reach = seen.sum(axis=0)
        rho = _oracle_simplex(seen / reach, shares)
        pi = rho / reach
        return float(pi[0] / (pi[0] + pi[1]))

    point = theta(counts / counts.sum(axis=0), q / q.sum())
    rng = np.random.default_rng(seed)
    values = [theta(np.column_stack([rng.dirichlet(counts[:, j] + 0.5)
                                     for j in range(len(labels))]),
                    rng.dirichlet(q + 0.5)) for _ in range(draws)]
    low, high = np.quantile(values, [0.025, 0.975])
    return point, float(low), float(high)


@pytest.mark.parametrize(("confusion", "production"), [
    # The audit's three-way judge, production at true rate 0.5, na verdicts counted.
    ({"pass": {"pass": 100, "not_applicable": 100}, "fail": {"fail": 200}}, [250, 500, 250]),
    # Three label classes, three verdicts.
    ({"pass": {"pass": 80, "fail": 10, "not_applicable": 10},
      "fail": {"fail": 80, "pass": 15, "not_applicable": 5},
      "not_applicable": {"not_applicable": 40, "pass": 8, "fail": 2}}, [500, 300, 200]),
    # The same calibration with pass and fail verdicts only (no na label class).
    ({"pass": {"pass": 60, "fail": 12, "not_applicable": 28},
      "fail": {"fail": 70, "pass": 20, "not_applicable": 10}}, [420, 380]),
])
def test_three_way_estimate_matches_an_independent_implementation(
        confusion: dict[str, dict[str, int]], production: list[int]) -> None:
    model = prepare(Confusion.from_json(confusion), counts_not_applicable=len(production) == 3)
    counts = ProductionCounts(*production)  # type: ignore[arg-type]
    result = corrected_rate(model, counts)
    point, low, high = _independent_estimate(confusion, production, draws=3000, seed=7)
    assert result.theta.value == pytest.approx(point, abs=1e-4)
    # Two bootstraps of 2,000 and 3,000 draws: their percentiles agree to Monte Carlo error.
    assert result.theta.low == pytest.approx(low, abs=0.012)
    assert result.theta.high == pytest.approx(high, abs=0.012)


def test_the_audit_three_way_judge_is_corrected_to_its_true_rate() -> None:
    confusion = Confusion.from_json({"pass": {"pass": 100, "not_applicable": 100},
                                     "fail": {"fail": 200}})
    for production, counts_na in ((ProductionCounts(1000, 2000), False),
                                  (ProductionCounts(1000, 2000, 1000), True)):
        result = corrected_rate(prepare(confusion, counts_not_applicable=counts_na), production)
        assert abs(result.theta.value - 0.5) <= 0.03
        assert result.theta.low <= 0.5 <= result.theta.high
        assert not result.misfit.misfit


def test_with_nothing_not_applicable_it_is_rogan_gladen_with_the_lee_interval() -> None:
    # The documented check value: p = 0.80 on N = 500, TPR 46/50, TNR 44/50.
    confusion = Confusion.from_json({"pass": {"pass": 46, "fail": 4},
                                     "fail": {"fail": 44, "pass": 6}})
    for production, counts_na in ((ProductionCounts(400, 100), False),
                                  (ProductionCounts(400, 100, 0, gated=7, errors=3), True)):
        result = corrected_rate(prepare(confusion, counts_not_applicable=counts_na), production)
        assert [round(x, 3) for x in (result.theta.value, result.theta.low,
                                      result.theta.high)] == [0.850, 0.769, 0.973]
        assert result.method.startswith("Rogan-Gladen")
        assert result.not_applicable is None
        assert any("taken to have none" in note for note in result.notes)


def test_the_estimate_is_reproducible() -> None:
    confusion = Confusion.from_json({"pass": {"pass": 100, "not_applicable": 100},
                                     "fail": {"fail": 200}})
    first = corrected_rate(prepare(confusion, counts_not_applicable=False),
                           ProductionCounts(1000, 2000))
    second = corrected_rate(prepare(confusion, counts_not_applicable=False),
                            ProductionCounts(1000, 2000))
    assert first.theta == second.theta


@pytest.mark.parametrize("rows", [1, 7, 15])
def test_a_class_with_1_to_15_rows_is_refused(rows: int) -> None:
    for label in ("pass", "fail", "not_applicable"):
        confusion = {"pass": {"pass": 40}, "fail": {"fail": 40},
                     "not_applicable": {"not_applicable": 40}}
        confusion[label] = {label: rows}
        with pytest.raises(EstimateRefused, match=f"only {rows} calibration rows? labelled "
                                                  f"{label}"):
            prepare(Confusion.from_json(confusion), counts_not_applicable=True)


def test_sixteen_rows_of_a_class_are_enough() -> None:
    prepare(Confusion.from_json({"pass": {"pass": 16}, "fail": {"fail": 16}}),
            counts_not_applicable=True)


def test_a_label_class_absent_from_calibration_is_absent_from_production() -> None:
    model = prepare(Confusion.from_json({"pass": {"pass": 40}, "fail": {"fail": 40}}),
                    counts_not_applicable=True)
    assert model.labels == ("pass", "fail")
    assert any("not_applicable" in note and "none" in note for note in model.notes)
    for missing, present in (("pass", "fail"), ("fail", "pass")):
        with pytest.raises(EstimateRefused, match=f"no calibration row labelled {missing}"):
            prepare(Confusion.from_json({present: {present: 40}}), counts_not_applicable=True)


def test_na_labels_need_na_verdicts_counted() -> None:
    confusion = Confusion.from_json({"pass": {"pass": 40}, "fail": {"fail": 40},
                                     "not_applicable": {"not_applicable": 20}})
    with pytest.raises(EstimateRefused, match="--not-applicable J"):
        prepare(confusion, counts_not_applicable=False)


@pytest.mark.parametrize("confusion", [
    {"pass": {"pass": 20, "fail": 30}, "fail": {"fail": 25, "pass": 25}},  # TPR+TNR = 0.9
    {"pass": {"pass": 26, "fail": 24}, "fail": {"fail": 25, "pass": 25}},  # 1.02: too close
    # Three classes, not_applicable rows judged like pass rows.
    {"pass": {"pass": 40, "fail": 5, "not_applicable": 5},
     "fail": {"fail": 45, "pass": 5}, "not_applicable": {"pass": 40, "fail": 5,
                                                         "not_applicable": 5}},
])
def test_a_judge_as_good_as_chance_on_some_class_is_refused(
        confusion: dict[str, dict[str, int]]) -> None:
    with pytest.raises(EstimateRefused, match="chance"):
        prepare(Confusion.from_json(confusion), counts_not_applicable=True)


def test_production_row_counts() -> None:
    model = prepare(Confusion.from_json({"pass": {"pass": 45, "fail": 5},
                                         "fail": {"fail": 45, "pass": 5}}),
                    counts_not_applicable=False)
    with pytest.raises(EstimateRefused, match="only 29 production verdicts"):
        corrected_rate(model, ProductionCounts(15, 14))
    few = corrected_rate(model, ProductionCounts(15, 15))
    assert any("only 30 production verdicts" in note for note in few.notes)
    assert not any("production verdicts" in note
                   for note in corrected_rate(model, ProductionCounts(75, 75)).notes)


def test_production_the_calibration_cannot_produce_is_a_misfit() -> None:
    # TPR 45/50, TNR 40/45: the judge passes at most ~90% of anything; 480 of 500 is not it.
    model = prepare(Confusion.from_json({"pass": {"pass": 45, "fail": 5},
                                         "fail": {"fail": 40, "pass": 5}}),
                    counts_not_applicable=False)
    assert corrected_rate(model, ProductionCounts(480, 20)).misfit.misfit
    assert not corrected_rate(model, ProductionCounts(440, 60)).misfit.misfit
    # Within sampling error of the edge is not a misfit: 455 of 500 against TPR 0.90.
    assert not corrected_rate(model, ProductionCounts(455, 45)).misfit.misfit


def test_the_misfit_level_holds_when_the_calibration_is_a_sample() -> None:
    # The real situation: a judge at TPR = TNR = 0.90, calibrated on 50 rows of each class
    # drawn from it, production of 1,000 conversations drawn from it at a true rate at the
    # edge (every conversation good) or near it. Nothing has drifted, so "production
    # contradicts the calibration" is said at most at the test's level (the test that took
    # the calibration's M as known said it in 20.5% of these samples).
    rng = np.random.default_rng(5)
    fired = trials = 0
    for theta in (1.0, 0.97):
        for _ in range(100):
            passed, failed = (int(k) for k in rng.binomial(50, (0.9, 0.9)))
            model = prepare(Confusion.from_json({"pass": {"pass": passed, "fail": 50 - passed},
                                                 "fail": {"fail": failed, "pass": 50 - failed}}),
                            counts_not_applicable=False)
            k = int(rng.binomial(1000, theta * 0.9 + (1 - theta) * 0.1))
            fired += corrected_rate(model, ProductionCounts(k, 1000 - k)).misfit.misfit
            trials += 1
    assert fired / trials <= LEVEL, fired / trials


def test_the_gate_misses_are_reported() -> None:
    confusion = Confusion.from_json({"pass": {"pass": 40, "gated": 6}, "fail": {"fail": 40,
                                                                                "gated": 4}})
    result = corrected_rate(prepare(confusion, counts_not_applicable=False),
                            ProductionCounts(50, 50))
    assert result.gate_misses == (10, 90)


def test_coverage_of_the_three_way_interval() -> None:
    """A seeded simulation: calibration and production drawn from a known three-way judge;
    the 95% interval covers the true θ in at least 90% of 120 samples (seconds)."""
    rng = np.random.default_rng(2025)
    columns = {"pass": [0.80, 0.08, 0.12], "fail": [0.10, 0.82, 0.08],
               "not_applicable": [0.15, 0.05, 0.80]}
    covered = 0
    samples = 120
    for sample in range(samples):
        mix = np.array([(0.55, 0.30, 0.15), (0.25, 0.60, 0.15), (0.70, 0.20, 0.10)][sample % 3])
        theta = mix[0] / (mix[0] + mix[1])
        confusion = {label: dict(zip(("pass", "fail", "not_applicable"),
                                     map(int, rng.multinomial(60, column)), strict=True))
                     for label, column in columns.items()}
        verdicts = np.array(list(columns.values())).T @ mix
        production = ProductionCounts(*map(int, rng.multinomial(1000, verdicts)))
        result = corrected_rate(prepare(Confusion.from_json(confusion),
                                        counts_not_applicable=True), production)
        covered += result.theta.low <= theta <= result.theta.high
    assert covered / samples >= 0.90
