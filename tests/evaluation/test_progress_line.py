"""The progress line of ``judges eval``: drawn on a terminal's stderr only, never in a log."""

from __future__ import annotations

import fcntl
import io
import json
import os
import re
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

from introspection_cli.cli.batch_progress import BatchProgress
from introspection_cli.cli.progress import RowProgress, StatusLine
from introspection_cli.evaluation.batch import BatchState
from introspection_cli.evaluation.runner import RunProgress
from tests.evaluation.conftest import (
    GATED_JUDGE,
    SENTINEL_KEY,
    UNGATED_JUDGE,
    fixture_row,
    write_recipe,
)
from tests.evaluation.stub_model_server import StubModelServer

SGR = re.compile(rb"\x1b\[[0-9;]*m")


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_line_shows_rows_rate_eta_requests_cache_hits_and_errors() -> None:
    out, clock = io.StringIO(), Clock()
    progress = RowProgress(StatusLine(out), clock=clock)
    progress(RunProgress(20, 120, requests=0, cache_hits=20))  # cached rows: done at the start
    clock.now += 10
    progress(RunProgress(60, 120, requests=41, cache_hits=20, errors=2))
    assert out.getvalue().split("\r\033[K")[1:] == [
        "20/120 rows, 0 requests, 20 cache hits, 0 errors",
        # 40 rows in 10 s (the 20 cached ones do not count): 4 rows/s, 60 left: 15 s.
        "60/120 rows, 4/s, ETA 15 s, 41 requests, 20 cache hits, 2 errors",
    ]


def test_samples_waiting_for_another_run_are_counted_when_there_are_some() -> None:
    progress = RowProgress(StatusLine(io.StringIO()), eta=False)
    assert progress.describe(RunProgress(5, 10, requests=3, waiting=4), 0) == (
        "5/10 rows, 3 requests, 0 cache hits, 0 errors, 4 waiting for another run")
    assert "waiting" not in progress.describe(RunProgress(5, 10, requests=3), 0)


def test_redraws_are_throttled_but_the_last_row_is_always_drawn() -> None:
    out, clock = io.StringIO(), Clock()
    progress = RowProgress(StatusLine(out), clock=clock)
    for done in range(1, 100):
        clock.now += 0.001
        progress(RunProgress(done, 100, requests=done))
    progress(RunProgress(100, 100, requests=100))
    draws = out.getvalue().split("\r\033[K")[1:]
    assert len(draws) == 2
    assert draws[-1].startswith("100/100 rows, ")
    assert "ETA" not in draws[-1]


@pytest.mark.parametrize(("seconds", "shown"), [(0.2, "1 s"), (44.6, "45 s"), (600, "10 min"),
                                                (11100, "3 h 5 min")])
def test_eta_reads_as_people_say_it(seconds: float, shown: str) -> None:
    out, clock = io.StringIO(), Clock()
    progress = RowProgress(StatusLine(out), clock=clock)
    progress(RunProgress(0, 2000))
    # 1000 rows in `seconds`: the 1000 rows left take as long again.
    assert f"ETA {shown}," in progress.describe(RunProgress(1000, 2000), 100 + seconds)


def test_batch_and_row_progress_share_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "60")
    out = io.StringIO()
    line = StatusLine(out)
    batches = BatchProgress(out, redraw=True, line=line)
    rows = RowProgress(line, eta=False)
    batches.polled("openai", BatchState("batch_1", "in_progress", False, 3, 10))
    rows(RunProgress(5, 10, requests=3, cache_hits=2))
    drawn = out.getvalue().split("\r\033[K")[1:]
    assert drawn[0] == "openai batch_1 in_progress 3/10"
    # Both parts on one line, cut to the terminal's width (59 columns and an ellipsis).
    assert drawn[1].startswith("openai batch_1 in_progress 3/10 | 5/10 rows, 3 requests, ")
    assert len(drawn[1]) == 59 and drawn[1].endswith("…")
    batches.submitted("openai", "batch_2", 1, resumed=False)  # a message clears the line first
    assert out.getvalue().endswith("\r\033[Kintrospection: batch openai batch_2: 1 requests "
                                   "submitted\n")


# --- a real run on a pseudo-terminal ------------------------------------------------------

