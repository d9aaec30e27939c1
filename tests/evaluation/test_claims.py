"""The claims board: one live run's claim keeps another off a request until it is let go."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from introspection_cli.evaluation.claims import CLAIMS_FILE, ClaimBoard


def test_a_claim_is_held_until_released_and_then_free_for_another_run(tmp_path: Path) -> None:
    first, second = ClaimBoard(tmp_path), ClaimBoard(tmp_path)
    try:
        assert first.claim(["k1", "k2"]) == {}
        held = second.claim(["k1", "k3"])
        assert list(held) == ["k1"] and held["k1"].pid == os.getpid()
        assert str(held["k1"]) == f"pid {os.getpid()}"
        assert second.claim(["k3"]) == {}  # its own claim: not held by another
        first.release(["k1"])
        assert second.claim(["k1"]) == {}
        assert first.claim(["k1", "k3"]).keys() == {"k1", "k3"}
        second.close()  # every claim of a run ends with it
        assert first.claim(["k1", "k3"]) == {}
    finally:
        first.close()
        second.close()
    assert sorted(path.name for path in tmp_path.iterdir()) == [CLAIMS_FILE]  # no lock files


def test_a_dead_run_s_claims_are_taken_over(tmp_path: Path) -> None:
    script = ("import sys, pathlib, os\n"
              "from introspection_cli.evaluation.claims import ClaimBoard\n"
              "board = ClaimBoard(pathlib.Path(sys.argv[1]))\n"
              "assert board.claim(['k1', 'k2']) == {}\n"
              "os._exit(0)  # dies holding its claims, without letting go of any\n")
    subprocess.run([sys.executable, "-c", script, str(tmp_path)], check=True, timeout=60)
    assert any(path.name.endswith(".lock") for path in tmp_path.iterdir())
    board = ClaimBoard(tmp_path)
    try:
        assert board.claim(["k1", "k2"]) == {}
    finally:
        board.close()
    assert not any(path.name.endswith(".lock") for path in tmp_path.iterdir())


def test_a_corrupt_claims_file_is_replaced_with_a_warning(tmp_path: Path) -> None:
    (tmp_path / CLAIMS_FILE).write_bytes(b"not a database" * 200)
    board = ClaimBoard(tmp_path)
    try:
        assert board.claim(["k1"]) == {}
    finally:
        board.close()
    (warning,) = board.warnings
    assert "was corrupt" in warning and "a new one was started" in warning


def test_a_claims_file_that_cannot_be_opened_is_a_warning_and_every_request_is_ours(
        tmp_path: Path) -> None:
    (tmp_path / CLAIMS_FILE).mkdir()  # as unusable as a file can be, even for root
    board = ClaimBoard(tmp_path)
    assert board.claim(["k1"]) == {}
    board.release(["k1"])
    board.close()
    (warning,) = board.warnings
    assert CLAIMS_FILE in warning and "may pay for some of them a second time" in warning
    assert not any(path.name.endswith(".lock") for path in tmp_path.iterdir())
