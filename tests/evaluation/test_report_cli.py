"""The report as the real ``introspection judges eval`` writes it, against the stub model server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from introspection_cli.cli.app import main
from introspection_cli.reporting.model import load_report_schema
from tests.evaluation.conftest import GATED_JUDGE, SENTINEL_KEY, fixture_row, write_recipe
from tests.evaluation.stub_model_server import StubModelServer

ROWS = [
    fixture_row("conv_ok", "Refund invoice INV-1 please VERDICT:pass", expected="pass",
                split="dev"),
    fixture_row("conv_miss", "Refund me VERDICT:fail", expected="pass", split="dev"),
    fixture_row("conv_na", "What time is it?", expected="not_applicable", split="test"),
    fixture_row("conv_bad", "Invoice question FAULT:wrong-enum", expected="fail", split=None),
]


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as info:
        main(args)
    out, err = capsys.readouterr()
    return int(info.value.code or 0), out, err


#: Every split, and an error ceiling the one bad reply in four stays under.
EVERYTHING = ["--split", "dev", "--split", "test", "--split", "unsplit", "--max-error-rate", "0.3"]


@pytest.fixture
def recipe(tmp_path: Path) -> Path:
    return write_recipe(tmp_path / "recipe", {"billing": (GATED_JUDGE, ROWS)})


def test_real_json_report_matches_the_schema_and_the_spec(
        stub: StubModelServer, recipe: Path, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    output = tmp_path / "report.json"
    code, out, err = run_cli(["judges", "eval", str(recipe), "--format", "json",
                              "--output", str(output), *EVERYTHING], capsys)
    assert code == 0, err
    report: dict[str, Any] = json.loads(out)
    assert json.loads(output.read_text(encoding="utf-8")) == report
    jsonschema.Draft202012Validator(load_report_schema()).validate(report)
    (judge,) = report["judges"]
    outcomes = {row["conversation_id"]: row["outcome"] for row in judge["rows"]}
    assert outcomes == {"conv_ok": "pass", "conv_miss": "fail", "conv_na": "gated",
                        "conv_bad": "error"}
    # Each row names the conversation text it judged (judges label --review relies on it).
    assert {row["conversation_id"]: row["snapshot_hash"] for row in judge["rows"]} == {
        row["source"]["conversation_id"]: row["snapshot_hash"] for row in ROWS}
    everything = judge["splits"]["scored"]
    # 4 rows = 2 judged + 1 gated + 1 error. Applicable agreement: 1 of the 2 rows labelled
    # pass or fail (the error is not scored); the gated row is na_agreement's, 1 of 1.
    assert (everything["n"], everything["judged"], everything["gated"],
            everything["errors"]) == (4, 2, 1, 1)
    assert everything["agreement"]["value"] == pytest.approx(1 / 2)
    assert everything["na_agreement"]["value"] == 1.0
    assert judge["splits"]["train"]["n"] == 0 and judge["splits"]["train"]["agreement"] is None
    assert judge["fingerprint"].startswith("sha256:")
    assert [(gate["statistic"], gate["met"]) for gate in report["gates"]] == [
        ("error_rate", True), ("judged", True)]
    assert report["report_version"] == 3 and report["git"] is None  # tmp_path: no git
    assert SENTINEL_KEY not in out


def test_the_test_split_is_held_out_unless_asked_for(
        stub: StubModelServer, recipe: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(["judges", "eval", str(recipe), "--format", "json",
                              "--max-error-rate", "0.5"], capsys)
    assert code == 0, err
    (judge,) = json.loads(out)["judges"]
    assert judge["splits"]["test"] == {"held_out": True, "n": 1}
    assert "conv_na" not in {row["conversation_id"] for row in judge["rows"]}
    assert not any("conv_na" in request.user_text for request in stub.requests)
    code, out, _ = run_cli(["judges", "eval", str(recipe), "--max-error-rate", "0.5"], capsys)
    assert "  test     1 rows held out: --split test or judges certify" in out
    code, out, _ = run_cli(["judges", "eval", str(recipe), "--format", "markdown",
                            "--max-error-rate", "0.5"], capsys)
    assert "| test | 1 rows held out: --split test or judges certify |" in out
    # Gating on the test split evaluates it.
    code, out, _ = run_cli(["judges", "eval", str(recipe), "--format", "json",
                            "--threshold-split", "test", "--min-agreement", "0"], capsys)
    (judge,) = json.loads(out)["judges"]
    assert judge["splits"]["test"]["n"] == 1 and "held_out" not in judge["splits"]["test"]

def test_real_baseline_run_shows_changes_and_thresholds_fail(
        stub: StubModelServer, recipe: Path, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    baseline = tmp_path / "before.json"
    code, _, _ = run_cli(["judges", "eval", str(recipe), "--output", str(baseline),
                          "--format", "json", *EVERYTHING], capsys)
    assert code == 0
    # Pretend the baseline run judged conv_miss correctly: this run regressed it.
    before = json.loads(baseline.read_text(encoding="utf-8"))
    miss = next(r for r in before["judges"][0]["rows"] if r["conversation_id"] == "conv_miss")
    miss["outcome"] = "pass"
    baseline.write_text(json.dumps(before), encoding="utf-8")

    code, out, err = run_cli(["judges", "eval", str(recipe), "--format", "markdown",
                              "--baseline", str(baseline), "--min-agreement", "0.9",
                              *EVERYTHING], capsys)
    assert code == 1
    assert "### Compared with baseline" in out
    assert "| conv_miss | pass | pass | fail |" in out
    assert ("0 now agree, 1 no longer agree; McNemar mid-p = 0.5, Holm-adjusted 1 (could be "
            "chance)") in out
    assert "❌ agreement lower bound on split scored ≥ 0.9: 0.095, MISSED" in out
    assert ("judge billing: agreement on split scored is 0.500 with 95% interval 0.095–0.905; "
            "its lower bound 0.095 is below --min-agreement 0.9") in err


def test_gate_hits_do_not_buy_min_agreement_through_the_command(
        stub: StubModelServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The audit's case end to end: 200 rows the gate skips, labelled not_applicable, and
    two judged rows, one misjudged. Counting the gate hits made agreement 0.995 and
    --min-agreement 0.95 passed with exit 0; applicable agreement is 1 of 2."""
    rows = [fixture_row(f"conv_na_{index}", f"What time is it? ({index})",
                        expected="not_applicable") for index in range(200)]
    rows += [fixture_row("conv_right", "Refund invoice INV-1 VERDICT:pass", expected="pass"),
             fixture_row("conv_wrong", "Refund invoice INV-2 VERDICT:pass", expected="fail")]
    recipe = write_recipe(tmp_path / "recipe", {"billing": (GATED_JUDGE, rows)})
    code, out, err = run_cli(["judges", "eval", str(recipe), "--format", "json",
                              "--min-agreement", "0.95"], capsys)
    assert code == 1, err
    (judge,) = json.loads(out)["judges"]
    scored = judge["splits"]["scored"]
    assert (scored["gated"], scored["judged"]) == (200, 2)
    assert scored["agreement"]["value"] == pytest.approx(1 / 2)
    assert scored["na_agreement"]["value"] == 1.0
    assert [(gate["statistic"], gate["met"]) for gate in json.loads(out)["gates"]
            if gate["statistic"] == "agreement"] == [("agreement", False)]
    assert "its lower bound 0.095 is below --min-agreement 0.95" in err
    assert len(stub.requests) == 2  # the gate skipped the 200 rows without a request


