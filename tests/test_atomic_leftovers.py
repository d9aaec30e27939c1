"""Killed atomic writes: the file is never torn, ``check`` names the temp files they left, and
the next write to the same file removes them, never a live writer's.

Each writer is a child process stopped inside ``fsync`` (the temp file is
complete, the rename not done) and then SIGKILLed: the state a kill at the
worst moment leaves, reached deterministically, a bounded number of times.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from introspection_cli.fsutil import atomic_write_bytes
from introspection_cli.tempnames import leftover_temp_target
from tests.conftest import run_cli

KILLS = 5

#: Writes argv[2] bytes to argv[1] atomically, but stops for good inside fsync.
_STUCK_WRITER = """
import os, sys, time
from pathlib import Path
from introspection_cli import fsutil
def stuck(fd):
    print("in fsync", flush=True)
    time.sleep(120)
os.fsync = stuck
fsutil.atomic_write_bytes(Path(sys.argv[1]), b"n" * int(sys.argv[2]))
"""


@contextmanager
def stuck_writers(target: Path, count: int = 1,
                  size: int = 1 << 20) -> Iterator[list[subprocess.Popen[str]]]:
    """``count`` children, each stopped inside its atomic write of ``target`` (all alive at
    once, so none is a killed write the next one may clean up); killed on exit."""
    children: list[subprocess.Popen[str]] = []
    try:
        for _ in range(count):
            child = subprocess.Popen([sys.executable, "-c", _STUCK_WRITER, str(target),
                                      str(size)], stdout=subprocess.PIPE, text=True)
            children.append(child)
            assert child.stdout is not None
            assert child.stdout.readline() == "in fsync\n"
        yield children
    finally:
        for child in children:
            child.kill()
            child.wait()
            if child.stdout is not None:
                child.stdout.close()


def kill_writes(target: Path, count: int) -> None:
    """Leave ``count`` killed writes of ``target``."""
    with stuck_writers(target, count) as children:
        for child in children:
            child.send_signal(signal.SIGKILL)


def temp_files(directory: Path) -> list[str]:
    return sorted(name for name in os.listdir(directory) if leftover_temp_target(name))


def recipe(tmp_path: Path) -> Path:
    root = tmp_path / "recipe"
    (root / "judges").mkdir(parents=True)
    (root / "SYSTEM.md").write_text("You are a support agent.\n")
    return root


def test_killed_writes_leave_the_file_whole_and_check_names_their_temp_files(
    tmp_path: Path
) -> None:
    root = recipe(tmp_path)
    target = root / "judges" / "billing.calibration.jsonl"
    target.write_bytes(b"original\n")
    kill_writes(target, KILLS)

    leftovers = temp_files(target.parent)
    result = run_cli(["check", str(root), "--format", "json"])
    reported = [d for d in json.loads(result.stdout)["diagnostics"]
                if d["code"] == "leftover-temp-file"]

    assert target.read_bytes() == b"original\n"
    assert len(leftovers) == KILLS
    assert all(name.startswith(".billing.calibration.jsonl.introspection-")
               for name in leftovers)
    assert sorted(Path(d["path"]).name for d in reported) == leftovers
    assert all(d["severity"] == "warning" for d in reported)


def test_the_next_write_removes_the_stale_temp_files(tmp_path: Path) -> None:
    target = tmp_path / "report.json"
    kill_writes(target, KILLS)
    assert len(temp_files(tmp_path)) == KILLS

    atomic_write_bytes(target, b"new\n")

    assert target.read_bytes() == b"new\n"
    assert temp_files(tmp_path) == []


def test_a_live_writers_temp_file_is_left_alone(tmp_path: Path) -> None:
    target = tmp_path / "report.json"
    with stuck_writers(target, 2):
        live = temp_files(tmp_path)
        atomic_write_bytes(target, b"mine\n")
        assert temp_files(tmp_path) == live
        assert len(live) == 2
    assert target.read_bytes() == b"mine\n"


def test_only_the_same_targets_temp_files_are_removed(tmp_path: Path) -> None:
    other = tmp_path / "other.json"
    kill_writes(other, 1)
    foreign = tmp_path / ".report.json.abcd1234.tmp"  # an earlier version's, or not ours
    foreign.write_bytes(b"?")

    atomic_write_bytes(tmp_path / "report.json", b"x")

    assert len(temp_files(tmp_path)) == 2  # other.json's leftover and the foreign one
    assert foreign.exists()
