"""``judges estimate``: the corrected pass rate, from a certificate or a report, end to end.

Certificates and reports here are made by the test, in its temporary directory,
from the scripted stub model server: test data, never results.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_cli
from tests.evaluation.conftest import GATED_JUDGE, UNGATED_JUDGE, fixture_row, write_recipe
from tests.evaluation.stub_model_server import StubModelServer


def _rows(split: str, passes: int, wrong_passes: int, fails: int,
          wrong_fails: int) -> list[dict[str, Any]]:
    """Rows the stub judges right except ``wrong_passes`` pass rows and ``wrong_fails`` fail
    rows (TPR = 1 - wrong_passes/passes, TNR = 1 - wrong_fails/fails)."""
    rows = [fixture_row(f"{split}_p{i}", f"p {i} VERDICT:{'fail' if i < wrong_passes else 'pass'}",
                        expected="pass", split=split) for i in range(passes)]
    rows += [fixture_row(f"{split}_f{i}", f"f {i} VERDICT:{'pass' if i < wrong_fails else 'fail'}",
                         expected="fail", split=split) for i in range(fails)]
    return rows


def _cli(command: str, root: Path, cache: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(["judges", command, str(root), "--judge", "helpful", "--max-retries", "0",
                    "--timeout", "5", *args], env={"INTROSPECTION_CACHE_DIR": str(cache)})


@pytest.fixture
def certified(tmp_path: Path, stub: StubModelServer) -> Path:
    """A recipe whose judge is certified at TPR 46/50 = 0.92 and TNR 44/50 = 0.88."""
    root = write_recipe(tmp_path / "r", {"helpful": (UNGATED_JUDGE,
                                                     _rows("test", 50, 4, 50, 6))})
    result = _cli("certify", root, tmp_path / "cache", "--bar", "0.75")
    assert result.returncode == 0, result.stdout + result.stderr
    return root


def test_the_documented_check_value_from_a_certificate(certified: Path, tmp_path: Path) -> None:
    result = _cli("estimate", certified, tmp_path / "cache", "--passed", "400", "--total", "500",
                  "--format", "json")
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    assert payload["calibration"]["source"] == "certificate"
    assert payload["calibration"]["tpr"] == {"value": 0.92, "n": 50}
    assert payload["calibration"]["tnr"] == {"value": 0.88, "n": 50}
    corrected = payload["corrected"]
    assert [round(corrected[k], 3) for k in ("value", "low", "high")] == [0.850, 0.769, 0.973]
    text = _cli("estimate", certified, tmp_path / "cache", "--passed", "400", "--total", "500")
    assert "calibration certificate" in text.stdout and "helpful.certificate.json" in text.stdout
    assert "corrected pass rate: 0.850 (95% interval 0.769–0.973)" in text.stdout


def test_rows_are_run_through_the_judge_and_only_pass_fail_verdicts_count(
        certified: Path, tmp_path: Path, stub: StubModelServer) -> None:
    exported = [fixture_row(f"prod_{i}", f"prod {i} VERDICT:{'fail' if i < 6 else 'pass'}",
                            expected=None) for i in range(30)]
    exported.append(fixture_row("prod_na", "VERDICT:not_applicable", expected=None))
    exported.append(fixture_row("prod_err", "FAULT:wrong-enum", expected=None))
    rows_file = tmp_path / "production.jsonl"
    rows_file.write_text("".join(json.dumps(row) + "\n" for row in exported))
    before = len(stub.requests)
    result = _cli("estimate", certified, tmp_path / "cache", "--rows", str(rows_file),
                  "--format", "json")
    assert result.returncode == 0, result.stderr
    observed = json.loads(result.stdout)["observed"]
    assert (observed["passed"], observed["total"], observed["not_applicable"]) == (24, 30, 1)
    assert observed["outcomes"] == {"pass": 24, "fail": 6, "not_applicable": 1, "gated": 0,
                                    "error": 1}
    assert len(stub.requests) - before == 32
    again = _cli("estimate", certified, tmp_path / "cache", "--rows", str(rows_file))
    assert len(stub.requests) - before == 33  # cached, but for the error row, which is retried
    assert "24 pass, 6 fail, 1 not_applicable, 0 gated, 1 error" in again.stdout


def test_a_stale_certificate_is_no_calibration(certified: Path, tmp_path: Path) -> None:
    judge_file = certified / "judges" / "helpful.yaml"
    judge_file.write_text(judge_file.read_text().replace("helped", "assisted"))
    result = _cli("estimate", certified, tmp_path / "cache", "--passed", "4", "--total", "5")
    assert result.returncode == 1
    assert "no valid certificate" in result.stderr
    assert "stale: instructions changed since it was certified" in result.stderr
    assert "--report R.json --split S" in result.stderr


def test_calibration_from_a_report_split(tmp_path: Path, stub: StubModelServer) -> None:
    root = write_recipe(tmp_path / "r", {"helpful": (UNGATED_JUDGE, _rows("dev", 20, 2, 20, 4))})
    report = tmp_path / "report.json"
    evaluated = run_cli(["judges", "eval", str(root), "--output", str(report)],
                        env={"INTROSPECTION_CACHE_DIR": str(tmp_path / "cache")})
    assert report.exists(), evaluated.stderr
    result = _cli("estimate", root, tmp_path / "cache", "--passed", "60", "--total", "100",
                  "--report", str(report), "--split", "dev", "--format", "json")
    assert result.returncode == 0, result.stderr
    calibration = json.loads(result.stdout)["calibration"]
    assert (calibration["source"], calibration["split"]) == ("report", "dev")
    assert calibration["tpr"] == {"value": 0.9, "n": 20}
    assert calibration["tnr"] == {"value": 0.8, "n": 20}
    held_out = _cli("estimate", root, tmp_path / "cache", "--passed", "6", "--total", "10",
                    "--report", str(report), "--split", "test")
    assert held_out.returncode == 1 and "held out" in held_out.stderr


def test_a_report_with_an_interval_its_schema_cannot_refuse_is_a_data_error(
        tmp_path: Path, stub: StubModelServer) -> None:
    """low <= value <= high is beyond JSON Schema: reading the report as its value refuses
    it, naming the file, as ``--baseline`` does (exit 1, not an internal error)."""
    root = write_recipe(tmp_path / "r", {"helpful": (UNGATED_JUDGE, _rows("dev", 4, 1, 4, 1))})
    report = tmp_path / "report.json"
    run_cli(["judges", "eval", str(root), "--output", str(report)],
            env={"INTROSPECTION_CACHE_DIR": str(tmp_path / "cache")})
    document = json.loads(report.read_text(encoding="utf-8"))
    document["judges"][0]["splits"]["train"]["agreement"] = {"value": 0.2, "low": 0.5,
                                                             "high": 0.9}
    report.write_text(json.dumps(document), encoding="utf-8")
    result = _cli("estimate", root, tmp_path / "cache", "--passed", "6", "--total", "10",
                  "--report", str(report), "--split", "dev")
    assert result.returncode == 1, result.stderr
    assert f"--report {report} is not a valid eval report: an interval needs" in result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr


def test_the_scored_split_of_a_report_and_its_alias_all_calibrate_alike(
        tmp_path: Path, stub: StubModelServer) -> None:
    """A report names every evaluated row's split ``scored`` (``all`` is its alias)."""
    root = write_recipe(tmp_path / "r", {"helpful": (UNGATED_JUDGE, _rows("dev", 20, 2, 20, 4))})
    report = tmp_path / "report.json"
    run_cli(["judges", "eval", str(root), "--output", str(report)],
            env={"INTROSPECTION_CACHE_DIR": str(tmp_path / "cache")})
    answers = []
    for split in ("scored", "all"):
        result = _cli("estimate", root, tmp_path / "cache", "--passed", "60", "--total", "100",
                      "--report", str(report), "--split", split, "--format", "json")
        assert result.returncode == 0, result.stderr
        answers.append(json.loads(result.stdout)["corrected"])
    assert answers[0] == answers[1]


