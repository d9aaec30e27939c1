"""``judges status``: counts, certificate state, test exposure and the plan, from files alone."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from scipy.stats import beta

from introspection_cli.evaluation.fingerprint import judge_fingerprint
from introspection_cli.recipe.checker import load_recipe
from introspection_cli.statistics import rows_to_reach
from tests.certification.test_power import oracle_plan
from tests.conftest import REPO, run_cli
from tests.evaluation.conftest import GATED_JUDGE, UNGATED_JUDGE, fixture_row, write_recipe
from tests.evaluation.stub_model_server import StubModelServer


def status(root: Path, cache: Path, *args: str) -> tuple[int, dict[str, Any], str]:
    result = run_cli(["judges", "status", str(root), "--format", "json", *args],
                     env={"INTROSPECTION_CACHE_DIR": str(cache)})
    assert "Traceback" not in result.stderr
    return result.returncode, json.loads(result.stdout), result.stderr


def _billing_rows() -> list[dict[str, Any] | str]:
    rows: list[dict[str, Any] | str] = [
        fixture_row("t1", "refund VERDICT:pass", expected="pass", split="test"),
        fixture_row("t2", "refund VERDICT:fail", expected="fail", split="test"),
        fixture_row("t3", "hello", expected="not_applicable", split="test"),
        fixture_row("d1", "invoice VERDICT:pass", expected="pass", split="dev"),
        fixture_row("d2", "invoice VERDICT:fail", expected="pass", split="dev"),
        fixture_row("d3", "invoice VERDICT:fail", expected="fail", split="dev"),
        fixture_row("u1", "refund please", expected=None),
        fixture_row("u2", "what time is it", expected=None),
    ]
    broken = fixture_row("x1", "refund", expected="pass")
    broken["snapshot_hash"] = "sha256:" + "0" * 64
    return [*rows, json.dumps(broken), "not json"]


def test_counts_table_gate_and_fingerprint(tmp_path: Path) -> None:
    root = write_recipe(tmp_path / "r", {"billing": (GATED_JUDGE, _billing_rows())})
    code, payload, stderr = status(root, tmp_path / "cache")
    assert code == 1  # rows are rejected
    assert "judge billing: 2 calibration row(s) rejected" in stderr
    (judge,) = payload["judges"]
    assert judge["rows"] == 10
    assert judge["rejected"] == {"rows": 2, "by_code": {"fixture-hash-mismatch": 1,
                                                        "fixture-json": 1}}
    assert judge["labelled"] == {"pass": 3, "fail": 2, "not_applicable": 1}
    assert judge["unlabelled"] == 2
    assert judge["gate_misses"] == 2  # t3 "hello" and u2 "what time is it"
    assert judge["splits"]["test"] == {"pass": 1, "fail": 1, "not_applicable": 1,
                                       "unlabelled": 0}
    assert judge["splits"]["unsplit"]["unlabelled"] == 2
    current = judge_fingerprint(load_recipe(root)[0].judges["billing"])
    assert judge["fingerprint"] == current
    assert judge["certificate"]["state"] == "none"
    assert judge["test_fingerprints_seen"] == 0
    assert judge["dev"] is None
    floor = rows_to_reach(0.8)
    assert judge["plan"]["perfect"] == {"pass": floor - 1, "fail": floor - 1}  # 15 and 15
    # No dev figures: the plan with power assumes 0.90 for both classes (142 test rows of
    # each for an 80% chance of a certificate: tests/certification/test_power.py).
    power = judge["plan"]["power"]
    assert power["assumed"] == ["pass", "fail"]
    assert {label: (c["rate"], c["rows"], c["more"]) for label, c in power["classes"].items()} \
        == {"pass": (0.9, 142, 141), "fail": (0.9, 142, 141)}
    # Half the split rows are in test; a third of the labels are fail: 141 more fail rows
    # take 141 / (0.5 * 1/3) = 846 labels, of which 423 reach test.
    assert (power["test_share"], power["labels"], power["reach_test"]) == (0.5, 846, 423)


def test_an_ungated_judge_has_no_gate_misses(tmp_path: Path) -> None:
    root = write_recipe(tmp_path / "r", {"helpful": (UNGATED_JUDGE, [
        fixture_row("a", "hi", expected="pass", split="train")])})
    code, payload, _ = status(root, tmp_path / "cache")
    assert code == 0
    assert payload["judges"][0]["gate_misses"] is None


def test_dev_figures_from_the_ledger_drive_the_plan(tmp_path: Path,
                                                    stub: StubModelServer) -> None:
    rows = [fixture_row(f"d{i}", f"refund {i} VERDICT:{'fail' if i == 0 else 'pass'}",
                        expected="pass", split="dev") for i in range(10)]
    rows += [fixture_row(f"f{i}", f"refund {i} VERDICT:fail", expected="fail", split="dev")
             for i in range(30)]
    rows += [fixture_row(f"t{i}", f"refund {i} VERDICT:pass", expected="pass", split="test")
             for i in range(5)]
    root = write_recipe(tmp_path / "r", {"billing": (GATED_JUDGE, rows)})
    cache = tmp_path / "cache"
    evaluated = run_cli(["judges", "eval", str(root)], env={"INTROSPECTION_CACHE_DIR": str(cache)})
    assert evaluated.returncode == 0, evaluated.stderr
    requests = len(stub.requests)
    code, payload, _ = status(root, cache)
    assert code == 0 and len(stub.requests) == requests  # no model call
    dev = payload["judges"][0]["dev"]
    assert dev["tpr"]["value"] == 0.9 and dev["tpr"]["n"] == 10
    assert dev["tnr"]["value"] == 1.0 and dev["tnr"]["n"] == 30
    assert (dev["evaluated"], dev["labelled"]) == (40, 40)
    # The plan is made at the dev rates shrunk to their Beta(1/2, 1/2) posterior's 20th
    # percentile: 9 of 10 is 0.788 then, so the bar is out of reach for pass until more dev
    # rows say better; 30 of 30 is 0.973, for which scipy's binomial says how many rows.
    power = payload["judges"][0]["plan"]["power"]
    assert power["classes"]["pass"]["rate"] == pytest.approx(beta.ppf(0.2, 9.5, 1.5))
    assert power["classes"]["pass"]["rows"] is None
    assert payload["judges"][0]["plan"]["never"] == ["pass"]
    tnr = float(beta.ppf(0.2, 30.5, 0.5))
    assert power["classes"]["fail"]["rate"] == pytest.approx(tnr)
    assert power["classes"]["fail"]["rows"] == oracle_plan(tnr, 0.8, math.sqrt(0.8), 600)
    assert power["classes"]["fail"]["more"] == power["classes"]["fail"]["rows"]  # none in test
    assert power["assumed"] == [] and power["labels"] is None  # pass is out of reach
    text = run_cli(["judges", "status", str(root)], env={"INTROSPECTION_CACHE_DIR": str(cache)})
    assert "pass: out of reach at 0.788 (dev TPR 0.900 over 10 rows, shrunk)" in text.stdout
    assert payload["judges"][0]["test_fingerprints_seen"] == 0  # eval held test out
    # A new rubric has no dev figures until it is evaluated: status never calls the model.
    judge_file = root / "judges" / "billing.yaml"
    judge_file.write_text(judge_file.read_text().replace("billing request", "refund request"))
    code, payload, _ = status(root, cache)
    assert payload["judges"][0]["dev"] is None


def test_test_exposure_counts_fingerprints(tmp_path: Path, stub: StubModelServer) -> None:
    rows = [fixture_row("t1", "refund VERDICT:pass", expected="pass", split="test")]
    root = write_recipe(tmp_path / "r", {"billing": (GATED_JUDGE, rows)})
    cache = tmp_path / "cache"
    env = {"INTROSPECTION_CACHE_DIR": str(cache)}
    run_cli(["judges", "eval", str(root), "--split", "test"], env=env)
    judge_file = root / "judges" / "billing.yaml"
    judge_file.write_text(judge_file.read_text().replace("billing request", "refund request"))
    run_cli(["judges", "eval", str(root), "--split", "test"], env=env)
    _, payload, _ = status(root, cache)
    assert payload["judges"][0]["test_fingerprints_seen"] == 2
    text = run_cli(["judges", "status", str(root)], env=env).stdout
    assert ("exposure    2 look(s) at the rows now in test by 2 procedure(s), 2 judge "
            "version(s): not clean: 2 procedures") in text
    assert "(its test figures are optimistic: label fresh test rows)" in text
    exposure = payload["judges"][0]["exposure"]
    assert exposure == {"procedures": 2, "looks": 2, "moved": [], "relabelled": [],
                        "rerolled": False, "clean": False}


def test_certificate_states(tmp_path: Path, stub: StubModelServer) -> None:
    rows = [fixture_row(f"p{i}", f"hi {i} VERDICT:pass", expected="pass", split="test")
            for i in range(16)]
    rows += [fixture_row(f"f{i}", f"hi {i} VERDICT:fail", expected="fail", split="test")
             for i in range(16)]
    root = write_recipe(tmp_path / "r", {"helpful": (UNGATED_JUDGE, rows)})
    cache = tmp_path / "cache"
    certified = run_cli(["judges", "certify", str(root), "--judge", "helpful"],
                        env={"INTROSPECTION_CACHE_DIR": str(cache)})
    assert certified.returncode == 0, certified.stderr
    _, payload, _ = status(root, cache)
    judge = payload["judges"][0]
    assert judge["certificate"]["state"] == "valid"
    # The next certification of these rows is a second look: planned for the anytime-valid
    # bound, which a judge agreeing on every row reaches from 24 rows of each at 0.80.
    assert judge["plan"]["power"]["bound"] == "beta-binomial"
    assert (judge["plan"]["rows_per_class"], judge["plan"]["perfect"]) == (
        24, {"pass": 8, "fail": 8})
    assert judge["test_fingerprints_seen"] == 1
    calibration = root / "judges" / "helpful.calibration.jsonl"
    lines = calibration.read_text().splitlines(keepends=True)
    calibration.write_text("".join([lines[0].replace('"expected": "pass"', '"expected": "fail"'),
                                    *lines[1:]]))
    _, payload, _ = status(root, cache)
    assert payload["judges"][0]["certificate"]["state"] == "stale"
    assert payload["judges"][0]["certificate"]["changed"] == ["rows"]
    (root / "judges" / "helpful.certificate.json").write_text("{}")
    _, payload, _ = status(root, cache)
    assert payload["judges"][0]["certificate"]["state"] == "invalid"
    text = run_cli(["judges", "status", str(root)], env={"INTROSPECTION_CACHE_DIR": str(cache)})
    assert "certificate invalid: at $: 'certificate_version' is a required property" in text.stdout


def test_text_output_names_everything(tmp_path: Path) -> None:
    root = write_recipe(tmp_path / "r", {"billing": (GATED_JUDGE, _billing_rows())})
    result = run_cli(["judges", "status", str(root)],
                     env={"INTROSPECTION_CACHE_DIR": str(tmp_path / "cache")})
    out = result.stdout
    assert "judge billing" in out and "fingerprint sha256:" in out
    assert ("rows        10: 6 labelled (3 pass, 2 fail, 1 not_applicable), 2 unlabelled, "
            "2 rejected (fixture-hash-mismatch 1, fixture-json 1)") in out
    assert "gate        2 row(s) its gate does not match" in out
    assert "split    pass  fail  not_applicable  unlabelled" in out
    assert "certificate none" in out
    assert "needs 15 more pass and 15 more fail labelled test rows" in out
    assert "no dev figures for this version yet" in out


def test_status_imports_no_model_sdk_or_jinja(tmp_path: Path) -> None:
    root = write_recipe(tmp_path / "r", {"billing": (GATED_JUDGE, _billing_rows())})
    code = ("import sys\n"
            "from introspection_cli.cli.app import main\n"
            "try:\n"
            f"    main(['judges', 'status', {str(root)!r}])\n"
            "except SystemExit:\n"
            "    pass\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('openai', 'anthropic', 'jinja2', 'rich', 'httpx', 'httpx2')))\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=False, cwd=REPO,
                            env={"INTROSPECTION_CACHE_DIR": str(tmp_path / "cache"),
                                 "PATH": "/usr/bin:/bin"})
    assert result.stdout.strip().splitlines()[-1] == "[]", result.stdout + result.stderr


def test_usage_errors(tmp_path: Path) -> None:
    root = write_recipe(tmp_path / "r", {"billing": (GATED_JUDGE, _billing_rows())})
    for args in (["--judge", "nope"], ["--format", "xml"], ["--bar", "1"]):
        result = run_cli(["judges", "status", str(root), *args])
        assert result.returncode == 2, (args, result.stderr)


def test_a_bar_a_million_rows_cannot_reach_is_planned_not_a_crash(tmp_path: Path) -> None:
    root = write_recipe(tmp_path / "r", {"billing": (GATED_JUDGE, _billing_rows())})
    result = run_cli(["judges", "status", str(root), "--bar", "0.999999"])
    assert result.returncode == 1, result.stderr  # 1: the file holds rejected rows
    assert "internal error" not in result.stderr
    assert "3841455" in result.stdout  # the perfect judge's floor: n / (n + z²) >= 0.999999
