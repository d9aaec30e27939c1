"""The verdict cache only saves money: a broken, locked or read-only cache never stops a run.

A corrupt database (garbage, truncated, a malformed page found when read) is
moved aside and replaced; a cache another process has locked, or that is
read-only, is used as far as it can be, with a warning; every read and write
runs off the event loop's thread. The CLI cases run the real command against
the stub model server, with a hang guard (tests/hostile/harness.py).
"""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from introspection_cli.evaluation.cache import CACHE_FILE, VerdictCache
from introspection_cli.evaluation.runner import EvalOptions, run_eval
from introspection_cli.evaluation.verdict import ParsedVerdict
from tests.evaluation.conftest import (
    GATED_JUDGE,
    SENTINEL_KEY,
    fixture_row,
    recipe_object,
    write_recipe,
)
from tests.evaluation.stub_model_server import StubModelServer
from tests.hostile.harness import TIME_CEILING_S, run_cli_measured

ROWS = [f"refund {i} VERDICT:{'pass' if i % 2 else 'fail'}" for i in range(6)]


@pytest.fixture
def recipe(tmp_path: Path) -> Path:
    rows = [fixture_row(f"conv_{i}", text) for i, text in enumerate(ROWS)]
    return write_recipe(tmp_path / "recipe", {"billing": (GATED_JUDGE, rows)})


@pytest.fixture
def server() -> Iterator[StubModelServer]:
    with StubModelServer(api_key=SENTINEL_KEY) as stub:
        yield stub


def eval_cli(recipe: Path, cache: Path, server: StubModelServer, *,
             honour_permissions: bool = False) -> tuple[int, dict[str, object], str]:
    outcome = run_cli_measured(
        ["judges", "eval", str(recipe), "--format", "json"], recipe.parent,
        honour_permissions=honour_permissions,
        extra_env={"INTROSPECTION_CACHE_DIR": str(cache), "OPENAI_BASE_URL": server.openai_url,
                   "OPENAI_API_KEY": SENTINEL_KEY})
    assert outcome.returncode != -9, f"killed after {TIME_CEILING_S} s: {outcome.stderr}"
    report = json.loads(outcome.stdout) if outcome.stdout.strip() else {}
    return outcome.returncode, report, outcome.stderr


def usage(report: dict[str, object]) -> tuple[int, int]:
    counts = report["usage"]
    assert isinstance(counts, dict)
    return counts["requests"], counts["cached"]


def fill(directory: Path, count: int) -> None:
    with VerdictCache(directory) as cache:
        for i in range(count):
            cache.put(f"key-{i:05d}", ParsedVerdict("pass", f"reasoning {i} " + "x" * 300))
    db = sqlite3.connect(directory / CACHE_FILE)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()


def asides(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if ".corrupt-" in p.name)


@pytest.mark.parametrize("damage", ["garbage", "truncated"])
def test_a_corrupt_cache_is_moved_aside_and_the_run_goes_on(
        tmp_path: Path, recipe: Path, server: StubModelServer, damage: str) -> None:
    cache = tmp_path / "cache"
    fill(cache, 2000)
    path = cache / CACHE_FILE
    original = os.urandom(64 * 1024) if damage == "garbage" else path.read_bytes()[:20000]
    path.write_bytes(original)
    code, report, stderr = eval_cli(recipe, cache, server)
    assert code == 0, stderr
    assert usage(report) == (6, 0)
    assert "was corrupt" in stderr and "moved aside to verdicts.sqlite3.corrupt-" in stderr
    (aside,) = asides(cache)
    assert (cache / aside).read_bytes() == original  # kept as it was, for whoever wants it
    # The fresh cache works: the next run is served from it.
    code, report, stderr = eval_cli(recipe, cache, server)
    assert (code, usage(report)) == (0, (0, 6)) and "corrupt" not in stderr


