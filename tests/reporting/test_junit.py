"""``judges eval --junit FILE`` read back by a JUnit XML parser, as a CI test reporter would."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import junitparser
import pytest

from introspection_cli.evaluation.outcomes import EvalRun, JudgeRun, RejectedRow, RowOutcome, Usage
from introspection_cli.reporting.assemble import build_report
from introspection_cli.reporting.gates import GateSettings, evaluate_gates
from introspection_cli.reporting.render_junit import render_junit, xml_text

HOSTILE = "</failure><!-- ]]> & \x1b[2J\x00\x07 \ud800 \ufffe"


def _report(judges: tuple[JudgeRun, ...], settings: GateSettings) -> dict[str, Any]:
    report = build_report(EvalRun("path/to/recipe", judges, Usage(3, 0, 100, 10)))
    report["gates"] = [gate.as_json() for gate in evaluate_gates(report, settings)]
    return report


def _read(tmp_path: Path, text: str) -> junitparser.JUnitXml:
    path = tmp_path / "junit.xml"
    path.write_text(text, encoding="utf-8")
    return junitparser.JUnitXml.fromfile(str(path))


def _cases(xml: junitparser.JUnitXml) -> dict[str, dict[str, Any]]:
    """suite name -> case name -> the failure message, or None for a passing case."""
    cases: dict[str, dict[str, Any]] = {}
    for suite in xml:
        cases[suite.name] = {}
        for case in suite:
            failures = [result for result in case.result
                        if isinstance(result, junitparser.Failure)]
            cases[suite.name][case.name] = failures[0].message if failures else None
    return cases


GOOD = JudgeRun("billing", "openai", "gpt-x", (
    RowOutcome(1, "conv_1", "dev", "pass", "pass", ("pass",), reasoning="ok"),
    RowOutcome(2, "conv_2" + HOSTILE, "dev", "pass", "fail", ("fail",), reasoning=HOSTILE),
    RowOutcome(3, "conv_3", "dev", "fail", "fail", ("fail",), reasoning="fine"),
), (RejectedRow(4, "fixture-hash-mismatch", "snapshot_hash does not match " + HOSTILE),))
ALL_ERRORS = JudgeRun("tone", "anthropic", "claude-x", (
    RowOutcome(1, "conv_1", "dev", "pass", "error", ("error",), error="HTTP 503 " + HOSTILE),
    RowOutcome(2, "conv_2", "dev", "fail", "error", ("error",), error="HTTP 503"),
))


def test_a_case_per_judge_and_gate_with_the_right_failures(tmp_path: Path) -> None:
    report = _report((GOOD, ALL_ERRORS), GateSettings(min_tpr=0.9, min_kappa=-1.0))
    xml = _read(tmp_path, render_junit(report))
    assert _cases(xml).keys() == {"judge billing", "judge tone"}
    billing = _cases(xml)["judge billing"]
    assert list(billing) == ["judge billing", "tpr lower bound ≥ 0.9 on split scored",
                             "kappa ≥ -1 on split scored", "error rate ≤ 0.1 on split scored"]
    assert billing["judge billing"] == "1 calibration row(s) rejected (lines 4)"
    assert billing["tpr lower bound ≥ 0.9 on split scored"].startswith(
        "tpr lower bound on split scored ≥ 0.9: 0.095, MISSED")
    assert billing["kappa ≥ -1 on split scored"] is None
    assert billing["error rate ≤ 0.1 on split scored"] is None
    # An all-error judge fails: it judged nothing and its error rate is 1.
    tone = _cases(xml)["judge tone"]
    assert tone["judge tone"] == "no row was judged (2 evaluated: 2 error(s), 0 gated)"
    assert tone["error rate ≤ 0.1 on split scored"] == (
        "error rate on split scored ≤ 0.1: 1.000, MISSED")
    assert tone["tpr lower bound ≥ 0.9 on split scored"] is not None  # null misses
    assert tone["kappa ≥ -1 on split scored"] is not None
    assert (xml.tests, xml.failures, xml.errors) == (8, 6, 0)
    suite = next(iter(xml))
    assert (suite.tests, suite.failures) == (4, 2)


def test_untrusted_text_is_escaped_and_the_file_always_parses(tmp_path: Path) -> None:
    report = _report((GOOD, ALL_ERRORS), GateSettings())
    text = render_junit(report)
    text.encode("utf-8")  # no lone surrogate left to fail the write
    xml = _read(tmp_path, text)  # a parser accepts it: no raw control character
    assert "</failure><!--" not in text
    billing = next(iter(xml))
    (judge_case, *_) = billing
    out = judge_case.system_out
    assert "disagreement: line 2 conv_2&lt;/failure&gt;" not in out  # decoded by the parser
    assert "disagreement: line 2 conv_2</failure><!-- ]]> &" in out
    assert "\x00" not in out and "\x1b" not in out
    props = {prop.name: prop.value for prop in billing.properties()}
    assert props["provider"] == "openai" and props["model"] == "gpt-x"


@pytest.mark.parametrize(("raw", "shown"), [
    ("a\x00b", "a\\u0000b"), ("\x0b\x0c", "\\u000b\\u000c"), ("tab\tok\n", "tab\tok\n"),
    ("\ud83d", "\\ud83d"), ("\uffff", "\\uffff"), ("é😀", "é😀"),
])
def test_xml_text_writes_what_xml_cannot_hold_as_visible_escapes(raw: str, shown: str) -> None:
    assert xml_text(raw) == shown


def test_no_judge_is_an_empty_but_valid_document(tmp_path: Path) -> None:
    xml = _read(tmp_path, render_junit(_report((), GateSettings())))
    assert (xml.tests, xml.failures) == (0, 0)


def test_a_bound_at_the_end_of_the_scale_is_marked_in_the_summary() -> None:
    rows = tuple(RowOutcome(i, f"c{i}", "dev", "pass", "pass", ("pass",)) for i in range(1, 9))
    xml = render_junit(build_report(EvalRun("r", (JudgeRun("j", "openai", "m", rows),))))
    assert "tpr 1.000 (0.676–1.000†)" in xml
    assert "† a bound at the end of the scale" in xml
