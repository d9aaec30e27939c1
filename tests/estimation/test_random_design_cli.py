"""``judges estimate --design random --rows FILE`` end to end, against ``ppi_python``.

The production rows are generated here (seeded) and judged by the scripted stub
model server, which answers each row with the verdict its text names: test data,
never results. The oracle is ``ppi_python``'s ``ppi_mean_ci`` on the same labels
and verdicts, and scipy's Wilson interval for the labels alone.
"""

from __future__ import annotations

import json
import subprocess
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy.stats import binomtest, norm

from tests.conftest import run_cli
from tests.evaluation.conftest import (
    GATED_JUDGE,
    SENTINEL_KEY,
    UNGATED_JUDGE,
    fixture_row,
    write_recipe,
)
from tests.evaluation.stub_batch_server import StubBatchServer
from tests.evaluation.stub_model_server import StubModelServer

with warnings.catch_warnings():  # ppi_py's dependencies warn about their own imports
    warnings.simplefilter("ignore")
    from ppi_py import ppi_mean_ci


Z = float(norm.ppf(0.975))


def production(seed: int, rows: int, labelled: int, theta: float, *, tpr: float = 0.9,
               tnr: float = 0.85, balanced: bool = False) -> list[dict[str, Any]]:
    """Rows whose stub verdict follows a judge of ``tpr``/``tnr`` on a true label drawn at
    rate ``theta``; ``labelled`` of them carry their label (at random, or half pass and
    half fail with ``balanced``)."""
    rng = np.random.default_rng(seed)
    truth = np.where(rng.random(rows) < theta, "pass", "fail")
    right = rng.random(rows) < np.where(truth == "pass", tpr, tnr)
    verdict = np.where(right, truth, np.where(truth == "pass", "fail", "pass"))
    if balanced:
        chosen = set(np.flatnonzero(truth == "pass")[: labelled // 2]) | set(
            np.flatnonzero(truth == "fail")[: labelled // 2])
    else:
        chosen = set(rng.choice(rows, size=labelled, replace=False))
    return [fixture_row(f"prod_{i}", f"row {i} VERDICT:{verdict[i]}",
                        expected=str(truth[i]) if i in chosen else None) for i in range(rows)]


def write_rows(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def _recipe(tmp_path: Path, judge: str = UNGATED_JUDGE) -> Path:
    return write_recipe(tmp_path / "r", {"helpful": (judge.replace("billing", "helpful"), [])})


def estimate(root: Path, rows: Path, tmp_path: Path, *args: str,
             env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return run_cli(["judges", "estimate", str(root), "--judge", "helpful", "--design", "random",
                    "--rows", str(rows), "--max-retries", "0", "--timeout", "5", *args],
                   env={"INTROSPECTION_CACHE_DIR": str(tmp_path / "cache"), **(env or {})},
                   timeout=120)


def _verdict_of(row: dict[str, Any]) -> str:
    return str(row["judge_input"]["events"][0]["text"].split("VERDICT:")[1])


def test_ppi_matches_ppi_python_and_wilson_matches_scipy(tmp_path: Path,
                                                          stub: StubModelServer) -> None:
    rows = production(seed=3, rows=400, labelled=120, theta=0.7)
    result = estimate(_recipe(tmp_path), write_rows(tmp_path / "prod.jsonl", rows), tmp_path,
                      "--format", "json")
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    labelled = [row for row in rows if row["expected"] is not None]
    y = np.array([row["expected"] == "pass" for row in labelled], dtype=float)
    f = np.array([_verdict_of(row) == "pass" for row in labelled], dtype=float)
    unlabelled = np.array([_verdict_of(row) == "pass" for row in rows
                           if row["expected"] is None], dtype=float)
    low, high = (float(bound[0]) for bound in ppi_mean_ci(y, f, unlabelled, alpha=0.05))
    estimate_ = payload["estimate"]
    # ppi_python's estimate and standard error; the interval is its normal one taken on
    # the log-odds scale (the delta method: se / (θ(1 − θ))).
    assert estimate_["value"] == pytest.approx((low + high) / 2, abs=1e-6)
    assert estimate_["standard_error"] == pytest.approx((high - low) / (2 * Z), abs=1e-6)
    theta, spread = estimate_["value"], Z * estimate_["standard_error"]
    log_odds = np.log(theta / (1 - theta))
    for bound, sign in ((estimate_["low"], -1), (estimate_["high"], 1)):
        expected = 1 / (1 + np.exp(-(log_odds + sign * spread / (theta * (1 - theta)))))
        assert bound == pytest.approx(float(expected), abs=1e-9)
    assert estimate_["low"] <= estimate_["value"] <= estimate_["high"]
    wilson = binomtest(int(y.sum()), len(y)).proportion_ci(method="wilson")
    assert payload["labels_only"]["low"] == pytest.approx(wilson.low, abs=1e-9)
    assert payload["labels_only"]["high"] == pytest.approx(wilson.high, abs=1e-9)
    assert payload["labels_only"]["n"] == 120
    # The judge's verdicts narrow the interval: worth more than the labels alone.
    assert payload["effective_labels"] > 120
    assert payload["design_check"]["p_value"] >= 0.01
    assert payload["rows"]["labelled"]["rows"] == 120
    assert payload["rows"]["unlabelled"]["rows"] == 280
    text = estimate(tmp_path / "r", tmp_path / "prod.jsonl", tmp_path)
    assert text.returncode == 0, text.stderr
    assert "pass rate (PPI++): " in text.stdout and "labels alone: " in text.stdout
    assert "the judge is worth" in text.stdout and "taken as a random sample" in text.stdout


def test_a_balanced_gold_set_is_refused(tmp_path: Path, stub: StubModelServer) -> None:
    # Production is 90% pass; the labelled rows are 50 pass and 50 fail: not a random sample.
    rows = production(seed=5, rows=500, labelled=100, theta=0.9, balanced=True)
    result = estimate(_recipe(tmp_path), write_rows(tmp_path / "prod.jsonl", rows), tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert result.stdout == ""
    assert "not a random sample" in result.stderr
    assert "without --design" in result.stderr  # what to do instead
    assert "Traceback" not in result.stderr


def test_the_verdicts_come_from_the_cache_the_second_time(tmp_path: Path,
                                                          stub: StubModelServer) -> None:
    rows = write_rows(tmp_path / "prod.jsonl", production(seed=8, rows=120, labelled=60,
                                                          theta=0.6))
    first = estimate(_recipe(tmp_path), rows, tmp_path, "--format", "json")
    assert first.returncode == 0, first.stderr
    sent = len(stub.requests)
    assert sent == 120
    again = estimate(tmp_path / "r", rows, tmp_path, "--format", "json")
    assert json.loads(again.stdout)["estimate"] == json.loads(first.stdout)["estimate"]
    assert len(stub.requests) == sent


def test_by_gate_gives_both_segments_and_a_stratified_overall(tmp_path: Path,
                                                              stub: StubModelServer) -> None:
    rng = np.random.default_rng(12)
    rows = []
    for i in range(300):
        gated = i % 3 == 0  # a third of production is outside the gate
        truth = "pass" if rng.random() < (0.4 if gated else 0.8) else "fail"
        text = f"hello {i}" if gated else f"refund {i} VERDICT:{truth}"
        rows.append(fixture_row(f"prod_{i}", text, expected=truth if i % 2 == 0 else None))
    result = estimate(_recipe(tmp_path, GATED_JUDGE), write_rows(tmp_path / "p.jsonl", rows),
                      tmp_path, "--by-gate", "--format", "json")
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    segments = {segment["segment"]: segment for segment in payload["segments"]}
    assert set(segments) == {"gate matches", "gate misses"}
    assert segments["gate misses"]["weight"] == pytest.approx(100 / 300)
    # Where the gate misses the judge says nothing: PPI there is the labels alone.
    assert segments["gate misses"]["lambda"] == [0.0]
    overall = payload["estimate"]["value"]
    expected = sum(s["weight"] * s["estimate"]["value"] for s in segments.values())
    assert overall == pytest.approx(expected, abs=1e-9)  # no na: weights of the judged rows
    assert payload["population"].startswith("every conversation")


def test_segment_by_a_judge_input_field(tmp_path: Path, stub: StubModelServer) -> None:
    rng = np.random.default_rng(4)
    rows = []
    for i in range(240):
        channel = "email" if i % 2 else "chat"
        truth = "pass" if rng.random() < (0.9 if channel == "email" else 0.6) else "fail"
        rows.append(fixture_row(f"prod_{i}", f"x {i} VERDICT:{truth}",
                                expected=truth if i % 3 == 0 else None,
                                extra_events=[{"type": "note", "channel": channel}]))
    result = estimate(_recipe(tmp_path), write_rows(tmp_path / "p.jsonl", rows), tmp_path,
                      "--segment", "events.2.channel", "--format", "json")
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    assert [s["segment"] for s in payload["segments"]] == ["chat", "email"]
    assert payload["segment_by"] == "events.2.channel"
    email = next(s for s in payload["segments"] if s["segment"] == "email")
    assert email["estimate"]["value"] > 0.75


@pytest.mark.parametrize(("args", "says"), [
    (["--design", "random", "--passed", "3", "--total", "9"], "needs --rows"),
    (["--rows", "p.jsonl", "--by-gate"], "go with --design random"),
    (["--design", "stratified", "--rows", "p.jsonl"], "unknown --design"),
    (["--design", "random", "--rows", "p.jsonl", "--by-gate", "--segment", "a"], "use one"),
    (["--design", "random", "--rows", "p.jsonl", "--report", "r.json", "--split", "dev"],
     "--report"),
])
def test_usage_errors(tmp_path: Path, args: list[str], says: str) -> None:
    result = run_cli(["judges", "estimate", str(_recipe(tmp_path)), "--judge", "helpful", *args])
    assert result.returncode == 2, result.stderr
    assert says in result.stderr


def test_too_few_labels_is_refused(tmp_path: Path, stub: StubModelServer) -> None:
    rows = production(seed=9, rows=100, labelled=20, theta=0.7)
    result = estimate(_recipe(tmp_path), write_rows(tmp_path / "p.jsonl", rows), tmp_path)
    assert result.returncode == 1
    assert "only 20 labelled rows" in result.stderr


@pytest.fixture
def batch_stub() -> Iterator[StubBatchServer]:
    with StubBatchServer(api_key=SENTINEL_KEY) as server:
        yield server


def test_the_rows_can_go_through_the_batch_api(tmp_path: Path,
                                               batch_stub: StubBatchServer) -> None:
    rows = write_rows(tmp_path / "p.jsonl", production(seed=1, rows=80, labelled=40,
                                                       theta=0.7))
    env = {"OPENAI_BASE_URL": batch_stub.openai_url, "OPENAI_API_KEY": SENTINEL_KEY}
    result = estimate(_recipe(tmp_path), rows, tmp_path, "--batch", "--poll-interval", "0.02",
                      "--format", "json", env=env)
    assert result.returncode == 0, result.stderr
    (batch_id,) = batch_stub.batches
    assert f"batch openai {batch_id}: 80 requests submitted" in result.stderr
    assert json.loads(result.stdout)["rows"]["unlabelled"]["rows"] == 40


def test_labelled_test_rows_given_as_production_rows_are_a_recorded_look(
        tmp_path: Path, stub: StubModelServer) -> None:
    # The calibration file itself as --rows: its labelled test rows are judged against their
    # labels, which is a look at the test split, recorded as eval and certify record one.
    # Its dev rows are labelled too, but they are no look at test.
    rows = [fixture_row(f"t{i}", f"row {i} VERDICT:{'pass' if i % 2 else 'fail'}",
                        expected="pass" if i % 3 else "fail", split="test") for i in range(40)]
    rows += [fixture_row(f"d{i}", f"row d{i} VERDICT:{'pass' if i % 2 else 'fail'}",
                         expected="pass" if i % 3 else "fail", split="dev") for i in range(10)]
    rows += [fixture_row(f"u{i}", f"row u{i} VERDICT:{'pass' if i % 2 else 'fail'}",
                         expected=None) for i in range(40)]
    root = write_recipe(tmp_path / "r", {"helpful": (UNGATED_JUDGE, rows)})
    calibration = root / "judges" / "helpful.calibration.jsonl"
    exposure = root / "judges" / "helpful.exposure.jsonl"
    result = estimate(root, calibration, tmp_path)
    assert result.returncode == 0, result.stderr
    assert f"40 labelled row(s) of {calibration} are its test rows" in result.stderr
    [look] = [json.loads(line) for line in exposure.read_text().splitlines()]
    test_rows = [row for row in rows if row.get("split") == "test"]
    assert sorted(map(tuple, look["rows"])) == sorted(
        (row["judge_input"]["conversation_id"], row["snapshot_hash"], row["expected"])
        for row in test_rows)
    # The same conversations in another file, at another snapshot each: not the rows held
    # out, so no look.
    other = [fixture_row(row["judge_input"]["conversation_id"], f"{row['judge_input']['events'][0]['text']} "
                         "again", expected=row["expected"]) for row in test_rows]
    again = estimate(root, write_rows(tmp_path / "other.jsonl", other + rows[50:]), tmp_path)
    assert again.returncode == 0, again.stderr
    assert "are its test rows" not in again.stderr
    assert len(exposure.read_text().splitlines()) == 1