def _run_on_pty(recipe: Path, stub: StubModelServer, *args: str,
                extra_env: dict[str, str] | None = None, terminal: bool = True,
                command: tuple[str, ...] = ("eval", "--max-error-rate", "0.5")
                ) -> tuple[int, bytes, bytes]:
    """``judges eval`` (or another ``judges`` ``command``) with stderr on a pty (or a
    pipe); (exit code, stdout, stderr)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("INTROSPECTION_", "OPENAI_", "ANTHROPIC_")) and k != "NO_COLOR"}
    env.update({"OPENAI_BASE_URL": stub.openai_url, "OPENAI_API_KEY": SENTINEL_KEY,
                "INTROSPECTION_CACHE_DIR": str(recipe.parent / "cache"), "TERM": "xterm",
                **(extra_env or {})})
    primary, secondary = os.openpty() if terminal else os.pipe()
    if terminal:  # a terminal 100 columns wide
        fcntl.ioctl(secondary, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 100, 0, 0))
    process = subprocess.Popen(
        [sys.executable, "-m", "introspection_cli", "judges", command[0], str(recipe),
         *command[1:], *args],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=secondary, env=env)
    os.close(secondary)
    shown = b""
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([primary], [], [], 0.1)
            if ready:
                try:
                    chunk = os.read(primary, 4096)
                except OSError:  # the pty's other side closed
                    break
                if not chunk:
                    break
                shown += chunk
            elif process.poll() is not None:
                break
        assert process.stdout is not None
        stdout = process.stdout.read()
        return process.wait(timeout=30), stdout, shown
    finally:
        process.kill()
        process.wait()
        os.close(primary)


ROWS = [fixture_row(f"conv_{n}", f"Refund invoice {n} VERDICT:pass", expected="pass",
                    split="dev") for n in range(6)]
ROWS.append(fixture_row("conv_bad", "Invoice FAULT:wrong-enum", expected="fail", split="dev"))


def test_a_terminal_sees_the_line_a_pipe_does_not(stub: StubModelServer, tmp_path: Path) -> None:
    recipe = write_recipe(tmp_path / "recipe", {"billing": (GATED_JUDGE, ROWS)})
    code, stdout, shown = _run_on_pty(recipe, stub, extra_env={"NO_COLOR": "1"})
    assert code == 0, shown
    draws = shown.split(b"\r\x1b[K")
    assert re.fullmatch(rb"7/7 rows, [0-9.e+]+/s, 7 requests, 0 cache hits, "
                        rb"1 error", draws[-2]), draws
    assert draws[-1] == b""  # cleared before the report and before anything else is said
    assert not SGR.search(shown) and not SGR.search(stdout)  # NO_COLOR: no styling at all
    assert b"judge billing" in stdout and b"\r" not in stdout
    # A second run answers from the cache: the line says so.
    code, _, shown = _run_on_pty(recipe, stub)
    assert code == 0
    assert shown.startswith(b"\r\x1b[K6/7 rows, 0 requests, 6 cache hits, 0 errors\r\x1b[K")
    assert re.search(rb"\r\x1b\[K7/7 rows, [0-9.e+]+/s, 1 request, 6 cache hits, 1 error\r\x1b\[K$",
                     shown), shown
    # Into a pipe (a CI log), nothing is redrawn.
    code, _, logged = _run_on_pty(recipe, stub, terminal=False)
    assert code == 0 and b"\r" not in logged and b"rows" not in logged


def test_a_slow_run_on_a_terminal_shows_the_rate_and_eta_as_it_goes(
        stub: StubModelServer, tmp_path: Path) -> None:
    stub.latency = 0.25  # one call at a time, a quarter second each: the line is redrawn
    recipe = write_recipe(tmp_path / "recipe", {"billing": (GATED_JUDGE, ROWS[:6])})
    code, _, shown = _run_on_pty(recipe, stub, "--concurrency", "1")
    assert code == 0, shown
    draws = [draw.decode() for draw in shown.split(b"\r\x1b[K") if draw]
    midway = [draw for draw in draws if re.fullmatch(
        r"[1-5]/6 rows, [0-9.]+/s, ETA [0-9]+ s, [1-5] requests?, 0 cache hits, 0 errors", draw)]
    assert midway, draws
    assert draws[-1].startswith("6/6 rows, ") and "ETA" not in draws[-1]


def test_estimate_on_production_rows_draws_the_same_line(
        stub: StubModelServer, tmp_path: Path) -> None:
    """``judges estimate --rows`` runs the judge as ``judges eval`` does, with its line."""
    calibration = [fixture_row(f"cal_{verdict}_{n}", f"cal {n} VERDICT:{verdict}",
                               expected=verdict, split="dev")
                   for verdict in ("pass", "fail") for n in range(20)]
    recipe = write_recipe(tmp_path / "recipe", {"helpful": (UNGATED_JUDGE, calibration)})
    report = tmp_path / "report.json"
    code, _, shown = _run_on_pty(recipe, stub, "--output", str(report), terminal=False)
    assert code == 0, shown
    production = tmp_path / "production.jsonl"
    production.write_text("".join(
        json.dumps(fixture_row(f"prod_{n}", f"prod {n} VERDICT:{'pass' if n % 2 else 'fail'}",
                               expected=None)) + "\n" for n in range(40)))
    code, stdout, shown = _run_on_pty(recipe, stub, extra_env={"NO_COLOR": "1"}, command=(
        "estimate", "--judge", "helpful", "--report", str(report), "--split", "dev",
        "--rows", str(production)))
    assert code == 0, shown + stdout
    draws = shown.split(b"\r\x1b[K")
    assert re.fullmatch(rb"40/40 rows, [0-9.e+]+/s, 40 requests, 0 cache hits, 0 errors",
                        draws[-2]), draws
    # Cleared before anything else is said (here the estimate's warning about its
    # calibration), and never redrawn after it.
    assert draws[-1].startswith(b"introspection: warning: "), draws
    assert b"corrected pass rate" in stdout and b"\r" not in stdout
