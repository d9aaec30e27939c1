"""The typed eval report: ``as_json()`` gives today's bytes, ``from_json()`` reads it back.

The golden reports (``tests/evaluation/golden/``) hold every part a run's report
can have (rejected rows, held-out splits, gates, several models with their
comparison, batch usage); built reports from random rows cover the rest.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from introspection_cli import strictjson
from introspection_cli.evaluation.outcomes import EvalRun, JudgeRun, RejectedRow, RowOutcome, Usage
from introspection_cli.formats import Format
from introspection_cli.reporting.assemble import build_report
from introspection_cli.reporting.gates import GateSettings, evaluate_gates
from introspection_cli.reporting.metrics import SCORED
from introspection_cli.reporting.model import report_json
from introspection_cli.reporting.registry import ReportKind, render
from introspection_cli.reporting.report import EvalReport, HeldOut
from tests.reporting.test_baseline import BEFORE, as_version_1, make_report
from tests.reporting.test_report import row_outcomes

GOLDEN = sorted((Path(__file__).parents[1] / "evaluation" / "golden").glob("*.json"))


def test_there_are_golden_reports_to_read() -> None:
    assert len(GOLDEN) >= 4


@pytest.mark.parametrize("path", GOLDEN, ids=lambda path: path.stem)
def test_golden_report_round_trips_byte_for_byte(path: Path) -> None:
    data = path.read_bytes()
    report = EvalReport.from_json(strictjson.loads(data))
    assert report_json(report.as_json()).encode("utf-8") == data
    assert render(ReportKind.EVAL, Format.JSON, report).encode("utf-8") == data
    assert EvalReport.from_json(report.as_json()) == report


def test_the_compared_golden_report_is_read_into_its_parts() -> None:
    path = next(path for path in GOLDEN if path.stem == "compared_cold")
    report = EvalReport.from_json(strictjson.loads(path.read_bytes()))
    first = report.judges[0]
    assert first.usage is not None and first.usage.needed is not None
    assert [model.model for model in first.models] == ["stub-model-b"]
    assert first.model_comparison is not None
    assert isinstance(first.splits["test"], HeldOut)
    assert list(first.splits)[-1] == SCORED
    assert report.gates and report.gates[0].judge == first.name


@given(st.lists(row_outcomes, max_size=30), st.none() | st.integers(min_value=0, max_value=9),
       st.floats(0, 1))
def test_built_report_round_trips(rows: list[RowOutcome], held_out: int | None,
                                  bar: float) -> None:
    if held_out is not None:
        rows = [row for row in rows if row.split != "test"]
    run = EvalRun("r", (JudgeRun("j", "openai", "m", tuple(rows),
                                 rejected=(RejectedRow(3, "E1", "bad row"),),
                                 held_out=held_out),), Usage(len(rows), 0, 10, 2), samples=2)
    data: dict[str, Any] = build_report(run)
    data["gates"] = [gate.as_json() for gate in
                     evaluate_gates(data, GateSettings(min_agreement=bar))]
    report = EvalReport.from_json(data)
    assert report.as_json() == data
    assert report_json(report.as_json()) == report_json(data)
    assert EvalReport.from_json(report.as_json()) == report


def test_a_version_1_report_is_read_with_what_it_lacks_left_empty() -> None:
    current = make_report(BEFORE)
    old = EvalReport.from_json(as_version_1(current))
    judge = old.judges[0]
    assert (old.version, old.samples, old.gates, judge.fingerprint) == (1, None, (), None)
    scored = judge.splits[SCORED]
    assert not isinstance(scored, HeldOut) and scored.na_agreement is None
    assert [row.conversation_id for row in judge.rows] == \
        [row["conversation_id"] for row in current["judges"][0]["rows"]]
