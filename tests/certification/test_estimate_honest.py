"""``judges estimate`` says what its numbers mean: the cases a statistician's audit found.

Each case is an eval report made by the test from the scripted stub model server
(the calibration) and production counts given on the command line: test data,
never results. The numbers are the audit's.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Mapping
from pathlib import Path

from tests.conftest import run_cli
from tests.evaluation.conftest import UNGATED_JUDGE, fixture_row, write_recipe
from tests.evaluation.stub_model_server import StubModelServer

_VERDICT_TEXT = {"pass": "VERDICT:pass", "fail": "VERDICT:fail",
                 "not_applicable": "VERDICT:not_applicable"}


def confusion_rows(split: str, confusion: Mapping[tuple[str, str], int]) -> list[dict[str, object]]:
    """Calibration rows the stub judges so that (label, verdict) occurs ``confusion`` times."""
    rows = []
    for (label, verdict), count in confusion.items():
        rows += [fixture_row(f"{split}_{label}_{verdict}_{i}",
                             f"{label} {i} {_VERDICT_TEXT[verdict]}", expected=label, split=split)
                 for i in range(count)]
    return rows


def report_for(tmp_path: Path, confusion: Mapping[tuple[str, str], int],
               split: str = "test") -> tuple[Path, Path]:
    """A recipe whose judge ``helpful`` has these test rows, and its eval report on them."""
    root = write_recipe(tmp_path / "r", {"helpful": (UNGATED_JUDGE,
                                                     confusion_rows(split, confusion))})
    report = tmp_path / "rep.json"
    result = run_cli(["judges", "eval", str(root), "--split", split, "--output", str(report),
                      "--max-retries", "0"],
                     env={"INTROSPECTION_CACHE_DIR": str(tmp_path / "cache")}, timeout=120)
    assert report.exists(), result.stderr
    return root, report


def estimate(root: Path, report: Path, tmp_path: Path, *args: str,
             split: str = "test") -> subprocess.CompletedProcess[str]:
    return run_cli(["judges", "estimate", str(root), "--judge", "helpful", "--report",
                    str(report), "--split", split, *args],
                   env={"INTROSPECTION_CACHE_DIR": str(tmp_path / "cache")})


def _said_in_a_sentence(result: subprocess.CompletedProcess[str], *words: str) -> None:
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    for word in words:
        assert word in result.stderr, result.stderr


def test_one_pass_row_and_four_fail_rows_are_refused_not_a_crash(
        tmp_path: Path, stub: StubModelServer) -> None:
    # TPR 1/1, TNR 1/4: the chance check passed on the raw rates (1.25 > 1) and the
    # interval divided by the shrunk ones (q0 + q1 - 1 = 0): ZeroDivisionError, exit 2.
    root, report = report_for(tmp_path, {("pass", "pass"): 1, ("fail", "fail"): 1,
                                         ("fail", "pass"): 3})
    result = estimate(root, report, tmp_path, "--passed", "50", "--total", "100")
    _said_in_a_sentence(result, "1 calibration row labelled pass", "at least 16")


def test_a_tiny_class_never_gives_an_inverted_interval(tmp_path: Path,
                                                       stub: StubModelServer) -> None:
    # TPR 1/1, TNR 1/5, p 0.5, N 100 printed value 0.0, low 1.0, high 0.0.
    root, report = report_for(tmp_path, {("pass", "pass"): 1, ("fail", "fail"): 1,
                                         ("fail", "pass"): 4})
    result = estimate(root, report, tmp_path, "--passed", "50", "--total", "100")
    _said_in_a_sentence(result, "labelled pass")
    assert result.stdout == ""


def test_production_outside_what_the_calibration_can_produce_is_a_misfit(
        tmp_path: Path, stub: StubModelServer) -> None:
    # TPR 45/50 = 0.90, TNR 40/45 = 0.889: the judge passes at most 90% of anything, yet
    # production saw 480 of 500 pass. It printed "1.000 (0.985–1.000)", exit 0.
    root, report = report_for(tmp_path, {("pass", "pass"): 45, ("pass", "fail"): 5,
                                         ("fail", "fail"): 40, ("fail", "pass"): 5})
    result = estimate(root, report, tmp_path, "--passed", "480", "--total", "500")
    _said_in_a_sentence(result, "production contradicts the calibration", "--allow-misfit")
    assert result.stdout == ""
    allowed = estimate(root, report, tmp_path, "--passed", "480", "--total", "500",
                       "--allow-misfit", "--format", "json")
    assert allowed.returncode == 0, allowed.stderr
    assert "production contradicts the calibration" in allowed.stderr
    assert json.loads(allowed.stdout)["misfit"]["misfit"] is True


def test_a_three_way_judge_is_corrected_without_bias(tmp_path: Path,
                                                     stub: StubModelServer) -> None:
    # 100 P->P, 100 P->NA, 200 F->F. Production of true pass rate 0.5 gives verdicts
    # pass 25%, not_applicable 25%, fail 50%: 1,000 pass of 3,000 pass/fail verdicts.
    # The binary correction read TPR as 0.5 and reported 0.667 (0.494–0.861).
    root, report = report_for(tmp_path, {("pass", "pass"): 100, ("pass", "not_applicable"): 100,
                                         ("fail", "fail"): 200})
    result = estimate(root, report, tmp_path, "--passed", "1000", "--total", "3000",
                      "--format", "json")
    assert result.returncode == 0, result.stderr
    corrected = json.loads(result.stdout)["corrected"]
    assert abs(corrected["value"] - 0.5) <= 0.03
    assert corrected["low"] <= 0.5 <= corrected["high"]
    assert corrected["low"] <= corrected["value"] <= corrected["high"]
