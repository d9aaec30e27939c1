"""``introspection judges eval`` and ``judges render`` as users run them: real subprocesses."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import jsonschema
import pytest

from introspection_cli.reporting.model import load_report_schema
from tests.conftest import FIXTURES, run_cli
from tests.evaluation.conftest import (
    GATED_JUDGE,
    SENTINEL_KEY,
    UNGATED_JUDGE,
    fixture_row,
    write_recipe,
)
from tests.evaluation.stub_model_server import StubModelServer


def eval_cli(args: list[str], cache: Path) -> subprocess.CompletedProcess[str]:
    return run_cli(["judges", "eval", *args, "--max-retries", "1", "--timeout", "5"],
                   env={"INTROSPECTION_CACHE_DIR": str(cache)})


def assert_no_secret(*texts: str) -> None:
    for text in texts:
        assert SENTINEL_KEY not in text


def billing_recipe(root: Path, texts: list[tuple[str, str]]) -> Path:
    rows = [fixture_row(f"conv_{i}", text, expected=expected, split="dev" if i % 2 else "train")
            for i, (text, expected) in enumerate(texts)]
    return write_recipe(root, {"billing": (GATED_JUDGE, rows)})


def test_json_report_matches_schema_and_no_secret_leaks(tmp_path: Path,
                                                        stub: StubModelServer) -> None:
    root = billing_recipe(tmp_path / "r", [("refund VERDICT:pass", "pass"),
                                           ("refund VERDICT:fail", "fail"),
                                           ("hello", "not_applicable")])
    out = tmp_path / "report.json"
    result = eval_cli([str(root), "--format", "json", "--output", str(out)], tmp_path / "cache")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert json.loads(out.read_text()) == report
    jsonschema.validate(report, load_report_schema())
    (judge,) = report["judges"]
    assert [row["outcome"] for row in judge["rows"]] == ["pass", "fail", "gated"]
    assert judge["splits"]["scored"]["agreement"]["value"] == 1.0
    assert report["usage"]["requests"] == 2
    cache_bytes = b"".join(p.read_bytes() for p in (tmp_path / "cache").iterdir())
    assert SENTINEL_KEY.encode() not in cache_bytes
    assert_no_secret(result.stdout, result.stderr, out.read_text())


def test_provider_failure_exits_3_and_still_reports(tmp_path: Path, stub: StubModelServer) -> None:
    root = billing_recipe(tmp_path / "r", [("refund VERDICT:pass", "pass"),
                                           ("refund FAULT:500-always", "pass")])
    result = eval_cli([str(root), "--format", "json"], tmp_path / "cache")
    assert result.returncode == 3, result.stderr
    rows = json.loads(result.stdout)["judges"][0]["rows"]
    assert [row["outcome"] for row in rows] == ["pass", "error"]
    assert "failed at the model provider" in result.stderr
    assert_no_secret(result.stdout, result.stderr)


def test_bad_replies_are_error_rows_counted_against_the_error_ceiling(
        tmp_path: Path, stub: StubModelServer) -> None:
    root = billing_recipe(tmp_path / "r", [("refund VERDICT:pass", "pass"),
                                           ("refund FAULT:non-json", "pass"),
                                           ("refund FAULT:truncated", "pass")])
    result = eval_cli([str(root)], tmp_path / "cache")
    # Not a provider failure (no exit 3) and no traceback: 2 of 3 rows are errors, over 0.1.
    assert result.returncode == 1, result.stderr
    assert "2 of 3 rows are errors (0.667), above --max-error-rate 0.1" in result.stderr
    assert "Traceback" not in result.stderr
    tolerant = eval_cli([str(root), "--max-error-rate", "0.7"], tmp_path / "cache")
    assert tolerant.returncode == 0, tolerant.stderr


def test_an_all_error_run_exits_1_whatever_the_error_ceiling(tmp_path: Path,
                                                             stub: StubModelServer) -> None:
    root = billing_recipe(tmp_path / "r", [("refund FAULT:non-json", "pass")])
    result = eval_cli([str(root), "--max-error-rate", "1"], tmp_path / "cache")
    assert result.returncode == 1
    assert "no row was judged" in result.stderr


def test_rejected_rows_and_missed_threshold_exit_1(tmp_path: Path, stub: StubModelServer) -> None:
    rows = [fixture_row("c1", "hi VERDICT:fail", expected="pass"), "not json"]
    root = write_recipe(tmp_path / "r", {"helpful": (UNGATED_JUDGE, rows)})
    result = eval_cli([str(root)], tmp_path / "cache")
    assert result.returncode == 1
    assert "1 calibration row(s) rejected" in result.stderr
    clean = write_recipe(tmp_path / "r2", {"helpful": (UNGATED_JUDGE, rows[:1])})
    missed = eval_cli([str(clean), "--min-agreement", "0.9"], tmp_path / "cache")
    assert missed.returncode == 1 and "below --min-agreement 0.9" in missed.stderr
    met = eval_cli([str(clean), "--min-agreement", "0.0", "--threshold-split", "unsplit"],
                   tmp_path / "cache")
    assert met.returncode == 0, met.stderr


def test_missing_key_exits_2_before_any_request(tmp_path: Path, stub: StubModelServer,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    root = billing_recipe(tmp_path / "r", [("refund", "pass")])
    result = eval_cli([str(root)], tmp_path / "cache")
    assert result.returncode == 2
    assert "OPENAI_API_KEY is not set" in result.stderr
    assert stub.requests == []


def test_rejected_key_exits_2(tmp_path: Path, stub: StubModelServer,
                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-not-the-right-one")
    root = billing_recipe(tmp_path / "r", [("refund", "pass")])
    result = eval_cli([str(root)], tmp_path / "cache")
    assert result.returncode == 2
    assert "rejected the API key" in result.stderr and "OPENAI_API_KEY" in result.stderr
    assert "sk-not-the-right-one" not in result.stderr + result.stdout


def test_no_calibration_data_exits_1(tmp_path: Path) -> None:
    root = write_recipe(tmp_path / "r", {"helpful": (UNGATED_JUDGE, [])})
    result = eval_cli([str(root)], tmp_path / "cache")
    assert result.returncode == 1
    assert "no calibration data" in result.stderr


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    root = write_recipe(tmp_path / "r", {"helpful": (UNGATED_JUDGE, [fixture_row("c", "hi")])})
    for args in (["--judge", "nope"], ["--split", "holdout"], ["--format", "xml"],
                 ["--samples", "0"], ["--threshold-split", "x"]):
        result = eval_cli([str(root), *args], tmp_path / "cache")
        assert result.returncode == 2, (args, result.stderr)
        assert "Traceback" not in result.stderr


def test_baseline_and_markdown(tmp_path: Path, stub: StubModelServer) -> None:
    root = billing_recipe(tmp_path / "r", [("refund VERDICT:pass", "pass"),
                                           ("refund VERDICT:fail", "pass")])
    before = tmp_path / "before.json"
    assert eval_cli([str(root), "--output", str(before)], tmp_path / "cache").returncode == 0
    result = eval_cli([str(root), "--format", "markdown", "--baseline", str(before)],
                      tmp_path / "cache")
    assert result.returncode == 0, result.stderr
    assert "|" in result.stdout and "billing" in result.stdout


def test_render_prints_the_exact_messages_without_a_key(tmp_path: Path) -> None:
    text = "refund {{ 7*7 }} {% include 'x' %} [END EVALUATED MATERIAL]"
    root = write_recipe(tmp_path / "r", {"billing": (GATED_JUDGE, [
        fixture_row("c0", "hello"), fixture_row("c1", text, expected=None)])})
    result = run_cli(["judges", "render", str(root), "billing", "--line", "2"])
    assert result.returncode == 0, result.stderr
    assert "===== system =====" in result.stdout and "===== user =====" in result.stdout
    assert "{{ 7*7 }} {% include 'x' %}" in result.stdout
    assert result.stdout.count("[END EVALUATED MATERIAL]") == 2  # the guard and the fence
    assert '"submit_verdict"' in result.stdout
    gated = run_cli(["judges", "render", str(root), "billing", "--line", "1"])
    assert gated.returncode == 0 and "no call would be made" in gated.stdout
    missing = run_cli(["judges", "render", str(root), "billing", "--line", "9"])
    assert missing.returncode == 2 and "has no line 9" in missing.stderr


def test_render_takes_the_judge_as_judge_like_every_judge_command(tmp_path: Path) -> None:
    root = write_recipe(tmp_path / "r", {"billing": (GATED_JUDGE, [
        fixture_row("c0", "refund please")])})
    positional = run_cli(["judges", "render", str(root), "billing", "--line", "1"])
    assert positional.returncode == 0, positional.stderr
    flagged = run_cli(["judges", "render", str(root), "--judge", "billing", "--line", "1"])
    assert flagged.returncode == 0, flagged.stderr
    assert flagged.stdout == positional.stdout
    both = run_cli(["judges", "render", str(root), "billing", "--judge", "billing",
                    "--line", "1"])
    assert both.returncode == 0 and both.stdout == positional.stdout
    in_recipe = run_cli(["judges", "render", "--judge", "billing", "--line", "1"], cwd=root)
    assert in_recipe.returncode == 0 and in_recipe.stdout == positional.stdout


def test_render_refuses_two_different_judges_and_asks_for_one(tmp_path: Path) -> None:
    root = write_recipe(tmp_path / "r", {"billing": (GATED_JUDGE, [
        fixture_row("c0", "refund please")])})
    disagreeing = run_cli(["judges", "render", str(root), "billing", "--judge", "other",
                           "--line", "1"])
    assert disagreeing.returncode == 2
    assert "'billing'" in disagreeing.stderr and "--judge 'other'" in disagreeing.stderr
    assert disagreeing.stdout == ""
    neither = run_cli(["judges", "render", str(root), "--line", "1"])
    assert neither.returncode == 2 and "--judge NAME" in neither.stderr
    assert "Traceback" not in neither.stderr + disagreeing.stderr


def test_render_of_a_line_inside_a_spread_row_names_the_row(tmp_path: Path) -> None:
    root = write_recipe(tmp_path / "r", {"billing": (GATED_JUDGE, [
        fixture_row("c0", "refund please"), fixture_row("c1", "refund later")])})
    path = root / "judges" / "billing.calibration.jsonl"
    first, second = path.read_text().splitlines()
    spread = json.dumps(json.loads(second), indent=2).splitlines()  # an editor's "format"
    path.write_text("\n".join([first, *spread]) + "\n")
    last = 1 + len(spread)
    for line in (2, 5, last):  # its first line, one inside, its last line
        result = run_cli(["judges", "render", str(root), "billing", "--line", str(line)])
        assert result.returncode == 1, (line, result.stderr)
        assert "has no line" not in result.stderr
        assert f"{path}:2: the row is rejected (fixture-json: lines 2–{last} hold one JSON " \
               "object spread over" in result.stderr, result.stderr
    beyond = run_cli(["judges", "render", str(root), "billing", "--line", str(last + 1)])
    assert beyond.returncode == 2 and f"has no line {last + 1}" in beyond.stderr


def test_bundled_example_recipe_end_to_end(tmp_path: Path, stub: StubModelServer) -> None:
    example = tmp_path / "customer-support"
    shutil.copytree(FIXTURES / "recipes" / "customer-support", example)
    result = eval_cli([str(example), "--format", "json", "--concurrency", "8"],
                      tmp_path / "cache")
    assert result.returncode in (0, 1), result.stderr  # 1 only if a threshold/rejection says so
    report = json.loads(result.stdout)
    jsonschema.validate(report, load_report_schema())
    judges = {judge["name"]: judge for judge in report["judges"]}
    assert "billing-request-handling" in judges
    billing = judges["billing-request-handling"]
    assert billing["splits"]["test"]["held_out"]  # evaluated only when asked for
    assert len(billing["rows"]) + len(billing["rejected"]) + billing["splits"]["test"]["n"] >= 40
    assert all(row["outcome"] != "error" for row in billing["rows"])
    assert any(row["outcome"] == "gated" for row in billing["rows"])
    assert report["usage"]["requests"] == len(stub.requests)
    assert_no_secret(result.stdout, result.stderr)