def test_broken_baseline_exits_1_with_the_file_named(
        stub: StubModelServer, recipe: Path, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    baseline = tmp_path / "before.json"
    baseline.write_text('{"report_version": 7}', encoding="utf-8")
    code, _, err = run_cli(["judges", "eval", str(recipe), "--baseline", str(baseline)], capsys)
    assert code == 1
    assert f"baseline {baseline} has report_version 7" in err
    assert "Traceback" not in err
    code, _, err = run_cli(["judges", "eval", str(recipe), "--baseline",
                            str(tmp_path / "missing.json")], capsys)
    assert code == 2 and "does not exist" in err


def test_junit_file_names_the_missed_gate_as_the_exit_code_does(
        stub: StubModelServer, recipe: Path, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    import junitparser

    junit = tmp_path / "out" / "junit.xml"
    junit.parent.mkdir()
    code, _, err = run_cli(["judges", "eval", str(recipe), "--junit", str(junit),
                            "--min-agreement", "0.9", *EVERYTHING], capsys)
    assert code == 1, err
    xml = junitparser.JUnitXml.fromfile(str(junit))
    (suite,) = xml
    failed = {case.name: [r.message for r in case.result if isinstance(r, junitparser.Failure)]
              for case in suite}
    assert failed == {"judge billing": [], "agreement lower bound ≥ 0.9 on split scored": [
        "agreement lower bound on split scored ≥ 0.9: 0.095, MISSED"],
        "error rate ≤ 0.3 on split scored": []}
    # The same file for two flags is refused before any model call.
    stub.requests.clear()
    code, _, err = run_cli(["judges", "eval", str(recipe), "--junit", str(junit),
                            "--output", str(junit)], capsys)
    assert code == 2 and "--output and --junit both name" in err
    assert not stub.requests
