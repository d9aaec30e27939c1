"""``judges eval --batch`` as users run it: real subprocesses against the batch stub."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import jsonschema
import pytest

from introspection_cli.reporting.model import load_report_schema
from tests.conftest import REPO, run_cli
from tests.evaluation.conftest import SENTINEL_KEY, UNGATED_JUDGE, fixture_row, write_recipe
from tests.evaluation.stub_batch_server import StubBatchServer


@pytest.fixture
def batch_stub() -> Iterator[StubBatchServer]:
    with StubBatchServer(api_key=SENTINEL_KEY) as server:
        yield server


def env_for(stub: StubBatchServer, cache: Path) -> dict[str, str]:
    return {"OPENAI_BASE_URL": stub.openai_url, "OPENAI_API_KEY": SENTINEL_KEY,
            "ANTHROPIC_BASE_URL": stub.anthropic_url, "ANTHROPIC_API_KEY": SENTINEL_KEY,
            "INTROSPECTION_CACHE_DIR": str(cache)}


def recipe(tmp_path: Path, provider: str = "openai") -> Path:
    rows = [fixture_row(f"conv_{i}", text)
            for i, text in enumerate(["VERDICT:pass", "VERDICT:fail", "VERDICT:not_applicable"])]
    return write_recipe(tmp_path / "recipe", {"helpful": (UNGATED_JUDGE, rows)},
                        provider=provider)


def eval_args(root: Path, *extra: str) -> list[str]:
    return ["judges", "eval", str(root), "--batch", "--poll-interval", "0.02", "--format",
            "json", "--timeout", "5", *extra]


def outcomes(stdout: str) -> list[str]:
    return [row["outcome"] for row in json.loads(stdout)["judges"][0]["rows"]]


def start_cli(args: list[str], env: dict[str, str]) -> subprocess.Popen[str]:
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("INTROSPECTION_")}
    return subprocess.Popen([sys.executable, "-m", "introspection_cli", *args], cwd=REPO,
                            env={**full_env, **env}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def wait_for(condition: Callable[[], bool], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_batch_prints_its_ids_and_progress_on_stderr(provider: str, tmp_path: Path,
                                                     batch_stub: StubBatchServer) -> None:
    result = run_cli(eval_args(recipe(tmp_path, provider)),
                     env=env_for(batch_stub, tmp_path / "cache"))
    assert result.returncode == 0, result.stderr
    assert outcomes(result.stdout) == ["pass", "fail", "not_applicable"]
    report = json.loads(result.stdout)
    jsonschema.validate(report, load_report_schema())
    assert report["usage"]["requests"] == report["usage"]["batch_requests"] == 3
    (batch_id,) = batch_stub.batches
    lines = result.stderr.splitlines()
    assert f"introspection: batch {provider} {batch_id}: 3 requests submitted" in lines
    assert any(line.startswith("introspection: waiting for 1 batch (first poll in 0.02 s")
               and "Ctrl-C" in line for line in lines)
    assert any(f"{batch_id}: in_progress" in line for line in lines)  # a status change
    assert (f"introspection: batch {provider} {batch_id}: "
            f"{'completed' if provider == 'openai' else 'ended'}; 3 results, 0 failed") in lines
    assert SENTINEL_KEY not in result.stderr + result.stdout


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_sigkill_mid_poll_and_a_rerun_resume_the_same_batch(
        provider: str, tmp_path: Path, batch_stub: StubBatchServer) -> None:
    root, env = recipe(tmp_path, provider), env_for(batch_stub, tmp_path / "cache")
    batch_stub.hold.clear()  # the batch stays in_progress however often it is polled
    process = start_cli(eval_args(root), env)
    try:
        wait_for(lambda: batch_stub.polls[provider] >= 2)
    finally:
        process.kill()
        process.communicate()
    assert process.returncode == -signal.SIGKILL
    batch_stub.hold.set()
    result = run_cli(eval_args(root), env=env)
    assert result.returncode == 0, result.stderr
    assert outcomes(result.stdout) == ["pass", "fail", "not_applicable"]
    assert batch_stub.creations == {provider: 1}
    assert batch_stub.uploads == (1 if provider == "openai" else 0)
    (batch_id,) = batch_stub.batches
    assert (f"introspection: batch {provider} {batch_id}: resumed (3 requests, submitted by "
            "an earlier run)") in result.stderr
    # Nothing was sent twice: each request reached the provider once, inside the batch.
    assert len(batch_stub.requests) == 3


def test_ctrl_c_says_the_batch_keeps_running_and_the_rerun_collects_it(
        tmp_path: Path, batch_stub: StubBatchServer) -> None:
    root, env = recipe(tmp_path, "anthropic"), env_for(batch_stub, tmp_path / "cache")
    batch_stub.hold.clear()
    process = start_cli(eval_args(root), env)
    try:
        wait_for(lambda: batch_stub.polls["anthropic"] >= 2)
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, stderr
    (batch_id,) = batch_stub.batches
    assert (f"batch(es) anthropic {batch_id} keep running at the provider; rerun the same "
            "command to collect their results") in stderr
    assert "Traceback" not in stderr
    batch_stub.hold.set()
    result = run_cli(eval_args(root), env=env)
    assert result.returncode == 0, result.stderr
    assert batch_stub.creations == {"anthropic": 1}


def test_max_wait_zero_submits_and_exits_3_naming_the_batch(
        tmp_path: Path, batch_stub: StubBatchServer) -> None:
    root, env = recipe(tmp_path), env_for(batch_stub, tmp_path / "cache")
    result = run_cli(eval_args(root, "--max-wait", "0"), env=env)
    assert result.returncode == 3, result.stderr
    assert outcomes(result.stdout) == ["error"] * 3
    (batch_id,) = batch_stub.batches
    assert (f"3 row(s) are errors in the report: they wait for a batch still running at "
            f"the provider, or failed there. Batch(es) openai {batch_id} keep running; rerun "
            "this command to collect their results") in result.stderr
    assert "waiting for" not in result.stderr
    assert json.loads(result.stdout)["usage"]["requests"] == 0  # counted when collected
    assert run_cli(eval_args(root), env=env).returncode == 0
    assert batch_stub.creations == {"openai": 1}


@pytest.mark.parametrize(("args", "message"), [
    (["--poll-interval", "5"], "--poll-interval only applies with --batch"),
    (["--max-wait", "5"], "--max-wait only applies with --batch"),
    (["--batch", "--poll-interval", "0"], "--poll-interval must be a positive number"),
    (["--batch", "--poll-interval", "nan"], "--poll-interval must be a positive number"),
    (["--batch", "--max-wait", "inf"], "--max-wait must be 0 or a positive number"),
    (["--batch", "--max-wait", "-1"], "--max-wait must be 0 or a positive number"),
])
def test_bad_batch_flags_are_usage_errors(args: list[str], message: str, tmp_path: Path,
                                          batch_stub: StubBatchServer) -> None:
    result = run_cli(["judges", "eval", str(recipe(tmp_path)), *args],
                     env=env_for(batch_stub, tmp_path / "cache"))
    assert result.returncode == 2
    assert message in result.stderr
    assert batch_stub.creations == {}


def test_the_text_report_says_how_many_requests_went_through_the_batch_api(
        tmp_path: Path, batch_stub: StubBatchServer) -> None:
    root, env = recipe(tmp_path), env_for(batch_stub, tmp_path / "cache")
    args = [a for a in eval_args(root) if a not in ("--format", "json")]
    result = run_cli(args, env=env)
    assert result.returncode == 0, result.stderr
    assert "usage: 3 requests (3 through the batch API), 0 cache hits" in result.stdout
    cached = run_cli(args, env=env)  # nothing sent: no batch count to mention
    assert "usage: 0 requests, 3 cache hits" in cached.stdout


def test_a_batch_run_is_priced_at_the_batch_discount(tmp_path: Path,
                                                     batch_stub: StubBatchServer) -> None:
    table = tmp_path / "prices.toml"
    table.write_text('["stub-model"]\ninput = 2.0\ncached_input = 0.5\noutput = 10.0\n'
                     "batch_discount = 0.5\n", encoding="utf-8")
    root = recipe(tmp_path)
    costs = {}
    for name, extra in (("direct", []), ("batch", ["--batch", "--poll-interval", "0.02"])):
        env = {**env_for(batch_stub, tmp_path / f"cache-{name}"),
               "INTROSPECTION_PRICES": str(table)}
        result = run_cli(["judges", "eval", str(root), "--format", "json", "--timeout", "5",
                          *extra], env=env)
        assert result.returncode == 0, result.stderr
        usage = json.loads(result.stdout)["usage"]
        assert usage["requests"] == 3 and usage["input_tokens"] > 0
        costs[name] = usage["cost"]
    assert costs["direct"] > 0
    assert costs["batch"] == pytest.approx(costs["direct"] * 0.5)
