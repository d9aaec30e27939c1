"""The corrected production pass rate of a judge that answers pass, fail or not_applicable.

θ is, among the conversations the judge runs on (its gate matches), the share a
human would label ``pass`` among those a human would label ``pass`` or ``fail``;
φ is the share a human would label ``not_applicable``. From the calibration rows
whose gate matched, M[v | t] is the chance of verdict v given label t; production
gives the verdict shares q. Solving q = M·π for the label mix π on the simplex
(least squares) gives θ = π_pass / (π_pass + π_fail). The interval is a
parametric bootstrap: each column of M drawn from Dirichlet(counts + ½), q from
Dirichlet(production counts + ½), the percentile interval of the re-solved θ.
When nothing is ``not_applicable`` on either side this is Rogan–Gladen, and its
Lee et al. interval (:func:`~introspection_cli.statistics.corrected_pass_rate`)
is the one reported.

With ``--passed K --total N`` production counts only pass and fail verdicts: the
columns of M are then renormalised over those two (a pass row the judge calls
not_applicable is not seen), the simplex problem gives the label mix among
conversations judged pass or fail, and dividing each class by its chance of
getting a pass or fail verdict brings it back to π.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from introspection_cli.estimation.counts import (
    LABELS,
    VERDICTS,
    Confusion,
    EstimateRefused,
    ProductionCounts,
)
from introspection_cli.estimation.misfit import Misfit, misfit_test
from introspection_cli.estimation.simplex import Array, Mask, simplex_least_squares
from introspection_cli.statistics import Interval, NoBetterThanChance, corrected_pass_rate

#: A label class with 1 to 15 calibration rows is refused: its column of M is noise.
MIN_CLASS_ROWS = 16
#: M's smallest singular value below this: the judge is about as good as chance on a class.
MIN_SINGULAR_VALUE = 0.05
#: Refused when more than this share of bootstrap draws of M are that close to chance.
MAX_SINGULAR_DRAWS = 0.05
MIN_PRODUCTION, FEW_PRODUCTION = 30, 150
DRAWS = 2000
#: Any fixed number: the same counts give the same interval on every run.
SEED = 20_251_202
_EPSILON = 1e-12


@dataclass(frozen=True, eq=False)
class CalibrationModel:
    """The calibration prepared for production counts of ``observed`` verdicts."""

    confusion: Confusion
    labels: tuple[str, ...]  # the label classes present in the calibration
    observed: tuple[str, ...]  # the verdicts production counts
    matrix: Array  # M over the observed verdicts (columns renormalised), (verdicts, labels)
    counts: Array  # the calibration counts behind it (the misfit test's sample)
    reach: Array  # per label, the chance its verdict is one production counts
    draws: Array  # Dirichlet draws of the full M, (draws, 3, labels)
    singular: Mask  # per draw, whether its M is as good as chance on some class
    notes: tuple[str, ...]

    @property
    def binary(self) -> bool:
        """Nothing not_applicable on either side of the calibration: Rogan–Gladen applies."""
        return self.labels == ("pass", "fail") and not any(
            self.confusion.count(label, "not_applicable") for label in self.labels)


@dataclass(frozen=True)
class CorrectedRate:
    """θ with its 95% interval, φ beside it, and what the estimate rests on."""

    theta: Interval
    not_applicable: Interval | None  # φ; None when no calibration row is not_applicable
    method: str
    misfit: Misfit
    gate_misses: tuple[int, int]  # calibration pass/fail rows the gate missed, of how many
    singular_draws: float
    draws: int
    notes: tuple[str, ...]

    def as_json(self) -> dict[str, Any]:
        missed, rows = self.gate_misses
        return {"corrected": self.theta.as_json(),
                "not_applicable": None if self.not_applicable is None
                else self.not_applicable.as_json(),
                "method": self.method, "misfit": self.misfit.as_json(),
                "gate_misses": {"rows": missed, "of": rows,
                                "share": missed / rows if rows else None},
                "bootstrap": {"draws": self.draws, "seed": SEED,
                              "singular_share": self.singular_draws},
                "notes": list(self.notes)}


def prepare(confusion: Confusion, *, counts_not_applicable: bool,
            draws: int = DRAWS, seed: int = SEED) -> CalibrationModel:
    """Check the calibration alone (before any production row is paid for).

    Raises :class:`EstimateRefused` for a class with 1 to 15 rows, a class whose
    verdicts production cannot see, or a judge as good as chance on some class.
    """
    labels, notes = _label_classes(confusion)
    observed = VERDICTS if counts_not_applicable else ("pass", "fail")
    if "not_applicable" in labels and "not_applicable" not in observed:
        raise EstimateRefused(
            f"{_rows(confusion, 'not_applicable')} calibration rows are labelled "
            "not_applicable, and --passed/--total count only pass and fail verdicts, which "
            "cannot tell not_applicable conversations from the others: give "
            "--not-applicable J (the judge's not_applicable verdicts) too, or --rows FILE")
    counts = np.array([confusion.verdicts(label) for label in labels], dtype=float).T
    full = counts / counts.sum(axis=0)
    rows = [VERDICTS.index(v) for v in observed]
    reach = full[rows].sum(axis=0)
    for label, share in zip(labels, reach, strict=True):
        if share <= 0.0:
            raise EstimateRefused(
                f"every calibration row labelled {label} got a not_applicable verdict, and "
                "--passed/--total count only pass and fail ones: give --not-applicable J too")
    matrix = full[rows] / reach
    _refuse_chance(matrix, labels, confusion)
    rng = np.random.default_rng(seed)
    drawn = _dirichlet(rng, np.broadcast_to(counts + 0.5, (draws, *counts.shape)), axis=1)
    observed_draws = drawn[:, rows, :]
    renormalised = observed_draws / observed_draws.sum(axis=1, keepdims=True)
    singular = ((_smallest_singular(renormalised) < MIN_SINGULAR_VALUE)
                | _below_chance(renormalised, labels))
    share = float(np.mean(singular))
    if share > MAX_SINGULAR_DRAWS:
        raise EstimateRefused(
            f"the judge is too close to chance for its calibration to pin it down: "
            f"{share:.0%} of {draws} bootstrap draws of its verdict matrix are as good as "
            f"chance on some class (at most {MAX_SINGULAR_DRAWS:.0%} allowed). Label more "
            "calibration rows, or improve the rubric")
    return CalibrationModel(confusion, labels, observed, matrix, counts[rows], reach, drawn,
                            singular, tuple(notes))


def corrected_rate(model: CalibrationModel, production: ProductionCounts,
                   *, seed: int = SEED) -> CorrectedRate:
    """θ (and φ) behind ``production``; raises :class:`EstimateRefused` when it cannot say."""
    verdicts = np.array(production.verdicts(), dtype=float)
    total = int(verdicts.sum())
    if total < MIN_PRODUCTION:
        raise EstimateRefused(
            f"only {total} production verdicts to correct (pass, fail"
            f"{', not_applicable' if production.not_applicable is not None else ''}); at "
            f"least {MIN_PRODUCTION} are needed for an interval that means anything")
    notes = list(model.notes)
    if total < FEW_PRODUCTION:
        notes.append(f"only {total} production verdicts: the interval is approximate below "
                     f"{FEW_PRODUCTION}")
    shares = verdicts / total
    fit = simplex_least_squares(model.matrix, shares)
    mix = _label_mix(model, fit.x)
    if mix[..., :2].sum() <= _EPSILON:
        raise EstimateRefused("the production verdicts look entirely not_applicable to the "
                              "calibration: there is no pass or fail conversation to estimate")
    # The misfit test draws from its own stream: the interval does not depend on whether
    # the test needed a bootstrap (it does not when the calibration fits exactly).
    misfit = misfit_test(model.counts, verdicts, np.random.default_rng((seed, 1)),
                         len(model.draws))
    bootstrap = _bootstrap(model, verdicts, np.random.default_rng(seed))
    theta_point = float(mix[0] / (mix[0] + mix[1]))
    if model.binary and not production.not_applicable:
        theta = _rogan_gladen(model.confusion, production, total)
        method = "Rogan-Gladen point estimate; Lee et al. (2025) 95% interval"
    else:
        theta = _percentile(bootstrap.theta, theta_point)
        method = ("least squares on the simplex; parametric Dirichlet bootstrap "
                  f"({len(model.draws)} draws) 95% percentile interval")
    phi = (_percentile(bootstrap.phi, float(mix[2])) if "not_applicable" in model.labels
           else None)
    return CorrectedRate(theta, phi, method, misfit, _gate_misses(model.confusion),
                         bootstrap.singular_share, len(model.draws), tuple(notes))


def _label_classes(confusion: Confusion) -> tuple[tuple[str, ...], list[str]]:
    """The label classes the calibration has, refusing a class with too few rows."""
    labels, notes = [], []
    for label in LABELS:
        rows = _rows(confusion, label)
        if rows == 0 and label != "not_applicable":
            raise EstimateRefused(
                f"no calibration row labelled {label} got a verdict (its gate matched, no "
                f"error): nothing says how the judge treats {label} conversations. Label some")
        if rows == 0:
            notes.append("no calibration row labelled not_applicable got a verdict: "
                         "production is taken to have none (φ is not estimated)")
            continue
        if rows < MIN_CLASS_ROWS:
            raise EstimateRefused(
                f"only {rows} calibration row{'s' if rows > 1 else ''} labelled {label} "
                f"(gate matched, no error): at least {MIN_CLASS_ROWS} of each class present "
                f"are needed to estimate how the judge treats it; label "
                f"{MIN_CLASS_ROWS - rows} more")
        labels.append(label)
    return tuple(labels), notes


def _rows(confusion: Confusion, label: str) -> int:
    return sum(confusion.verdicts(label))


def _refuse_chance(matrix: Array, labels: tuple[str, ...], confusion: Confusion) -> None:
    smallest = float(_smallest_singular(matrix))
    if smallest >= MIN_SINGULAR_VALUE and not _below_chance(matrix, labels):
        return
    if labels == ("pass", "fail") and not any(
            confusion.count(label, "not_applicable") for label in labels):
        tpr, tnr = float(matrix[0, 0]), float(matrix[1, 1])
        relation = "<=" if tpr + tnr <= 1.0 else "is barely above"
        raise EstimateRefused(
            f"the judge is no better than chance (TPR {tpr:.3f} + TNR {tnr:.3f} {relation} "
            "1), so its verdicts say nothing about the true pass rate and no correction can "
            "recover it")
    raise EstimateRefused(
        "the judge is no better than chance on some class: it does not give each class's "
        "own verdict more often to that class than to the others, or its verdict matrix "
        f"over {', '.join(labels)} is close to singular (smallest singular value "
        f"{smallest:.3f}, at least {MIN_SINGULAR_VALUE} needed), so no correction can "
        "separate the classes")


def _smallest_singular(matrix: Array) -> Array:
    values = np.asarray(np.linalg.svd(matrix, compute_uv=False), dtype=np.float64)
    return values[..., -1]


def _below_chance(matrix: Array, labels: tuple[str, ...]) -> Mask:
    """Per matrix of the stack: some label class does not get its own verdict more often
    than another class does (binary: TPR + TNR <= 1). ``matrix`` is over the verdicts
    production counts, pass and fail first."""
    worse = np.zeros(matrix.shape[:-2], dtype=bool)
    for own, label in enumerate(labels):
        verdict = VERDICTS.index(label)
        for other in range(len(labels)):
            if other != own:
                worse |= matrix[..., verdict, own] <= matrix[..., verdict, other]
    return worse


def _dirichlet(rng: np.random.Generator, alpha: Array, axis: int) -> Array:
    """Dirichlet draws along ``axis`` of a stack of parameters (numpy's takes one vector)."""
    gammas = np.asarray(rng.gamma(alpha), dtype=np.float64)
    draws: Array = gammas / gammas.sum(axis=axis, keepdims=True)
    return draws


def _label_mix(model: CalibrationModel, observed_mix: Array) -> Array:
    """π over pass, fail, not_applicable from the mix among counted verdicts."""
    return _undo_reach(observed_mix, model.reach, model.labels)


def _undo_reach(observed_mix: Array, reach: Array, labels: tuple[str, ...]) -> Array:
    weighted = observed_mix / reach
    weighted = weighted / weighted.sum(axis=-1, keepdims=True)
    mix = np.zeros((*weighted.shape[:-1], 3))
    for column, label in enumerate(labels):
        mix[..., LABELS.index(label)] = weighted[..., column]
    return mix


@dataclass(frozen=True)
class _Bootstrap:
    theta: Array  # the draws that are not singular
    phi: Array
    singular_share: float


def _bootstrap(model: CalibrationModel, verdicts: Array, rng: np.random.Generator) -> _Bootstrap:
    rows = [VERDICTS.index(v) for v in model.observed]
    observed = model.draws[:, rows, :]
    reach = observed.sum(axis=1)
    matrices = observed / reach[:, None, :]
    shares = _dirichlet(rng, np.broadcast_to(verdicts + 0.5, (len(model.draws), len(verdicts))),
                        axis=1)
    mix = _undo_reach(simplex_least_squares(matrices, shares).x, reach, model.labels)
    judged = mix[:, 0] + mix[:, 1]
    usable = ~model.singular & (judged > _EPSILON)
    theta = mix[usable, 0] / judged[usable]
    return _Bootstrap(theta, mix[usable, 2], 1.0 - float(np.mean(usable)))


def _percentile(draws: Array, point: float) -> Interval:
    """The 95% percentile interval, widened to the point estimate if it falls outside."""
    low, high = (float(bound) for bound in np.quantile(draws, [0.025, 0.975]))
    return Interval(point, min(low, point), max(high, point))


def _rogan_gladen(confusion: Confusion, production: ProductionCounts, total: int) -> Interval:
    pass_rows, fail_rows = _rows(confusion, "pass"), _rows(confusion, "fail")
    tpr = confusion.count("pass", "pass") / pass_rows
    tnr = confusion.count("fail", "fail") / fail_rows
    try:
        return corrected_pass_rate(production.passed / total, total, tpr, tnr,
                                   pass_rows=pass_rows, fail_rows=fail_rows)
    except NoBetterThanChance as exc:
        raise EstimateRefused(f"the judge is no better than chance once its TPR and TNR are "
                              f"shrunk for their row counts ({exc}): label more calibration "
                              "rows") from exc


def _gate_misses(confusion: Confusion) -> tuple[int, int]:
    missed = sum(confusion.count(label, "gated") for label in ("pass", "fail"))
    judged = sum(confusion.count(label, outcome) for label in ("pass", "fail")
                 for outcome in ("pass", "fail", "not_applicable", "gated"))
    return missed, judged
