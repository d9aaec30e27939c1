"""Two runs on one cache never pay twice: real processes, requests counted at the stub."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from introspection_cli.evaluation.runner import EvalOptions, run_eval
from tests.conftest import run_cli
from tests.evaluation.conftest import (
    SENTINEL_KEY,
    UNGATED_JUDGE,
    fixture_row,
    recipe_object,
    write_recipe,
)
from tests.evaluation.stub_batch_server import StubBatchServer
from tests.evaluation.stub_model_server import (
    RecordedRequest,
    StubModelServer,
    StubReply,
    marker_reply,
)
from tests.evaluation.test_batch_cli import start_cli

ROWS = 300
CLAIMS_FILE = "claims.sqlite3"


def shared_recipe(tmp_path: Path, provider: str = "openai") -> Path:
    rows = [fixture_row(f"conv_{i}", f"VERDICT:pass row {i}") for i in range(ROWS)]
    return write_recipe(tmp_path / "recipe", {"helpful": (UNGATED_JUDGE, rows)},
                        provider=provider)


def env_on(stub: StubModelServer | StubBatchServer, cache: Path) -> dict[str, str]:
    return {"OPENAI_BASE_URL": stub.openai_url, "OPENAI_API_KEY": SENTINEL_KEY,
            "ANTHROPIC_BASE_URL": stub.anthropic_url, "ANTHROPIC_API_KEY": SENTINEL_KEY,
            "INTROSPECTION_CACHE_DIR": str(cache)}


def direct_args(root: Path, *extra: str) -> list[str]:
    return ["judges", "eval", str(root), "--format", "json", "--timeout", "60",
            "--concurrency", "8", *extra]


def batch_args(root: Path, *extra: str) -> list[str]:
    return direct_args(root, "--batch", "--poll-interval", "0.02", *extra)


def wait_until(condition: Callable[[], bool], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def finish(process: subprocess.Popen[str]) -> tuple[int, dict[str, Any], str]:
    stdout, stderr = process.communicate(timeout=180)
    return process.returncode, json.loads(stdout or "null"), stderr


def outcomes(report: dict[str, Any]) -> list[str]:
    return [row["outcome"] for row in report["judges"][0]["rows"]]


def held_until(go: threading.Event) -> Callable[[RecordedRequest, int], StubReply]:
    """A stub script whose replies wait until ``go`` is set."""
    def reply(request: RecordedRequest, attempt: int) -> StubReply:
        go.wait(60)
        return marker_reply(request, attempt, hang_seconds=0)

    return reply


def test_two_direct_runs_of_the_same_rows_started_together_pay_once(tmp_path: Path) -> None:
    root, go = shared_recipe(tmp_path), threading.Event()
    with StubModelServer(api_key=SENTINEL_KEY, script=held_until(go)) as stub:
        env = env_on(stub, tmp_path / "cache")
        runs = [start_cli(direct_args(root), env) for _ in range(2)]
        try:
            # Hold every reply until both runs are calling (each has 8 calls in flight),
            # so the second cannot simply find the first's verdicts in the cache.
            both_calling = wait_until(lambda: len(stub.requests) >= 16, 60)
        finally:
            go.set()
        results = [finish(run) for run in runs]
    # Otherwise the runs did not overlap, and paying once would prove nothing.
    assert both_calling, [stderr for _, _, stderr in results]
    for code, report, stderr in results:
        assert code == 0, stderr
        assert outcomes(report) == ["pass"] * ROWS
    # Once seen under a loaded full-suite run (600 requests): say what the runs said.
    assert len(stub.requests) == ROWS, [stderr for _, _, stderr in results]
    assert len({request.user_text for request in stub.requests}) == ROWS
    assert sum(report["usage"]["requests"] for _, report, _ in results) == ROWS


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_two_batch_runs_started_together_make_one_batch(provider: str, tmp_path: Path) -> None:
    root = shared_recipe(tmp_path, provider)
    with StubBatchServer(api_key=SENTINEL_KEY) as stub:
        env = env_on(stub, tmp_path / "cache")
        stub.creation_delay = 4.0  # the first run is creating its batch when the second starts
        first = start_cli(batch_args(root, "--max-wait", "0"), env)
        assert wait_until(lambda: stub.creation_attempts >= 1, 60)
        second = start_cli(batch_args(root, "--max-wait", "0"), env)
        results = [finish(run) for run in (first, second)]
        assert stub.creations == {provider: 1}
        assert stub.creation_attempts == 1
        for code, report, stderr in results:
            assert code == 3, stderr
            assert outcomes(report) == ["error"] * ROWS
        (batch_id,) = stub.batches
        assert f"batch {provider} {batch_id}: resumed" in results[1][2]
        stub.creation_delay = 0.0
        collected = run_cli(batch_args(root), env=env, timeout=180)
        assert collected.returncode == 0, collected.stderr
        assert stub.creations == {provider: 1} and len(stub.requests) == ROWS


def test_a_direct_run_and_a_batch_run_of_the_same_rows_pay_once(tmp_path: Path) -> None:
    root = shared_recipe(tmp_path)
    with StubBatchServer(api_key=SENTINEL_KEY) as stub:
        env = env_on(stub, tmp_path / "cache")
        stub.direct_hold.clear()  # the direct run's first calls wait: its rows are claimed
        direct = start_cli(direct_args(root), env)
        try:
            assert wait_until(lambda: len(stub.requests) >= 8, 60)
            batch = start_cli(batch_args(root), env)
            wait_until(lambda: bool(stub.batches), 30)
        finally:
            stub.direct_hold.set()
        results = [finish(direct), finish(batch)]
    for code, report, stderr in results:
        assert code == 0, stderr
        assert outcomes(report) == ["pass"] * ROWS
    # Each row was asked for once, directly or in the batch, and read by the other run.
    assert len(stub.requests) == ROWS
    assert len({request.user_text for request in stub.requests}) == ROWS
    assert stub.creations == {"openai": 1}
    assert sum(report["usage"]["requests"] for _, report, _ in results) == ROWS


def test_the_claims_of_a_killed_run_do_not_hold_up_the_next(tmp_path: Path) -> None:
    root, go = shared_recipe(tmp_path), threading.Event()
    with StubModelServer(api_key=SENTINEL_KEY, script=held_until(go)) as stub:
        env = env_on(stub, tmp_path / "cache")
        killed = start_cli(direct_args(root), env)
        try:
            assert wait_until(lambda: len(stub.requests) >= 8, 60)
        finally:
            killed.kill()
            killed.communicate()
            go.set()
        after = run_cli(direct_args(root), env=env, timeout=120)
    assert after.returncode == 0, after.stderr
    report = json.loads(after.stdout)
    assert outcomes(report) == ["pass"] * ROWS
    assert report["usage"]["requests"] == ROWS


def test_a_fully_cached_run_takes_no_claims(tmp_path: Path) -> None:
    root, cache = shared_recipe(tmp_path), tmp_path / "cache"
    with StubBatchServer(api_key=SENTINEL_KEY) as stub:
        env = env_on(stub, cache)
        assert run_cli(direct_args(root), env=env, timeout=120).returncode == 0
        assert (cache / CLAIMS_FILE).exists()  # the cold run took claims
        for path in cache.iterdir():
            if path.name.startswith(CLAIMS_FILE):
                path.unlink()
        for args in (direct_args(root), batch_args(root)):  # found by memo; found by key
            again = run_cli(args, env=env, timeout=120)
            assert again.returncode == 0, again.stderr
            assert json.loads(again.stdout)["usage"]["cached"] == ROWS
            assert not (cache / CLAIMS_FILE).exists()
        assert len(stub.requests) == ROWS


def test_a_locked_claims_store_is_a_warning_and_the_run_goes_on(
        tmp_path: Path, stub: StubModelServer) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    locker = sqlite3.connect(cache / CLAIMS_FILE, isolation_level=None)
    try:
        locker.execute("BEGIN EXCLUSIVE")
        root = write_recipe(tmp_path / "recipe", {"helpful": (UNGATED_JUDGE, [
            fixture_row(f"conv_{i}", "VERDICT:fail") for i in range(5)])})
        result = run_eval(recipe_object(root, gate=None), EvalOptions(cache_dir=cache))
    finally:
        locker.close()
    assert [row.outcome for row in result.run.judges[0].rows] == ["fail"] * 5
    assert result.cache_write_failures == 0
    (warning,) = [w for w in result.warnings if CLAIMS_FILE in w]
    assert "another run" in warning and "locked" in warning
