"""The misfit test: could the calibrated judge have given production's verdicts at all?

The null hypothesis: the calibration rows of each label class are a sample of
that class's verdict distribution M[· | t], and production's verdicts a sample
of M·π for some label mix π, with the **same** M. Both are samples: neither the
calibration's M nor production's shares are taken as known. The alternative:
production's verdict shares are free.

* The fit under the null is the joint maximum-likelihood (M, π): production's
  labels are unobserved, so it is found by EM on every face of the label simplex
  (every set of label classes π may be non-zero on) and the best face kept. When
  production's shares are ones the calibration's own M reaches, that M and the
  mix reaching them fit both samples exactly.
* The statistic is Pearson's X² of the calibration and production counts
  against that fit (0 on an exact fit).
* Its null distribution is a parametric bootstrap: calibration counts (the same
  rows per class) and production counts (the same total) drawn from a fit of the
  null, refitted, X² recomputed. The fit they are drawn from is the face chosen
  by BIC (the face's log-likelihood less log(N)/2 per free share of π): a label
  class whose share is within sampling error of 0 is drawn as 0. A bootstrap
  from a mix just inside the simplex, when the truth is on its edge, understates
  X²'s spread there and fires too often (7% for 5% at the edge, measured).
* The p-value is (1 + draws at least X²) / (1 + draws); production contradicts
  the calibration when it is at most :data:`LEVEL`.

NumPy only, imported by ``judges estimate``'s correction alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np
import numpy.typing as npt

from introspection_cli.estimation.simplex import Array, Mask, simplex_least_squares

#: The test's level: a judge whose production the calibration describes is called a misfit
#: in at most this share of samples (measured by the seeded simulations in the tests).
LEVEL = 0.05
#: EM steps per face at most, and the log-likelihood gain below which a fit has converged.
EM_STEPS, EM_TOLERANCE = 120, 1e-8
#: A squared residual (an X²) this small is an exact fit of production by the calibration.
_EXACT, _EXACT_X2 = 1e-18, 1e-9


@dataclass(frozen=True)
class Misfit:
    """Pearson's X² against the null's fit, its bootstrap p-value and (1 − level) quantile."""

    statistic: float
    p_value: float
    threshold: float
    level: float = LEVEL

    @property
    def misfit(self) -> bool:
        return self.p_value <= self.level

    def as_json(self) -> dict[str, Any]:
        return {"test": "Pearson X2 against the joint fit, parametric bootstrap",
                "statistic": self.statistic, "p_value": self.p_value,
                "threshold": self.threshold, "level": self.level, "misfit": self.misfit}


@dataclass(frozen=True)
class _Fit:
    """Per problem of a stack: M ``(..., V, L)``, π ``(..., L)``, the log-likelihood."""

    matrix: Array
    mix: Array
    loglik: Array


def misfit_test(calibration: Array, production: Array, rng: np.random.Generator,
                draws: int) -> Misfit:
    """The misfit test of ``production`` verdict counts ``(V,)`` against ``calibration``
    counts ``(V, L)`` (verdict by label), with ``draws`` bootstrap samples."""
    counts = calibration[None].astype(float)
    verdicts = production[None].astype(float)
    statistic = float(_pearson(counts, verdicts, best_fit(counts, verdicts))[0])
    if statistic < _EXACT_X2:  # the calibration's own M reaches production's shares
        return Misfit(0.0, 1.0, 0.0)
    origin = _null_origin(counts, verdicts)
    matrix, mix = origin.matrix[0], origin.mix[0]
    rows = calibration.sum(axis=0).astype(int)
    drawn = np.stack([rng.multinomial(rows[label], matrix[:, label], size=draws)
                      for label in range(len(rows))], axis=-1).astype(float)
    expected = matrix @ mix
    simulated = rng.multinomial(int(production.sum()), expected / expected.sum(),
                                size=draws).astype(float)
    null = _pearson(drawn, simulated, best_fit(drawn, simulated))
    p_value = (1 + int(np.sum(null >= statistic * (1 - 1e-9)))) / (1 + draws)
    return Misfit(statistic, p_value, float(np.quantile(null, 1 - LEVEL)))


def best_fit(counts: Array, verdicts: Array) -> _Fit:
    """The joint maximum-likelihood fit under the null, for each problem of a stack."""
    rows = counts.sum(axis=-2, keepdims=True)
    own = counts / rows
    exact = simplex_least_squares(own, verdicts / verdicts.sum(axis=-1, keepdims=True))
    fit = _Fit(own.copy(), exact.x.copy(), _loglik(counts, verdicts, own, exact.x))
    rest = exact.residual >= _EXACT
    if rest.any():
        # With as many verdicts as labels the null is saturated inside the simplex: a fit
        # that is not exact lies on a smaller face, so the whole simplex is not searched.
        square = counts.shape[-2] == counts.shape[-1]
        found = _best([fit for _, fit in _faces(counts[rest], verdicts[rest],
                                                whole=not square)])
        fit.matrix[rest], fit.mix[rest], fit.loglik[rest] = found.matrix, found.mix, found.loglik
    return fit


def _null_origin(counts: Array, verdicts: Array) -> _Fit:
    """The fit the bootstrap draws from: the face BIC chooses, so a share within sampling
    error of 0 is drawn as 0 (the edge, where X² spreads most, is not left unchecked)."""
    penalty = np.log(float(verdicts.sum())) / 2
    faces = _faces(counts, verdicts, whole=True)
    scores = [float(fit.loglik[0]) - penalty * (len(face) - 1) for face, fit in faces]
    return faces[int(np.argmax(scores))][1]


def _faces(counts: Array, verdicts: Array, *,
           whole: bool) -> list[tuple[tuple[int, ...], _Fit]]:
    """Each face of the label simplex (without the whole simplex unless ``whole``) and the
    fit on it, smallest first. A problem whose fit on a smaller face cannot gain from
    giving the face's other label a share keeps that fit: EM would only creep towards it
    (slowly, when the optimum is on the edge)."""
    labels = counts.shape[-1]
    fits: dict[tuple[int, ...], _Fit] = {}
    for size in range(1, labels + 1 if whole else labels):
        for face in combinations(range(labels), size):
            settled = np.zeros(len(counts), dtype=bool)
            kept = None
            for label in face if size > 1 else ():
                smaller = fits[tuple(other for other in face if other != label)]
                now = ~settled & (_gain(verdicts, smaller, label) <= 0.0)
                kept = smaller if kept is None else _choose(now, smaller, kept)
                settled |= now
            fit = _em(counts, verdicts, face, np.flatnonzero(~settled))
            fits[face] = fit if kept is None else _choose(settled, kept, fit)
    return list(fits.items())


def _gain(verdicts: Array, fit: _Fit, label: int) -> Array:
    """The first-order gain in log-likelihood of giving ``label`` (share 0 in ``fit``) a
    share: Σ_v c_v·M[v, label] / q_v − N (its column's own move gains nothing at first
    order: the calibration alone fits it)."""
    shares = np.einsum("...vl,...l->...v", fit.matrix, fit.mix)
    ratio = np.divide(fit.matrix[..., :, label], shares, out=np.zeros_like(shares),
                      where=shares > 0)
    gain = (verdicts * ratio).sum(axis=-1) - verdicts.sum(axis=-1)
    return np.asarray(gain, dtype=np.float64)


def _choose(mask: Mask, chosen: _Fit, other: _Fit) -> _Fit:
    return _Fit(np.where(mask[..., None, None], chosen.matrix, other.matrix),
                np.where(mask[..., None], chosen.mix, other.mix),
                np.where(mask, chosen.loglik, other.loglik))


def _best(fits: list[_Fit]) -> _Fit:
    best = fits[0]
    for fit in fits[1:]:
        best = _choose(fit.loglik > best.loglik, fit, best)
    return best


def _em(counts: Array, verdicts: Array, face: tuple[int, ...],
        active: npt.NDArray[np.intp]) -> _Fit:
    """EM for (M, π) with π zero off ``face``, for the problems ``active`` indexes (the
    others keep the starting point): production rows' labels are the missing data. Each
    problem stops when its log-likelihood gains less than the tolerance."""
    rows, total = counts.sum(axis=-2), verdicts.sum(axis=-1, keepdims=True)
    matrix = (counts + 0.5) / (rows[..., None, :] + 0.5 * counts.shape[-2])
    mix = np.zeros(rows.shape)
    mix[..., list(face)] = 1.0 / len(face)
    loglik = _loglik(counts, verdicts, matrix, mix)
    for _ in range(EM_STEPS if len(face) > 1 else 1):  # one label: the first step is exact
        joint = matrix[active] * mix[active][:, None, :]
        share = joint.sum(axis=-1, keepdims=True)
        allocated = verdicts[active][:, :, None] * np.divide(
            joint, share, out=np.zeros_like(joint), where=share > 0)
        by_label = allocated.sum(axis=-2)
        mix[active] = by_label / total[active]
        matrix[active] = (counts[active] + allocated) / (rows[active] + by_label)[:, None, :]
        gained = _loglik(counts[active], verdicts[active], matrix[active], mix[active])
        moving = gained - loglik[active] >= EM_TOLERANCE
        loglik[active] = gained
        active = active[moving]
        if not active.size:
            break
    return _Fit(matrix, mix, loglik)


def _loglik(counts: Array, verdicts: Array, matrix: Array, mix: Array) -> Array:
    expected = np.einsum("...vl,...l->...v", matrix, mix)
    total = _xlogy(counts, matrix).sum(axis=(-2, -1)) + _xlogy(verdicts, expected).sum(axis=-1)
    return np.asarray(total, dtype=np.float64)


def _xlogy(x: Array, y: Array) -> Array:
    """x·log(y): 0 where x is 0, −inf where x is not and y is."""
    with np.errstate(divide="ignore", invalid="ignore"):
        logs = np.log(np.where(y > 0, y, 0.0))
        result: Array = np.where(x > 0, x * logs, 0.0)
    return result


def _pearson(counts: Array, verdicts: Array, fit: _Fit) -> Array:
    """Pearson's X² of both samples against ``fit`` (a cell expected 0 and seen is inf)."""
    expected_counts = fit.matrix * counts.sum(axis=-2, keepdims=True)
    shares = np.einsum("...vl,...l->...v", fit.matrix, fit.mix)
    expected_verdicts = shares * verdicts.sum(axis=-1, keepdims=True)
    total = (_cells(counts, expected_counts).sum(axis=(-2, -1))
             + _cells(verdicts, expected_verdicts).sum(axis=-1))
    return np.asarray(total, dtype=np.float64)


def _cells(observed: Array, expected: Array) -> Array:
    with np.errstate(divide="ignore", invalid="ignore"):
        cells = np.where(expected > 0, (observed - expected) ** 2 / expected,
                         np.where(observed > 0, np.inf, 0.0))
    return np.asarray(cells, dtype=np.float64)
