"""How much the raters agree with each other: the ceiling a judge is measured against.

Over the units (calibration rows) two raters or more labelled:

* **Krippendorff's alpha**, nominal: ``1 - (n - 1) * D / E`` where, over the
  pairable units u with ``m_u`` labels of which ``n_uc`` are label c, ``n`` is
  the number of labels, ``D = Σ_u (m_u² - Σ_c n_uc²) / (m_u - 1)`` and
  ``E = n² - Σ_c n_c²``. A unit one rater labelled carries no pair and is left
  out, as missing ratings are in Krippendorff's definition. Undefined when every
  label is the same one (``E = 0``): then it is refused, never printed as NaN.
* its **95% interval**: the percentile bootstrap over units (units drawn with
  replacement, ``draws`` times, seeded: the same labels give the same interval).
  A draw holding a single label has no alpha and is left out; more than 5% of
  those is refused (too few rows carry two labels). The interval is widened to
  hold alpha itself when a skewed bootstrap leaves it outside (rare, tiny samples).
* **Cohen's kappa** per pair of raters over the units both labelled (undefined
  when both gave one and the same label throughout), and their **applicable
  agreement**: over the units both labelled where at least one said ``pass`` or
  ``fail``, the share with the same label, with its Wilson interval.
* **per-class agreement** (specific agreement): for label c, the share of the
  pairs of labels on a unit involving c that are both c:
  ``Σ_u n_uc (n_uc - 1) / Σ_u n_uc (m_u - 1)``.

numpy is imported here only, by the commands that print these figures.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import TYPE_CHECKING, Any

from introspection_cli.annotations.record import LABELS, Unit
from introspection_cli.errors import DataError
from introspection_cli.statistics import Interval, wilson_interval

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

#: Bootstrap draws by default; at least 1,000 are ever made.
DRAWS = 2000
SEED = 0
#: The share of single-label draws above which no interval is given.
_MAX_UNDEFINED = 0.05
_CHUNK = 250  # draws at a time: a 10,000-row file stays a few MiB


class AgreementRefused(DataError):
    """The labels cannot give the figure asked for; the message says why (exit 1)."""


@dataclass(frozen=True, slots=True)
class PairAgreement:
    """Two raters on the units both labelled."""

    first: str
    second: str
    n: int
    kappa: float | None
    kappa_problem: str | None
    #: Over the units both labelled where one said pass or fail: the same label.
    applicable: Interval | None
    applicable_n: int

    def as_json(self) -> dict[str, Any]:
        return {"raters": [self.first, self.second], "n": self.n, "kappa": self.kappa,
                "kappa_problem": self.kappa_problem,
                "applicable_agreement": None if self.applicable is None
                else {**self.applicable.as_json(), "n": self.applicable_n}}


@dataclass(frozen=True, slots=True)
class ClassAgreement:
    """Specific agreement on one label: of the pairs of labels involving it, both it."""

    label: str
    pairs: int  # Σ n_uc (m_u - 1): ordered pairs of labels on a row whose first is this one
    value: float | None

    def as_json(self) -> dict[str, Any]:
        return {"label": self.label, "value": self.value, "pairs": self.pairs}


@dataclass(frozen=True)
class Agreement:
    """Every agreement figure of one judge's raters."""

    raters: tuple[str, ...]
    units: int  # rated units
    pairable: int  # units with two labels or more
    alpha: Interval
    draws: int
    undefined_draws: int
    seed: int
    pairs: tuple[PairAgreement, ...]
    classes: tuple[ClassAgreement, ...]

    def as_json(self) -> dict[str, Any]:
        return {"raters": list(self.raters), "units": self.units, "pairable": self.pairable,
                "alpha": {**self.alpha.as_json(), "method": "bootstrap over units",
                          "draws": self.draws, "undefined_draws": self.undefined_draws,
                          "seed": self.seed},
                "pairs": [pair.as_json() for pair in self.pairs],
                "classes": [c.as_json() for c in self.classes]}


def counts_matrix(labels: Mapping[Unit, Mapping[str, str]]) -> npt.NDArray[np.float64]:
    """unit x label counts of the units with two labels or more (rows in ``labels``' order)."""
    import numpy as np

    index = {label: i for i, label in enumerate(LABELS)}
    rows = [[0.0] * len(LABELS) for given in labels.values() if len(given) >= 2]
    for row, given in zip(rows, (g for g in labels.values() if len(g) >= 2), strict=True):
        for label in given.values():
            row[index[label]] += 1
    return np.array(rows, dtype=np.float64).reshape(len(rows), len(LABELS))


def alpha_of(counts: npt.NDArray[np.float64]) -> float | None:
    """Nominal alpha of a unit x label counts matrix; None when undefined."""
    import numpy as np

    value = float(_alphas(np.ones((1, counts.shape[0])), counts)[0])
    return None if np.isnan(value) else value