def test_gate_misses_among_the_rows_are_counted_and_left_out(tmp_path: Path,
                                                             stub: StubModelServer) -> None:
    root = write_recipe(tmp_path / "r", {"helpful": (GATED_JUDGE.replace("billing", "helpful"),
                                                      _rows("dev", 2, 0, 2, 0))})
    report = tmp_path / "report.json"
    report.write_text(json.dumps({"report_version": 1}))  # replaced below by a real one
    calibration = write_recipe(tmp_path / "c", {"helpful": (UNGATED_JUDGE,
                                                             _rows("dev", 20, 2, 20, 4))})
    run_cli(["judges", "eval", str(calibration), "--output", str(report)],
            env={"INTROSPECTION_CACHE_DIR": str(tmp_path / "cache")})
    exported = [fixture_row(f"refund_{i}", f"refund {i} VERDICT:{'pass' if i < 20 else 'fail'}",
                            expected=None) for i in range(32)]
    exported += [fixture_row(f"chat_{i}", f"hello there {i}", expected=None) for i in range(5)]
    rows_file = tmp_path / "production.jsonl"
    rows_file.write_text("".join(json.dumps(row) + "\n" for row in exported))
    result = _cli("estimate", root, tmp_path / "cache", "--rows", str(rows_file), "--report",
                  str(report), "--split", "dev", "--format", "json")
    observed = json.loads(result.stdout)["observed"]
    assert (observed["passed"], observed["total"], observed["outcomes"]["gated"]) == (20, 32, 5)


