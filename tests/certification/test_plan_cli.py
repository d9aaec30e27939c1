"""``judges plan`` (issue 22 item 1): test rows per class, labels to collect, the calls' cost.

Oracles: scipy's binomial for the plans (tests/certification/test_power.py and
anytime_oracle.py), scipy's Beta for the shrunk dev rates, and ``judges eval
--dry-run``'s own per-request token estimates for the cost.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from scipy.stats import beta

from tests.certification.anytime_oracle import oracle_anytime_plan
from tests.certification.test_power import oracle_plan
from tests.conftest import REPO, run_cli
from tests.evaluation.conftest import GATED_JUDGE, UNGATED_JUDGE, fixture_row, write_recipe
from tests.evaluation.stub_model_server import StubModelServer

JOINT = math.sqrt(0.8)
PRICES = """["stub-model"]
input = 2.0
cached_input = 0.5
output = 8.0
"""


def plan(root: Path, tmp_path: Path, *args: str, judge: str = "helpful"
         ) -> subprocess.CompletedProcess[str]:
    prices = tmp_path / "prices.toml"
    prices.write_text(PRICES)
    return run_cli(["judges", "plan", str(root), "--judge", judge, *args],
                   env={"INTROSPECTION_CACHE_DIR": str(tmp_path / "cache"),
                        "INTROSPECTION_PRICES": str(prices)})


def plan_json(root: Path, tmp_path: Path, *args: str) -> dict[str, Any]:
    result = plan(root, tmp_path, "--format", "json", *args)
    assert result.returncode == 0, result.stderr
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def _rows(split: dict[str, tuple[int, int]]) -> list[dict[str, Any]]:
    """split -> (pass rows, fail rows), each judged right by the stub."""
    return [fixture_row(f"{name}_{label}_{i}", f"hi {i} VERDICT:{label}", expected=label,
                        split=None if name == "none" else name)
            for name, counts in split.items()
            for label, count in zip(("pass", "fail"), counts, strict=True)
            for i in range(count)]


def test_a_plan_at_the_expected_rates(tmp_path: Path) -> None:
    # 40 labelled rows, 30 pass and 10 fail, 8 in test of 40 with a split (20%).
    rows = _rows({"train": (6, 2), "dev": (18, 6), "test": (6, 2)})
    root = write_recipe(tmp_path / "r", {"helpful": (UNGATED_JUDGE, rows)})
    data = plan_json(root, tmp_path, "--expect-tpr", "0.95", "--expect-tnr", "0.9")
    assert data["bound"] == {"method": "wilson", "looks_before": 0}
    assert data["classes"]["pass"] == {"rate": 0.95, "rows": oracle_plan(0.95, 0.8, JOINT),
                                       "held": 6, "more": 54 - 6, "source": "TPR as expected"}
    assert data["classes"]["fail"]["rows"] == oracle_plan(0.90, 0.8, JOINT) == 142
    assert data["classes"]["fail"]["more"] == 140
    # 140 more fail rows reach test at 20% of labels, a quarter of them fail: 2,800 labels.
    assert (data["test_share"], data["class_mix"]["pass"]) == (0.2, 0.75)
    assert data["labels"] == math.ceil(140 / (0.2 * 0.25)) == 2800
    assert data["reach_test"] == 560
    text = plan(root, tmp_path, "--expect-tpr", "0.95", "--expect-tnr", "0.9").stdout
    assert "pass       54 test rows at TPR 0.950 (TPR as expected); test holds 6, 48 more" in text
    assert "label about 2800 more rows; at your split ratios about 560 reach test" in text
    # --power and --bar are the plan's: a plan for 90% at 0.85 is larger.
    stricter = plan_json(root, tmp_path, "--expect-tpr", "0.95", "--power", "0.9",
                         "--bar", "0.85")
    assert stricter["classes"]["pass"]["rows"] == oracle_plan(0.95, 0.85, math.sqrt(0.9), 900)


def test_before_any_label_the_plan_assumes_09_and_half_of_each(tmp_path: Path) -> None:
    root = write_recipe(tmp_path / "r", {"helpful": (UNGATED_JUDGE, [])})
    data = plan_json(root, tmp_path)
    for label in ("pass", "fail"):
        assert data["classes"][label]["rows"] == 142 and data["classes"][label]["held"] == 0
        assert data["classes"][label]["source"].endswith("assumed")
    # At the default 20:40:40 split, 40% of labels reach test, half of them of each class.
    assert (data["test_share"], data["class_mix"]["pass"]) == (0.4, 0.5)
    assert data["labels"] == math.ceil(142 / (0.4 * 0.5)) == 710
    assert data["cost"]["calls"] == 284
    assert data["cost"]["input_tokens"] is None  # no row to estimate a prompt from
    text = plan(root, tmp_path).stdout
    assert "no row of the file to estimate a call's tokens from" in text


def test_dev_figures_shrunk_are_the_default_rates(tmp_path: Path,
                                                  stub: StubModelServer) -> None:
    rows = _rows({"dev": (30, 20)})
    rows[0] = fixture_row("dev_pass_0", "hi VERDICT:fail", expected="pass", split="dev")
    root = write_recipe(tmp_path / "r", {"helpful": (UNGATED_JUDGE, rows)})
    evaluated = run_cli(["judges", "eval", str(root)],
                        env={"INTROSPECTION_CACHE_DIR": str(tmp_path / "cache")})
    assert evaluated.returncode == 0, evaluated.stderr
    calls = len(stub.requests)
    data = plan_json(root, tmp_path, "--expect-tnr", "0.97")
    assert len(stub.requests) == calls  # no model call
    tpr = float(beta.ppf(0.2, 29.5, 1.5))  # 29 of 30, shrunk
    assert data["classes"]["pass"]["rate"] == pytest.approx(tpr)
    assert data["classes"]["pass"]["rows"] == oracle_plan(tpr, 0.8, JOINT, 900)
    assert data["classes"]["pass"]["source"] == "dev TPR 0.967 over 30 rows, shrunk"
    assert data["classes"]["fail"]["rate"] == 0.97  # as given, not the dev figure


def test_after_a_look_at_test_the_plan_is_for_the_anytime_bound(
        tmp_path: Path, stub: StubModelServer) -> None:
    rows = _rows({"test": (16, 16)})
    root = write_recipe(tmp_path / "r", {"helpful": (UNGATED_JUDGE, rows)})
    looked = run_cli(["judges", "eval", str(root), "--split", "test"],
                     env={"INTROSPECTION_CACHE_DIR": str(tmp_path / "cache")})
    assert looked.returncode == 0, looked.stderr
    data = plan_json(root, tmp_path, "--expect-tpr", "0.95", "--expect-tnr", "0.95")
    assert data["bound"] == {"method": "beta-binomial", "looks_before": 1}
    assert data["classes"]["pass"]["rows"] == oracle_anytime_plan(0.95, 0.8, JOINT) == 87
    assert data["classes"]["pass"]["more"] == 87 - 16
    text = plan(root, tmp_path, "--expect-tpr", "0.95").stdout
    assert "anytime-valid: this judge version looked at these test rows 1 time(s)" in text


def test_the_cost_is_the_dry_runs_estimate_per_call_at_the_price(tmp_path: Path) -> None:
    # A gated judge: 12 rows, 4 the gate misses (a third: no call for them).
    rows = [fixture_row(f"t{i}", f"refund {i} " + "x" * (40 * i), expected="pass", split="test")
            for i in range(8)]
    rows += [fixture_row(f"g{i}", f"what time is it {i}", expected="fail", split="test")
             for i in range(4)]
    root = write_recipe(tmp_path / "r", {"billing": (GATED_JUDGE, rows)})
    prices = tmp_path / "prices.toml"
    prices.write_text(PRICES)
    env = {"INTROSPECTION_CACHE_DIR": str(tmp_path / "cache"), "INTROSPECTION_PRICES": str(prices)}
    dry = run_cli(["judges", "eval", str(root), "--split", "test", "--dry-run", "--format",
                   "json"], env=env)
    assert dry.returncode == 0, dry.stderr
    requests = json.loads(dry.stdout)["requests"]
    assert len(requests) == 8
    per_in = sum(r["input_tokens"] for r in requests) / 8
    per_out = sum(r["output_tokens"] for r in requests) / 8
    result = run_cli(["judges", "plan", str(root), "--judge", "billing", "--expect-tpr", "0.95",
                      "--expect-tnr", "0.95", "--format", "json"], env=env)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    cost = data["cost"]
    rows_at_plan = 12 + data["reach_test"]
    assert cost["calls"] == round(rows_at_plan * (1 - 4 / 12))
    assert cost["rows_sampled"] == 8
    assert cost["input_tokens"] == round(cost["calls"] * per_in)
    assert cost["output_tokens"] == round(cost["calls"] * per_out)
    price = (cost["input_tokens"] * 2.0 + cost["output_tokens"] * 8.0) / 1e6
    assert cost["cost"] == pytest.approx(price)
    text = run_cli(["judges", "plan", str(root), "--judge", "billing", "--expect-tpr", "0.95",
                    "--expect-tnr", "0.95"], env=env).stdout
    assert (f"cost       about {cost['calls']} model call(s) to certify at the plan "
            f"(openai/stub-model): ~{cost['input_tokens']:,} input and "
            f"~{cost['output_tokens']:,} output tokens (estimated from 8 row(s)), "
            f"${cost['cost']:,.4f}; rows already in the verdict cache cost nothing") in text


def test_rejected_rows_exit_1_with_the_plan_printed(tmp_path: Path) -> None:
    rows: list[dict[str, Any] | str] = [*_rows({"test": (3, 3)}), "not json"]
    root = write_recipe(tmp_path / "r", {"helpful": (UNGATED_JUDGE, rows)})
    result = plan(root, tmp_path)
    assert result.returncode == 1
    assert "judge helpful: 1 calibration row(s) rejected" in result.stderr
    assert "test rows at TPR" in result.stdout


@pytest.mark.parametrize("args, message", [
    ([], "needs --judge NAME"),
    (["--judge", "helpful", "--expect-tpr", "1.5"], "--expect-tpr 1.5 must be"),
    (["--judge", "helpful", "--power", "0"], "--power 0 must be"),
    (["--judge", "helpful", "--bar", "1"], "--bar 1 must be"),
    (["--judge", "helpful", "--format", "html"], "unknown format"),
    (["--judge", "nobody"], "nobody"),
])
def test_usage_errors(tmp_path: Path, args: list[str], message: str) -> None:
    root = write_recipe(tmp_path / "r", {"helpful": (UNGATED_JUDGE, _rows({"test": (1, 1)}))})
    result = run_cli(["judges", "plan", str(root), *args],
                     env={"INTROSPECTION_CACHE_DIR": str(tmp_path / "cache")})
    assert result.returncode == 2, result.stderr
    assert message in result.stderr and "Traceback" not in result.stderr


def test_plan_imports_no_model_sdk(tmp_path: Path) -> None:
    root = write_recipe(tmp_path / "r", {"helpful": (UNGATED_JUDGE, _rows({"test": (2, 2)}))})
    code = ("import sys\n"
            "from introspection_cli.cli.app import main\n"
            "try:\n"
            f"    main(['judges', 'plan', {str(root)!r}, '--judge', 'helpful'])\n"
            "except SystemExit:\n"
            "    pass\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('openai', 'anthropic', 'httpx', 'numpy', 'scipy')))\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            cwd=REPO, env={"INTROSPECTION_CACHE_DIR": str(tmp_path / "c"),
                                           "PATH": "/usr/bin:/bin"}, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "[]"