def test_a_malformed_page_found_when_reading_starts_a_fresh_cache(tmp_path: Path) -> None:
    fill(tmp_path, 3000)
    path = tmp_path / CACHE_FILE
    size = path.stat().st_size
    with path.open("r+b") as handle:  # wreck pages in the middle, keep the header and schema
        handle.seek(size // 2)
        handle.write(b"\xff" * (size // 4))
    with VerdictCache(tmp_path) as cache:
        found = cache.get_many([f"key-{i:05d}" for i in range(3000)])
        assert len(found) < 3000
        assert any("was corrupt" in warning for warning in cache.warnings)
        cache.put("after", ParsedVerdict("fail", "written to the fresh cache"))
    assert len(asides(tmp_path)) == 1
    with VerdictCache(tmp_path) as fresh:
        assert fresh.get("after") == ParsedVerdict("fail", "written to the fresh cache")
        assert fresh.warnings == []


_HOLD_LOCK = """
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("PRAGMA locking_mode = EXCLUSIVE")
db.execute("BEGIN EXCLUSIVE")
db.execute("INSERT OR REPLACE INTO verdicts (key, verdict, reasoning) VALUES ('x', 'pass', 'r')")
print("locked", flush=True)
time.sleep(60)
"""


def test_a_cache_locked_by_another_process_is_not_waited_for(
        tmp_path: Path, recipe: Path, server: StubModelServer) -> None:
    cache = tmp_path / "cache"
    fill(cache, 10)
    holder = subprocess.Popen([sys.executable, "-c", _HOLD_LOCK, str(cache / CACHE_FILE)],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        code, report, stderr = eval_cli(recipe, cache, server)
    finally:
        holder.kill()
        holder.wait()
    assert code == 0, stderr
    assert usage(report) == (6, 0)
    assert "locked by another process" in stderr


def test_a_read_only_cache_serves_a_fully_cached_run(
        tmp_path: Path, recipe: Path, server: StubModelServer) -> None:
    cache = tmp_path / "cache"
    assert eval_cli(recipe, cache, server)[0] == 0
    modes = {path: path.stat().st_mode for path in cache.iterdir()}
    for path in cache.iterdir():
        path.chmod(0o444)
    cache.chmod(0o555)
    try:
        code, report, stderr = eval_cli(recipe, cache, server, honour_permissions=True)
    finally:
        cache.chmod(0o755)
        for path, mode in modes.items():
            path.chmod(mode)
    assert code == 0, stderr
    assert usage(report) == (0, 6)
    assert "read-only" in stderr


def test_cache_reads_and_writes_never_run_on_the_event_loop_thread(
        tmp_path: Path, recipe: Path, server: StubModelServer,
        monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[str, str, bool]] = []  # (method, thread, whether a loop runs in it)
    for name in ("get_many", "get_memos", "write"):
        original = getattr(VerdictCache, name)

        def recorded(self: VerdictCache, *args: object, _original: object = original,
                     _name: str = name) -> object:
            try:
                asyncio.get_running_loop()
                in_loop = True
            except RuntimeError:
                in_loop = False
            calls.append((_name, threading.current_thread().name, in_loop))
            return _original(self, *args)  # type: ignore[operator]

        monkeypatch.setattr(VerdictCache, name, recorded)
    env = {"OPENAI_BASE_URL": server.openai_url, "OPENAI_API_KEY": SENTINEL_KEY}
    options = EvalOptions(cache_dir=tmp_path / "cache", max_retries=0, timeout=5.0)
    run_eval(recipe_object(recipe), options, environ=env)  # cold: calls, then writes
    writes = {thread for method, thread, _ in calls if method == "write"}
    assert writes and threading.main_thread().name not in writes
    # Found by memo, every row: read before any event loop starts (on the main thread).
    again = run_eval(recipe_object(recipe), options, environ=env)
    assert again.run.usage.requests == 0
    assert calls and not any(in_loop for _, _, in_loop in calls), calls