def _alphas(weights: npt.NDArray[np.float64],
            counts: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Alpha for each row of ``weights`` (how many times each unit is counted), NaN
    where undefined (every label counted is the same one)."""
    import numpy as np

    m = counts.sum(axis=1)
    disagreeing = (m * m - (counts * counts).sum(axis=1)) / (m - 1)
    n = weights @ m
    observed = weights @ disagreeing
    per_label = weights @ counts
    expected = n * n - (per_label * per_label).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        alphas: npt.NDArray[np.float64] = np.where(
            expected > 0, 1 - (n - 1) * observed / expected, np.nan)
    return alphas


def bootstrap_alphas(counts: npt.NDArray[np.float64], draws: int,
                     seed: int) -> npt.NDArray[np.float64]:
    """Alpha of ``draws`` resamples of the units (NaN where a resample has one label)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    units = counts.shape[0]
    found = []
    for start in range(0, draws, _CHUNK):
        size = min(_CHUNK, draws - start)
        weights = rng.multinomial(units, np.full(units, 1 / units), size=size)
        found.append(_alphas(weights.astype(np.float64), counts))
    return np.concatenate(found)


def alpha_interval(labels: Mapping[Unit, Mapping[str, str]], *, draws: int = DRAWS,
                   seed: int = SEED) -> tuple[Interval, int]:
    """Alpha with its bootstrap 95% interval, and how many draws had no alpha.

    Raises :class:`AgreementRefused` when no unit carries two labels, when every label
    is the same one, or when too many resamples hold a single label."""
    import numpy as np

    if draws < 1000:
        raise ValueError("the bootstrap makes at least 1,000 draws")
    counts = counts_matrix(labels)
    if counts.shape[0] == 0:
        raise AgreementRefused("no row is labelled by two raters or more: agreement compares "
                               "raters on the same rows (label some rows with a second "
                               "--rater)")
    value = alpha_of(counts)
    if value is None:
        only = LABELS[int(np.argmax(counts.sum(axis=0)))]
        raise AgreementRefused(f"Krippendorff's alpha is undefined: every label on the rows "
                               f"two raters or more labelled is {only}, so there is no "
                               "disagreement to expect (label rows of other classes too)")
    alphas = bootstrap_alphas(counts, draws, seed)
    defined = alphas[~np.isnan(alphas)]
    undefined = draws - defined.size
    if undefined > _MAX_UNDEFINED * draws:
        raise AgreementRefused(f"alpha is {value:.3f}, but too few rows with two raters carry "
                               f"different labels to bound it: {undefined} of {draws} "
                               "resamples of the rows hold a single label (label more rows "
                               "with two raters)")
    low, high = (float(q) for q in np.quantile(defined, [0.025, 0.975]))
    return Interval(value, min(low, value), max(high, value)), undefined


def agreement(labels: Mapping[Unit, Mapping[str, str]], *, draws: int = DRAWS,
              seed: int = SEED) -> Agreement:
    """Every figure over ``labels`` (unit -> rater -> label; ``adjudicated`` left out by
    the caller). Raises :class:`AgreementRefused` for what cannot be computed."""
    raters = sorted({rater for given in labels.values() for rater in given})
    if len(raters) < 2:
        named = f" ({raters[0]})" if raters else ""
        raise AgreementRefused(f"agreement needs two raters; the annotations name "
                               f"{len(raters)}{named}: label the rows again with another "
                               "--rater")
    interval, undefined = alpha_interval(labels, draws=draws, seed=seed)
    pairs = tuple(pair_agreement(labels, first, second)
                  for first, second in combinations(raters, 2))
    return Agreement(tuple(raters), len(labels), sum(len(g) >= 2 for g in labels.values()),
                     interval, draws, undefined, seed, pairs, class_agreement(labels))


def pair_agreement(labels: Mapping[Unit, Mapping[str, str]], first: str,
                   second: str) -> PairAgreement:
    """Kappa and applicable agreement of two raters over the units both labelled."""
    both = [(given[first], given[second]) for given in labels.values()
            if first in given and second in given]
    kappa, problem = cohen_kappa(both)
    applicable = [a == b for a, b in both if "pass" in (a, b) or "fail" in (a, b)]
    return PairAgreement(first, second, len(both), kappa, problem,
                         wilson_interval(sum(applicable), len(applicable)), len(applicable))


def cohen_kappa(pairs: Sequence[tuple[str, str]]) -> tuple[float | None, str | None]:
    """Cohen's kappa of paired labels, or None with the reason it is undefined."""
    if not pairs:
        return None, "no row is labelled by both"
    n = len(pairs)
    observed = sum(a == b for a, b in pairs) / n
    expected = sum((sum(a == label for a, _ in pairs) / n) * (sum(b == label for _, b in pairs)
                                                              / n) for label in LABELS)
    if expected >= 1:
        return None, f"both gave only {pairs[0][0]}: kappa is undefined"
    return (observed - expected) / (1 - expected), None


def class_agreement(labels: Mapping[Unit, Mapping[str, str]]) -> tuple[ClassAgreement, ...]:
    """Specific agreement on each label, over the units with two labels or more."""
    found = []
    for label in LABELS:
        agreeing = involving = 0
        for given in labels.values():
            m = len(given)
            if m < 2:
                continue
            count = sum(value == label for value in given.values())
            agreeing += count * (count - 1)
            involving += count * (m - 1)
        found.append(ClassAgreement(label, involving,
                                    agreeing / involving if involving else None))
    return tuple(found)
