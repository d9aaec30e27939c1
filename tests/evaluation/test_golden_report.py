"""Golden reports: fixed runs through the stubs give exactly these JSON report bytes.

Written before the run pipeline (``evaluation/runner.py``) was split up, to hold
its behaviour in place while it moves: every row's outcome, samples, reasoning,
error text and tokens, each judge's and the run's usage, the cache flags and the
gates, byte for byte as ``--output`` writes them. Only what no run can repeat is
normalised: the creation time, the tool's version, the temporary recipe path and
the stub's port. Each run is ordered (one call at a time, or answers that do not
depend on the order), so the same code gives the same bytes.

To re-record after an intended change of the report: ``UPDATE_GOLDEN=1 pytest
tests/evaluation/test_golden_report.py``, and review the diff of ``golden/``.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from introspection_cli.cli.app import main
from tests.evaluation.conftest import (
    GATED_JUDGE,
    SENTINEL_KEY,
    UNGATED_JUDGE,
    fixture_row,
    write_recipe,
)
from tests.evaluation.stub_batch_server import StubBatchServer
from tests.evaluation.stub_model_server import StubModelServer, error_reply

GOLDEN = Path(__file__).parent / "golden"

#: One judge, gated, three samples a row, one call at a time: every way a sample ends.
FAULTY_ROWS = [
    fixture_row("conv_pass", "Refund for invoice INV-1 VERDICT:pass", expected="pass",
                split="dev"),
    fixture_row("conv_fail", "Refund me now VERDICT:fail", expected="pass", split="train"),
    fixture_row("conv_na", "Invoice copy please VERDICT:not_applicable",
                expected="not_applicable", split=None),
    fixture_row("conv_gated", "What time is it?", expected="not_applicable", split="dev"),
    fixture_row("conv_held", "Refund held out VERDICT:pass", expected="pass", split="test"),
    fixture_row("conv_unstable", "Refund, maybe FAULT:alternate", expected="pass", split="dev"),
    fixture_row("conv_429", "Invoice after a rate limit FAULT:429-once", expected="pass",
                split="dev"),
    fixture_row("conv_500", "Refund, server broken FAULT:500-always", expected="fail",
                split="dev"),
    fixture_row("conv_enum", "Invoice, wrong enum FAULT:wrong-enum", expected="fail",
                split=None),
    fixture_row("conv_refusal", "Refund refused FAULT:refusal", expected="fail", split=None),
    fixture_row("conv_nonjson", "Invoice garbled FAULT:non-json", expected="pass", split=None),
    fixture_row("conv_text", "Refund in text FAULT:text-json", expected="fail", split="train"),
    fixture_row("conv_trunc", "Invoice cut FAULT:truncated", expected="pass", split="train"),
]
#: Two judges, two models (the second on the other provider): only answers that do not
#: depend on which call comes first, so they run concurrently.
COMPARED_ROWS = [
    fixture_row(f"conv_{index}", f"Refund request {index} VERDICT:{verdict}", expected=expected,
                split=split)
    for index, (verdict, expected, split) in enumerate([
        ("pass", "pass", "dev"), ("fail", "pass", "dev"), ("pass", "fail", "train"),
        ("not_applicable", "not_applicable", None), ("fail", "fail", "dev"),
        ("pass", "pass", None)])
] + [fixture_row("conv_gated", "Nothing billing here", expected="not_applicable", split="dev")]
BATCH_ROWS = [
    fixture_row("conv_a", "VERDICT:pass", expected="pass", split="dev"),
    fixture_row("conv_b", "VERDICT:fail", expected="pass", split="dev"),
    fixture_row("conv_c", "VERDICT:not_applicable BATCH:fail", expected="fail", split=None),
    fixture_row("conv_d", "FAULT:wrong-enum", expected="fail", split="train"),
    fixture_row("conv_e", "VERDICT:fail BATCH:refuse", expected="fail", split="train"),
]


def normalised(report: bytes, root: Path, port: int) -> bytes:
    """``report`` with what differs from run to run replaced by fixed stand-ins."""
    text = report.decode("utf-8")
    text = text.replace(json.dumps(str(root))[1:-1], "<recipe>")
    text = text.replace(f"127.0.0.1:{port}", "127.0.0.1:<port>")
    text = re.sub(r'"created_at": ?"[^"]*"', '"created_at": "<created_at>"', text)
    text = re.sub(r'"tool_version": ?"[^"]*"', '"tool_version": "<tool_version>"', text)
    return text.encode("utf-8")


def port_of(url: str) -> int:
    port = urlsplit(url).port
    assert port is not None
    return port


def check_golden(name: str, report: bytes, *, suffix: str = ".json") -> None:
    path = GOLDEN / f"{name}{suffix}"
    if os.environ.get("UPDATE_GOLDEN"):
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(report)
    assert report == path.read_bytes(), f"the report differs from {path}"


def run_eval_cli(args: list[str], output: Path, capsys: pytest.CaptureFixture[str]
                 ) -> tuple[int, bytes, str]:
    """Run ``judges eval`` in this process; its exit code, report file and stderr."""
    with pytest.raises(SystemExit) as info:
        main(["judges", "eval", *args, "--format", "json", "--output", str(output)])
    _, err = capsys.readouterr()
    assert output.exists(), err
    return int(info.value.code or 0), output.read_bytes(), err


@pytest.fixture
def model_stub(monkeypatch: pytest.MonkeyPatch) -> Iterator[StubModelServer]:
    with StubModelServer(api_key=SENTINEL_KEY) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.openai_url)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.anthropic_url)
        monkeypatch.setenv("OPENAI_API_KEY", SENTINEL_KEY)
        monkeypatch.setenv("ANTHROPIC_API_KEY", SENTINEL_KEY)
        yield server


def test_every_way_a_sample_ends_gives_the_golden_report(
        model_stub: StubModelServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = write_recipe(tmp_path / "recipe", {"billing": (GATED_JUDGE, FAULTY_ROWS)})
    with (root / "judges" / "billing.calibration.jsonl").open("a", encoding="utf-8") as rows:
        rows.write('{"schema_version": 1, "record_type": "judge_fixture"}\n')  # rejected
    code, report, err = run_eval_cli(
        [str(root), "--samples", "3", "--concurrency", "1", "--max-retries", "1",
         "--timeout", "5", "--max-error-rate", "1"], tmp_path / "report.json", capsys)
    assert code == 3, err  # a row failed at the provider after retries
    port = port_of(model_stub.openai_url)
    check_golden("faulty_samples", normalised(report, root, port))
    check_golden("faulty_samples", normalised(err.encode(), root, port), suffix=".stderr")


def test_two_models_then_their_cached_rerun_give_the_golden_reports(
        model_stub: StubModelServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = write_recipe(tmp_path / "recipe", {"billing": (GATED_JUDGE, COMPARED_ROWS),
                                              "helpful": (UNGATED_JUDGE, COMPARED_ROWS[:4])})
    args = [str(root), "--model", "stub-model", "--model", "anthropic:stub-model-b",
            "--concurrency", "4", "--max-retries", "0", "--timeout", "5"]
    code, report, err = run_eval_cli(args, tmp_path / "cold.json", capsys)
    assert code == 0, err
    port = port_of(model_stub.openai_url)
    check_golden("compared_cold", normalised(report, root, port))
    check_golden("compared_cold", normalised(err.encode(), root, port), suffix=".stderr")
    sent = len(model_stub.requests)
    code, report, err = run_eval_cli(args, tmp_path / "cached.json", capsys)
    assert code == 0, err
    assert len(model_stub.requests) == sent  # every verdict from the cache
    check_golden("compared_cached", normalised(report, root, port))
    check_golden("compared_cached", normalised(err.encode(), root, port), suffix=".stderr")


def test_refusals_that_open_the_breaker_give_the_golden_report(
        model_stub: StubModelServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [fixture_row(f"conv_{index}", f"VERDICT:pass {index}", expected="pass", split="dev")
            for index in range(8)]
    root = write_recipe(tmp_path / "recipe", {"helpful": (UNGATED_JUDGE, rows)})
    model_stub.queue.extend(error_reply("openai", 400, "no such model") for _ in range(5))
    code, report, err = run_eval_cli(
        [str(root), "--concurrency", "1", "--max-retries", "0", "--timeout", "5",
         "--max-error-rate", "1"], tmp_path / "report.json", capsys)
    assert code == 2, err  # refused as wrong: the judge's llm settings
    assert len(model_stub.requests) == 5  # the breaker opened: the rest were not sent
    port = port_of(model_stub.openai_url)
    check_golden("refused", normalised(report, root, port))
    check_golden("refused", normalised(err.encode(), root, port), suffix=".stderr")


def test_a_batch_run_gives_the_golden_report(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    root = write_recipe(tmp_path / "recipe", {"helpful": (UNGATED_JUDGE, BATCH_ROWS)})
    with StubBatchServer(api_key=SENTINEL_KEY) as stub:
        monkeypatch.setenv("OPENAI_BASE_URL", stub.openai_url)
        monkeypatch.setenv("OPENAI_API_KEY", SENTINEL_KEY)
        code, report, err = run_eval_cli(
            [str(root), "--batch", "--poll-interval", "0.02", "--timeout", "5",
             "--max-error-rate", "1"], tmp_path / "report.json", capsys)
        port = stub.port
    assert code == 2, err  # the provider refused a request as wrong
    check_golden("batch", normalised(report, root, port))
    check_golden("batch", normalised(err.encode(), root, port), suffix=".stderr")
