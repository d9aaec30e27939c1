"""A hostile runtime: bodies of any size or encoding, bodies that never end or trickle.

Each case runs the real CLI in a child process against a raw-socket server on
127.0.0.1 and measures the child's peak resident memory (``wait4``). Every
answer is bounded: 64 MiB of decoded body at most (exit 3, not a MemoryError),
and ``INTROSPECTION_HTTP_TIMEOUT`` seconds for the whole answer, body included.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.hostile.harness import run_cli_measured
from tests.hostile.hostile_http import (
    Responder,
    endless_chunked,
    gzip_bomb_body,
    huge_body,
    serving,
    trickle,
)

TOKEN = "itk_hostile_runtime_token_7"
#: The peak resident memory a bounded read may reach (the cap is 64 MiB).
PEAK_MB = 200

OVERSIZED: dict[str, Callable[[Callable[[], bool]], Responder]] = {
    "1 GiB with a Content-Length": lambda stop: huge_body(1 << 30, stop),
    "endless chunked": endless_chunked,
    "gzip bomb (256 MiB decoded)": lambda stop: gzip_bomb_body(256),
}


def env_for(url: str, tmp_path: Path, **extra: str) -> dict[str, str]:
    return {"INTROSPECTION_API_URL": url, "INTROSPECTION_TOKEN": TOKEN,
            "INTROSPECTION_CONFIG_DIR": str(tmp_path / "config"), **extra}


def export_args(tmp_path: Path) -> list[str]:
    (tmp_path / "ids.txt").write_text("conv_01\n")
    return ["conversations", "get", "--ids-file", "ids.txt", "--judge-fixtures",
            "--format", "json"]


@pytest.mark.parametrize("name", list(OVERSIZED))
def test_an_oversized_export_answer_is_exit_3_in_bounded_memory(tmp_path: Path,
                                                                  name: str) -> None:
    with serving(OVERSIZED[name]) as server:
        outcome = run_cli_measured(export_args(tmp_path), tmp_path,
                                   extra_env=env_for(server.url, tmp_path))

    print(f"{name}: exit {outcome.returncode} in {outcome.seconds:.2f}s, "
          f"peak {outcome.peak_mb:.0f} MB")
    assert outcome.returncode == 3, outcome.stderr
    assert "with more than 64 MiB (decoded)" in outcome.stderr
    assert "MemoryError" not in outcome.stderr
    assert outcome.peak_mb < PEAK_MB, f"{name}: peak {outcome.peak_mb:.0f} MB"
    assert len(server.requests) == 1  # an answer over the cap is not asked for again
    assert outcome.stdout == ""


@pytest.mark.parametrize("name", list(OVERSIZED))
def test_an_oversized_whoami_answer_fails_login_in_bounded_memory(tmp_path: Path,
                                                                   name: str) -> None:
    with serving(OVERSIZED[name]) as server:
        outcome = run_cli_measured(["login", "--url", server.url, "--token-stdin"], tmp_path,
                                   extra_env={"INTROSPECTION_CONFIG_DIR": str(tmp_path / "c")},
                                   stdin_bytes=TOKEN.encode() + b"\n")

    assert outcome.returncode == 3, outcome.stderr
    assert "with more than 64 MiB (decoded)" in outcome.stderr
    assert outcome.peak_mb < PEAK_MB, f"{name}: peak {outcome.peak_mb:.0f} MB"
    assert not (tmp_path / "c" / "credentials.json").exists()


WHOAMI = json.dumps({"user": {"email": "ada@example.com"}, "org": {"name": "Acme"}}).encode()


@pytest.mark.parametrize("head_too", [False, True], ids=["body", "headers and body"])
def test_a_trickled_whoami_answer_stops_login_at_the_timeout(tmp_path: Path,
                                                             head_too: bool) -> None:
    # One byte every 0.25 s: no single read ever waits the 2 s timeout, and the whole
    # answer would take longer than the harness ceiling; only a wall clock stops it.
    with serving(lambda stop: trickle(WHOAMI, 0.25, stop, head_too=head_too)) as server:
        outcome = run_cli_measured(
            ["login", "--url", server.url, "--token-stdin"], tmp_path,
            extra_env={"INTROSPECTION_CONFIG_DIR": str(tmp_path / "c"),
                       "INTROSPECTION_HTTP_TIMEOUT": "2", "INTROSPECTION_HTTP_ATTEMPTS": "1"},
            stdin_bytes=TOKEN.encode() + b"\n")

    assert outcome.returncode == 3, outcome.stderr
    assert "did not answer within 2s (1 attempt(s))" in outcome.stderr
    assert not (tmp_path / "c" / "credentials.json").exists()


def test_a_trickled_export_answer_stops_at_the_timeout_on_every_attempt(tmp_path: Path) -> None:
    body = json.dumps({"fixtures": [], "errors": []}).encode() + b" " * 200
    with serving(lambda stop: trickle(body, 0.25, stop)) as server:
        outcome = run_cli_measured(export_args(tmp_path), tmp_path, extra_env=env_for(
            server.url, tmp_path, INTROSPECTION_HTTP_TIMEOUT="1.5",
            INTROSPECTION_HTTP_ATTEMPTS="3", INTROSPECTION_HTTP_MAX_WAIT="0"))

    assert outcome.returncode == 3, outcome.stderr
    assert "did not answer within 1.5s (3 attempt(s))" in outcome.stderr
    assert len(server.requests) == 3
