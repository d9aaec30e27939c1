"""For any counts, every interval the tool prints has low <= value <= high, and no input
reaches an internal error: an estimate is made, or refused with a sentence.

:class:`introspection_cli.statistics.Interval` checks the ordering where every
interval is built, so a method that produced an inverted or off-centre one would
raise here; the tests also check each interval's range.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

from introspection_cli.errors import IntrospectionError
from introspection_cli.estimation.counts import (
    LABELS,
    OUTCOMES,
    Confusion,
    EstimateRefused,
    ProductionCounts,
)
from introspection_cli.estimation.ppi import Stratum, ppi_rate
from introspection_cli.estimation.threeway import corrected_rate, prepare
from introspection_cli.evaluation.runner import EvalOptions
from introspection_cli.statistics import (
    Interval,
    NoBetterThanChance,
    corrected_pass_rate,
    paired_difference,
    wilson_interval,
)
from introspection_cli.workflows.estimate import EstimateSettings, estimate_judge
from tests.certification.test_estimate_honest import report_for
from tests.evaluation.stub_model_server import StubModelServer


def _ordered(interval: Interval | dict[str, float], low: float = 0.0, high: float = 1.0) -> None:
    if isinstance(interval, dict):
        interval = Interval(interval["value"], interval["low"], interval["high"])
    assert low <= interval.low <= interval.value <= interval.high <= high, interval


_COUNT = st.integers(min_value=0, max_value=80)


@given(st.integers(0, 10_000).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_wilson(case: tuple[int, int]) -> None:
    interval = wilson_interval(*case)
    if case[1] == 0:
        assert interval is None
    else:
        assert interval is not None
        _ordered(interval)


@given(st.lists(st.integers(0, 500), min_size=4, max_size=4))
def test_newcombe_paired_difference(counts: list[int]) -> None:
    interval = paired_difference(*counts)
    assert (interval is None) == (sum(counts) == 0)
    if interval is not None:
        _ordered(interval, -1.0, 1.0)


# Cheap: searched widely. The audit's cases: TPR 1/1 with TNR 1/4 divided by zero, with
# TNR 1/5 came out inverted (value 0.0, low 1.0, high 0.0).
@settings(max_examples=2000)
@example((50, 100), (1, 1), (1, 4))
@example((50, 100), (1, 1), (1, 5))
@given(st.integers(1, 5000).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))),
       st.integers(1, 300).flatmap(lambda m: st.tuples(st.integers(0, m), st.just(m))),
       st.integers(1, 300).flatmap(lambda m: st.tuples(st.integers(0, m), st.just(m))))
def test_the_binary_correction_is_ordered_or_refused(production: tuple[int, int],
                                                     passes: tuple[int, int],
                                                     fails: tuple[int, int]) -> None:
    (k, n), (right_passes, m1), (right_fails, m0) = production, passes, fails
    try:
        interval = corrected_pass_rate(k / n, n, right_passes / m1, right_fails / m0,
                                       pass_rows=m1, fail_rows=m0)
    except NoBetterThanChance:
        return
    _ordered(interval)


_ANY_CONFUSION = st.fixed_dictionaries({label: st.fixed_dictionaries(
    {outcome: _COUNT for outcome in OUTCOMES}) for label in LABELS})
# Mostly right, as judges worth estimating with are (any counts refuse too often to reach
# the estimate): the label's own verdict up to 200 rows, the others up to 30.
_GOOD_CONFUSION = st.fixed_dictionaries({label: st.fixed_dictionaries(
    {outcome: st.integers(0, 200 if outcome == label else 30) for outcome in OUTCOMES})
    for label in LABELS})
_CONFUSION = st.one_of(_ANY_CONFUSION, _GOOD_CONFUSION)
_PRODUCTION = st.tuples(st.integers(0, 3000), st.integers(0, 3000),
                        st.one_of(st.none(), st.integers(0, 3000)))


@settings(max_examples=150)
@given(_CONFUSION, _PRODUCTION)
def test_the_three_way_correction_is_ordered_or_refused(
        confusion: dict[str, dict[str, int]],
        production: tuple[int, int, int | None]) -> None:
    passed, failed, not_applicable = production
    try:
        model = prepare(Confusion.from_json(confusion),
                        counts_not_applicable=not_applicable is not None)
        result = corrected_rate(model, ProductionCounts(passed, failed, not_applicable))
    except EstimateRefused as refusal:
        assert str(refusal)  # a sentence
        return
    _ordered(result.theta)
    if result.not_applicable is not None:
        _ordered(result.not_applicable)


@given(st.lists(st.tuples(st.sampled_from([None, "pass", "fail", "not_applicable"]),
                          st.sampled_from(["pass", "fail", "not_applicable", "gated"])),
                min_size=1, max_size=400), st.integers(1, 3))
def test_ppi_is_ordered_or_absent(rows: list[tuple[str | None, str]], strata: int) -> None:
    groups: list[list[tuple[str | None, str]]] = [rows[i::strata] for i in range(strata)]
    built = []
    for group in groups:
        labelled = np.array([[label == "pass", label in ("pass", "fail"), verdict == "pass",
                              verdict in ("pass", "fail")] for label, verdict in group
                             if label is not None], dtype=float).reshape(-1, 4)
        unlabelled = np.array([[verdict == "pass", verdict in ("pass", "fail")]
                               for label, verdict in group if label is None],
                              dtype=float).reshape(-1, 2)
        if len(labelled) == 0:
            return  # the workflow refuses a segment without labelled rows before PPI
        built.append(Stratum(labelled, unlabelled, len(group) / len(rows)))
    rate = ppi_rate(built)
    if rate is None:
        return
    bounds = rate.interval()
    if bounds is not None:
        _ordered(Interval(rate.value, *bounds))
    labels = [label for label, _ in rows if label in ("pass", "fail")]
    wilson = wilson_interval(labels.count("pass"), len(labels))
    if wilson is not None:
        _ordered(wilson)


def test_the_command_never_reaches_an_internal_error(tmp_path: Path,
                                                     stub: StubModelServer) -> None:
    """The estimate command, in process, on a real report whose calibration counts and the
    production counts hypothesis chooses: a result, or an error of the tool's own."""
    root, report = report_for(tmp_path, {("pass", "pass"): 16, ("fail", "fail"): 16})
    template = json.loads(report.read_text())
    options = EvalOptions(judges=("helpful",), cache_dir=tmp_path / "cache")
    outcomes = {"estimated": 0, "refused": 0}

    @settings(max_examples=80)
    @given(_CONFUSION, _PRODUCTION)
    def estimate_for(confusion: dict[str, dict[str, int]],
                     production: tuple[int, int, int | None]) -> None:
        template["judges"][0]["splits"]["test"]["confusion"] = confusion
        report.write_text(json.dumps(template))
        passed, failed, not_applicable = production
        settings_ = EstimateSettings(judge="helpful", passed=passed, total=passed + failed,
                                     not_applicable=not_applicable, report=report,
                                     split="test", allow_misfit=True, fmt="json")
        try:
            result = estimate_judge(root, options, settings_)
        except IntrospectionError as error:
            assert str(error)
            outcomes["refused"] += 1
            return
        outcomes["estimated"] += 1
        payload: dict[str, Any] = json.loads(result.stdout)
        _ordered(payload["corrected"])
        if payload["not_applicable"] is not None:
            _ordered(payload["not_applicable"])

    estimate_for()
    assert outcomes["estimated"] and outcomes["refused"], outcomes  # both paths were taken