def test_a_judge_no_better_than_chance_is_refused(tmp_path: Path, stub: StubModelServer) -> None:
    rows = _rows("dev", 20, 12, 20, 10)  # TPR 0.40, TNR 0.50
    root = write_recipe(tmp_path / "r", {"helpful": (UNGATED_JUDGE, rows)})
    report = tmp_path / "report.json"
    run_cli(["judges", "eval", str(root), "--output", str(report)],
            env={"INTROSPECTION_CACHE_DIR": str(tmp_path / "cache")})
    result = _cli("estimate", root, tmp_path / "cache", "--passed", "60", "--total", "100",
                  "--report", str(report), "--split", "dev")
    assert result.returncode == 1
    assert "the judge is no better than chance" in result.stderr
    assert "TPR 0.400 + TNR 0.500 <= 1" in result.stderr
    assert result.stdout == ""


def test_a_judge_no_better_than_chance_is_refused_before_any_row_is_sent(
        tmp_path: Path, stub: StubModelServer) -> None:
    root = write_recipe(tmp_path / "r", {"helpful": (UNGATED_JUDGE, _rows("dev", 20, 12, 20, 10))})
    report = tmp_path / "report.json"
    run_cli(["judges", "eval", str(root), "--output", str(report)],
            env={"INTROSPECTION_CACHE_DIR": str(tmp_path / "cache")})
    rows_file = tmp_path / "production.jsonl"
    rows_file.write_text("".join(json.dumps(fixture_row(f"prod_{i}", f"prod {i}", expected=None))
                                 + "\n" for i in range(5)))
    stub.requests.clear()
    result = _cli("estimate", root, tmp_path / "cache", "--rows", str(rows_file),
                  "--report", str(report), "--split", "dev")
    assert result.returncode == 1
    assert "the judge is no better than chance" in result.stderr
    assert stub.requests == []  # the calibration alone decides it: no row is paid for


