"""The raters' agreement against independent oracles: Krippendorff's alpha against the
``krippendorff`` package, Cohen's kappa against scikit-learn, per-class agreement against
a count of every pair, on generated labels with missing ratings; the bootstrap interval's
coverage by a seeded simulation; degenerate labels refused with a sentence."""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Mapping

import krippendorff
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score

from introspection_cli.annotations.agreement import (
    AgreementRefused,
    agreement,
    alpha_interval,
    alpha_of,
    class_agreement,
    cohen_kappa,
    counts_matrix,
)
from introspection_cli.annotations.record import LABELS
from tests.conftest import REPO

RATERS = ("ana", "ben", "chen", "dee")
Labels = dict[tuple[str, str], dict[str, str]]

#: Each unit: a rater -> label map with any rater missing.
labels_strategy = st.lists(
    st.dictionaries(st.sampled_from(RATERS), st.sampled_from(LABELS), max_size=len(RATERS)),
    min_size=1, max_size=40).map(lambda units: {(f"c{i}", "h"): g for i, g in enumerate(units)})


def _reliability(labels: Mapping[tuple[str, str], Mapping[str, str]]) -> list[list[float]]:
    return [[LABELS.index(given[r]) if r in given else math.nan for given in labels.values()]
            for r in RATERS]


@given(labels_strategy)
def test_alpha_is_the_krippendorff_package_s_with_missing_ratings(labels: Labels) -> None:
    ours = alpha_of(counts_matrix(labels))
    pairable = [g for g in labels.values() if len(g) >= 2]
    if not pairable or len({v for g in pairable for v in g.values()}) < 2:
        assert ours is None  # undefined: no pair, or a single label everywhere
        return
    oracle = krippendorff.alpha(reliability_data=_reliability(labels),
                                level_of_measurement="nominal", value_domain=[0, 1, 2])
    assert ours is not None and ours == pytest.approx(oracle, abs=1e-9)


@given(labels_strategy, st.sampled_from([(a, b) for i, a in enumerate(RATERS)
                                          for b in RATERS[i + 1:]]))
def test_kappa_per_pair_is_scikit_learn_s(labels: Labels, pair: tuple[str, str]) -> None:
    first, second = pair
    both = [(g[first], g[second]) for g in labels.values() if first in g and second in g]
    kappa, problem = cohen_kappa(both)
    if not both:
        assert kappa is None and problem == "no row is labelled by both"
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scikit-learn warns, then answers NaN, when undefined
        oracle = cohen_kappa_score([a for a, _ in both], [b for _, b in both],
                                   labels=list(LABELS))
    if math.isnan(oracle):
        assert kappa is None and problem is not None and "undefined" in problem
    else:
        assert kappa == pytest.approx(oracle, abs=1e-9)


@given(labels_strategy)
def test_per_class_agreement_counts_every_pair_of_labels_on_a_row(labels: Labels) -> None:
    """Of the ordered pairs of two raters' labels on one row whose first is c, the share
    whose second is c too."""
    for found in class_agreement(labels):
        starting = both = 0
        for rated in labels.values():
            values = list(rated.values())
            for i, first in enumerate(values):
                for j, second in enumerate(values):
                    if i != j and first == found.label:
                        starting += 1
                        both += second == found.label
        assert found.pairs == starting
        assert found.value == (pytest.approx(both / starting) if starting else None)


def _sample(rng: np.random.Generator, units: int) -> Labels:
    """Three raters, each missing a fifth of the rows, each right 3 times in 4 (else a
    label at random), on rows of true classes 50:35:15."""
    truth = rng.choice(3, size=units, p=[0.5, 0.35, 0.15])
    labels: Labels = {}
    for unit in range(units):
        given = {}
        for rater in RATERS[:3]:
            if rng.random() < 0.2:
                continue
            right = rng.random() < 0.75
            given[rater] = LABELS[truth[unit]] if right else LABELS[rng.integers(3)]
        labels[(f"c{unit}", "h")] = given
    return labels


def test_the_bootstrap_interval_covers_the_population_alpha_about_95_percent() -> None:
    """200 samples of 60 rows from a population whose alpha is known (from 100,000 rows):
    the 95% interval holds it in 0.90-0.99 of them (binomial noise on 200 is ±3%)."""
    rng = np.random.default_rng(7)
    population = alpha_of(counts_matrix(_sample(rng, 100_000)))
    assert population is not None
    covered = 0
    for replication in range(200):
        interval, _ = alpha_interval(_sample(rng, 60), draws=1000, seed=replication)
        covered += interval.low <= population <= interval.high
    assert 0.90 <= covered / 200 <= 0.99
    said = re.search(r"interval holding the population's alpha in (\d+)% of them",
                     (REPO / "docs" / "statistics.md").read_text(encoding="utf-8"))
    assert said is not None and int(said.group(1)) == round(100 * covered / 200)


def test_the_interval_is_seeded_and_holds_alpha() -> None:
    labels = _sample(np.random.default_rng(3), 25)
    first, again = alpha_interval(labels, seed=5), alpha_interval(labels, seed=5)
    assert first == again
    assert first[0].low <= first[0].value <= first[0].high
    assert alpha_interval(labels, seed=6) != first


def test_figures_for_three_raters_with_missing_ratings() -> None:
    labels = _sample(np.random.default_rng(11), 50)
    result = agreement(labels)
    assert result.raters == ("ana", "ben", "chen")
    assert [(p.first, p.second) for p in result.pairs] == [("ana", "ben"), ("ana", "chen"),
                                                          ("ben", "chen")]
    assert result.draws >= 1000 and result.pairable <= result.units == 50
    for pair in result.pairs:
        assert pair.applicable is not None
        assert pair.applicable.low <= pair.applicable.value <= pair.applicable.high


@pytest.mark.parametrize(("labels", "sentence"), [
    ({("c1", "h"): {"ana": "pass"}, ("c2", "h"): {"ana": "fail"}},
     "agreement needs two raters; the annotations name 1 (ana)"),
    ({("c1", "h"): {"ana": "pass"}, ("c2", "h"): {"ben": "fail"}},
     "no row is labelled by two raters or more"),
    ({("c1", "h"): {"ana": "pass", "ben": "pass"}, ("c2", "h"): {"ana": "pass", "ben": "pass"},
      ("c3", "h"): {"ana": "fail"}},
     "Krippendorff's alpha is undefined: every label on the rows two raters or more labelled "
     "is pass"),
    ({("c1", "h"): {"ana": "pass", "ben": "fail"}, ("c2", "h"): {"ana": "pass", "ben": "pass"}},
     "too few rows with two raters carry different labels to bound it"),
])
def test_degenerate_labels_are_refused_with_a_sentence(labels: Labels, sentence: str) -> None:
    with pytest.raises(AgreementRefused) as refused:
        agreement(labels)
    assert sentence in str(refused.value) and "nan" not in str(refused.value).lower()
