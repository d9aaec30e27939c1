"""A hostile model server: replies of any size or encoding, replies that trickle, bad TLS.

The real CLI runs in a child process (peak memory from ``wait4``) against a
raw-socket server on 127.0.0.1, through the real SDKs and their aiohttp
transport. Every reply is bounded: 4 MiB of decoded body (an ``error`` row, not a
MemoryError, and not retried), and ``--timeout`` seconds for the whole response,
body included. A certificate that does not verify is not retried and says so.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.evaluation.conftest import GATED_JUDGE, SENTINEL_KEY, fixture_row, write_recipe
from tests.evaluation.stub_model_server import tool_reply
from tests.hostile.harness import run_cli_measured
from tests.hostile.hostile_http import (
    HostileServer,
    Responder,
    endless_chunked,
    gzip_bomb,
    gzip_bomb_body,
    headers,
    huge_body,
    serving,
    trickle,
)
from tests.runtime.tls_stubs import TlsRuntime, make_certificate

#: The peak resident memory a bounded run may reach (each reply's cap is 4 MiB).
PEAK_MB = 200


def recipe(tmp_path: Path, rows: int) -> Path:
    fixtures = [fixture_row(f"conv_{i}", f"refund {i}") for i in range(rows)]
    return write_recipe(tmp_path / "recipe", {"billing": (GATED_JUDGE, fixtures)})


def eval_child(tmp_path: Path, base_url: str, rows: int, *args: str,
               **env: str) -> tuple[int, list[dict[str, object]], str, float, float]:
    root = recipe(tmp_path, rows)
    outcome = run_cli_measured(
        ["judges", "eval", str(root), "--format", "json", "--no-cache", *args], tmp_path,
        extra_env={"OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": SENTINEL_KEY, **env})
    report = json.loads(outcome.stdout) if outcome.stdout.strip() else {"judges": [{}]}
    rows_out = report["judges"][0].get("rows", [])
    return outcome.returncode, rows_out, outcome.stderr, outcome.seconds, outcome.peak_mb


OVERSIZED: dict[str, Callable[[Callable[[], bool]], Responder]] = {
    "50 MB with a Content-Length": lambda stop: huge_body(50 * 10**6, stop),
    "endless chunked": endless_chunked,
    "gzip bomb (256 MiB decoded)": lambda stop: gzip_bomb_body(256),
}


@pytest.mark.parametrize("name", list(OVERSIZED))
def test_oversized_replies_are_error_rows_in_bounded_memory(tmp_path: Path, name: str) -> None:
    gzip_bomb(256)  # made once here, not by the server's 16 threads at once
    with serving(OVERSIZED[name]) as server:
        url = server.url + "/v1"
        code, rows, stderr, seconds, peak = eval_child(
            tmp_path, url, 32, "--concurrency", "16", "--max-retries", "2")
        requests = len(server.requests)
    print(f"{name}: exit {code} in {seconds:.2f}s, peak {peak:.0f} MB")
    assert "MemoryError" not in stderr and "Traceback" not in stderr
    assert peak < PEAK_MB
    assert len(rows) == 32 and all(row["outcome"] == "error" for row in rows)
    assert all(f"{url} is larger than 4 MiB" in str(row["error"]) for row in rows)
    assert requests == 32  # not retried: a retry would read the same 4 MiB again


def completion(verdict: str = "pass") -> bytes:
    return json.dumps(tool_reply("openai", json.dumps(
        {"reasoning": "fine", "verdict": verdict}))).encode()


def test_a_trickled_reply_ends_at_the_timeout_on_every_attempt(tmp_path: Path) -> None:
    with serving(lambda stop: trickle(completion(), 0.5, stop)) as server:
        url = server.url + "/v1"
        code, rows, _, seconds, _ = eval_child(
            tmp_path, url, 1, "--timeout", "1.5", "--max-retries", "1")
        attempts = len(server.requests)
    (row,) = rows
    assert row["error"] == f"no complete answer from {url} within 1.5 s after 1 retry"
    assert attempts == 2
    assert code == 3 and seconds < 15  # two 1.5 s deadlines and a backoff, not minutes


def test_a_reply_within_the_caps_still_passes(tmp_path: Path) -> None:
    body = completion("fail")

    def respond(conn: socket.socket) -> None:
        conn.sendall(headers(Content_Type="application/json", Content_Length=str(len(body)))
                     + body)

    with HostileServer(respond) as server:
        code, rows, stderr, _, _ = eval_child(tmp_path, server.url + "/v1", 3)
    assert code == 0, stderr
    assert [row["outcome"] for row in rows] == ["fail"] * 3


def test_an_untrusted_certificate_is_not_retried_and_stops_the_calls(tmp_path: Path) -> None:
    certificate = make_certificate(tmp_path / "tls")
    with TlsRuntime(certificate) as server:
        url = f"https://127.0.0.1:{server.port}/v1"
        code, rows, stderr, _, _ = eval_child(tmp_path, url, 6, "--max-retries", "3",
                                              "--concurrency", "1")
        connections = server.connections
    assert connections == 1  # not retried, and no other row tried again
    assert code == 3, stderr
    errors = [str(row["error"]) for row in rows]
    assert all("certificate verify failed for 127.0.0.1" in error for error in errors)
    assert all("SSL_CERT_FILE" in error for error in errors)


@pytest.mark.parametrize("variable", ["SSL_CERT_FILE", "SSL_CERT_DIR"])
def test_ssl_cert_file_and_dir_are_trusted(tmp_path: Path, variable: str) -> None:
    certificate = make_certificate(tmp_path / "tls")
    trusted = certificate.cert if variable == "SSL_CERT_FILE" else certificate.directory
    with TlsRuntime(certificate) as server:
        url = f"https://127.0.0.1:{server.port}/v1"
        _, rows, stderr, _, _ = eval_child(tmp_path, url, 1, "--max-retries", "0",
                                           **{variable: str(trusted)})
    # The handshake passed: the stub's answer is read, and it is no chat completion.
    (row,) = rows
    assert "certificate" not in str(row["error"]), stderr
    assert "no submit_verdict call" in str(row["error"])