def test_rows_that_all_failed_at_the_provider_exit_3_saying_so(
        certified: Path, tmp_path: Path) -> None:
    exported = [fixture_row(f"prod_{i}", f"prod {i} FAULT:500-always", expected=None)
                for i in range(3)]
    rows_file = tmp_path / "production.jsonl"
    rows_file.write_text("".join(json.dumps(row) + "\n" for row in exported))
    result = _cli("estimate", certified, tmp_path / "cache", "--rows", str(rows_file))
    assert result.returncode == 3, result.stderr
    assert "failed at the model provider" in result.stderr
    assert "nothing to correct" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_report_of_another_judge_version_is_used_with_a_warning(
        tmp_path: Path, stub: StubModelServer) -> None:
    root = write_recipe(tmp_path / "r", {"helpful": (UNGATED_JUDGE, _rows("dev", 20, 2, 20, 2))})
    report = tmp_path / "report.json"
    run_cli(["judges", "eval", str(root), "--output", str(report)],
            env={"INTROSPECTION_CACHE_DIR": str(tmp_path / "cache")})
    judge_file = root / "judges" / "helpful.yaml"
    judge_file.write_text(judge_file.read_text().replace("helped", "assisted"))
    result = _cli("estimate", root, tmp_path / "cache", "--passed", "60", "--total", "100",
                  "--report", str(report), "--split", "dev")
    assert result.returncode == 0
    assert "measured another version of judge helpful" in result.stderr


@pytest.mark.parametrize("args", [
    [],  # neither counts nor rows
    ["--passed", "3"],
    ["--passed", "6", "--total", "5"],
    ["--passed", "1", "--total", "2", "--rows", "x.jsonl"],
    ["--passed", "1", "--total", "2", "--report", "r.json"],
    ["--passed", "1", "--total", "2", "--format", "xml"],
    # Counts past what the bootstrap's integers hold were an internal error (OverflowError).
    ["--passed", "5", "--total", "10000000000000000000"],
    ["--passed", "5", "--total", "100", "--not-applicable", "10000000000000000000000"],
])
def test_usage_errors(tmp_path: Path, args: list[str]) -> None:
    root = write_recipe(tmp_path / "r", {"helpful": (UNGATED_JUDGE, _rows("dev", 1, 0, 1, 0))})
    result = _cli("estimate", root, tmp_path / "cache", *args)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr


def test_rejected_rows_are_left_out_and_exit_1(certified: Path, tmp_path: Path) -> None:
    rows_file = tmp_path / "production.jsonl"
    good = [fixture_row(f"prod_{i}", f"prod {i} VERDICT:pass", expected=None)
            for i in range(30)]
    rows_file.write_text("".join(json.dumps(row) + "\n" for row in good) + "not json at all\n")
    result = _cli("estimate", certified, tmp_path / "cache", "--rows", str(rows_file),
                  "--format", "json")
    assert result.returncode == 1
    assert "1 row(s) of" in result.stderr and "rejected (lines 31)" in result.stderr
    assert json.loads(result.stdout)["observed"]["rejected"] == 1


_ESTIMATE_SDK_PROBE = """
import sys
from introspection_cli.cli.app import main
try:
    main(sys.argv[1:])
except SystemExit as exit:
    print("exit", exit.code)
print("openai loaded:", "openai" in sys.modules)
"""


def test_a_rerun_of_rows_cached_by_key_imports_no_sdk(certified: Path, tmp_path: Path,
                                                      stub: StubModelServer) -> None:
    # Exported rows have no memos, so a re-run finds them by key after rendering: no
    # call, and so no SDK to import.
    exported = [fixture_row(f"prod_{i}", f"prod {i} VERDICT:{'fail' if i < 6 else 'pass'}",
                            expected=None) for i in range(30)]
    rows_file = tmp_path / "production.jsonl"
    rows_file.write_text("".join(json.dumps(row) + "\n" for row in exported))
    args = ["judges", "estimate", str(certified), "--judge", "helpful", "--rows",
            str(rows_file)]
    env = {"INTROSPECTION_CACHE_DIR": str(tmp_path / "cache")}
    assert _cli("estimate", certified, tmp_path / "cache", "--rows", str(rows_file)
                ).returncode == 0
    sent = len(stub.requests)
    probe = subprocess.run(
        [sys.executable, "-c", _ESTIMATE_SDK_PROBE, *args], capture_output=True, text=True,
        timeout=60, check=False,
        env={**{k: v for k, v in os.environ.items() if not k.startswith("INTROSPECTION_")},
             **env})
    assert probe.stdout.splitlines()[-2:] == ["exit 0", "openai loaded: False"], (
        probe.stdout, probe.stderr)
    assert len(stub.requests) == sent
