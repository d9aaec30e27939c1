"""Golden HTML pages: the golden eval reports (tests/evaluation/golden) drawn by
``--html`` give exactly these bytes.

Written before the page renderer moved from reading the report's JSON by key to
reading the typed report, to hold its output in place while it moves. The pages
cover every part of a page: held-out, null and edge statistics, gates, errors and
disagreements with and without their conversation, rejected rows, a model
comparison, the human ceiling (with an alpha and without), and a baseline
comparison with changed, relabelled, re-split and unpaired rows and judges on
one side only.

To re-record after an intended change of the page: ``UPDATE_GOLDEN=1 pytest
tests/reporting/test_golden_html.py``, and review the diff of ``golden/``.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from introspection_cli.evaluation.outcomes import EvalRun, JudgeRun, RowOutcome, Usage
from introspection_cli.pricing import ModelPrice, PriceTable
from introspection_cli.reporting.assemble import assemble_report
from introspection_cli.reporting.baseline import compare_with_baseline
from introspection_cli.reporting.gates import GateSettings
from introspection_cli.reporting.model import Provenance, load_report_schema
from introspection_cli.reporting.render_html import render_html
from introspection_cli.reporting.report import EvalReport
from tests.support.golden import check_golden

REPORTS = Path(__file__).parent.parent / "evaluation" / "golden"
GOLDEN = Path(__file__).parent / "golden"

RATERS = {
    "raters": ["Ana", "Ben", "Chen\u202e"], "units": 6,
    "alpha": {"value": 0.41234, "low": -0.0512, "high": 0.80431, "draws": 2000},
    "problem": None,
    "pairs": [
        {"raters": ["Ana", "Ben"], "n": 6, "kappa": 0.5,
         "applicable_agreement": {"value": 0.8, "low": 0.37553, "high": 0.96378, "n": 5}},
        {"raters": ["Ana", "Chen\u202e"], "n": 5, "kappa": None,
         "applicable_agreement": None},
    ],
    "conflicts": 2,
}
NO_ALPHA = {"raters": ["Ana"], "units": 6, "alpha": None,
            "problem": "agreement needs two raters <b>who</b> labelled a row", "pairs": [],
            "conflicts": 0}


def _report(name: str) -> dict[str, Any]:
    """A golden report, its stand-ins for the version, time and path kept (so no golden
    page is a page a run wrote: tests/test_no_results_committed.py)."""
    return json.loads((REPORTS / f"{name}.json").read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def _transcripts(report: dict[str, Any]) -> dict[str, dict[int, list[Any]]]:
    """A conversation for every row but each judge's first (whose row "changed after the
    run")."""
    return {judge["name"]: {row["line"]: [
        {"type": "message", "role": "user", "text": f"row {row['line']}: € – é ü"},
        {"type": "message", "role": "assistant", "text": "</script><!-- reply"}]
        for row in judge["rows"][1:]} for judge in report["judges"]}


def _with_raters(report: dict[str, Any], raters: dict[str, Any]) -> dict[str, Any]:
    report = copy.deepcopy(report)
    report["judges"][0]["raters"] = raters
    # Valid but for the stand-ins, which no schema takes.
    jsonschema.Draft202012Validator(load_report_schema()).validate(
        {**report, "created_at": "2026-12-03T12:00:00Z", "tool_version": "0.9.0"})
    return report


def _baseline(report: dict[str, Any]) -> dict[str, Any]:
    """``report`` as an earlier run: one row's outcome and another's label differ, one
    row was in another split, one is gone, one's conversation changed, one was
    rejected; the second judge had another name."""
    baseline = copy.deepcopy(report)
    first, second = baseline["judges"]
    rows = first["rows"]
    rows[1]["outcome"], rows[1]["samples"] = "pass", ["pass"]
    rows[2]["expected"] = "pass"
    rows[3]["split"] = "train"
    rows[4]["snapshot_hash"] = "sha256:" + "0" * 64
    del rows[5]
    first["model"] = "stub-model-old"
    second["name"] = "helpful_before"
    return baseline


def _page(report: dict[str, Any], **kwargs: Any) -> str:
    """The page drawn from the JSON and from the typed report (one and the same), its
    styles and scripts (the same files in every page, and pinned by their hashes in the
    Content Security Policy) cut out to keep the golden files short."""
    page = render_html(report, transcripts=_transcripts(report), **kwargs)
    assert render_html(EvalReport.from_json(report), transcripts=_transcripts(report),
                       **kwargs) == page
    return _ASSET.sub(r"\1(an asset)\2", page)


_ASSET = re.compile(r"(<style>|<script>).*?(</style>|</script>)", re.DOTALL)


@pytest.mark.parametrize("name", ["faulty_samples", "compared_cold", "refused", "batch"])
def test_each_golden_report_gives_the_golden_page(name: str) -> None:
    check_golden(GOLDEN / f"{name}.html", _page(_report(name)))


def test_the_human_ceiling_gives_the_golden_pages() -> None:
    report = _report("faulty_samples")
    check_golden(GOLDEN / "raters.html", _page(_with_raters(report, RATERS)))
    check_golden(GOLDEN / "raters_no_alpha.html", _page(_with_raters(report, NO_ALPHA)))


def test_a_baseline_comparison_gives_the_golden_page() -> None:
    report = _report("compared_cached")
    comparison = compare_with_baseline(report, _baseline(report))
    assert comparison.judges_only_in_baseline and comparison.judges_only_in_current
    assert comparison.judges[0].changed and comparison.judges[0].split_changes
    assert comparison.judges[0].unpaired
    check_golden(GOLDEN / "baseline.html", _page(report, comparison=comparison))


def test_a_report_as_a_run_builds_it_gives_the_page_its_json_gives() -> None:
    """The golden pages are drawn from JSON; a run draws its page from the value it built
    (gates, prices, raters, a second model, a held-out split): the same page."""
    rows = (RowOutcome(1, "c1", "dev", "pass", "fail", ("fail", "pass", "fail"), True, "no"),
            RowOutcome(2, "c2", "train", "fail", "error", ("error",), error="timed out"),
            RowOutcome(3, "c3", None, "not_applicable", "gated"),
            RowOutcome(4, "c4", "dev", "pass", "pass", ("pass",), reasoning="yes"))
    other = tuple(row._replace(outcome="pass", samples=("pass",)) for row in rows)
    run = EvalRun("recipe", (
        JudgeRun("billing", "openai", "gpt-x", rows, fingerprint="sha256:" + "1" * 64,
                 held_out=2, usage=Usage(4, 0, 400, 40)),
        JudgeRun("billing", "openai", "gpt-y", other, usage=Usage(4, 0, 380, 30))),
        Usage(8, 0, 780, 70), samples=3)
    prices = PriceTable({"gpt-x": ModelPrice(1.0, 0.5, 4.0), "gpt-y": ModelPrice(0.5, 0.25, 2.0)})
    report, _ = assemble_report(run, Provenance("0.9.0", "2026-12-03T12:00:00Z"),
                                GateSettings(min_tpr=0.5, min_agreement=0.9), prices=prices,
                                batch=False, raters={"billing": RATERS})
    assert report.gates and report.judges[0].model_comparison is not None
    page = render_html(report, transcripts=_transcripts(report.as_json()))
    assert page == render_html(report.as_json(), transcripts=_transcripts(report.as_json()))
    assert "Human ceiling" in page and "Models compared" in page and "MISSED" in page
