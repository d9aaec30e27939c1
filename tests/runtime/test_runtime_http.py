"""HTTP faults: retries, Retry-After, 401, unreachable, hangs, malformed answers, leaks."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from runtime_harness import SENTINEL_TOKEN, Cli
from stub_runtime import Reply, StubRuntime, json_reply, make_fixture

from introspection_cli.errors import ConfigError, IntrospectionError, ServiceError
from introspection_cli.runtime.client import HttpRuntimeClient, RetryPolicy, parse_retry_after
from introspection_cli.runtime.credentials import Credentials
from tests.support.http_stub import unused_port


def get(cli: Cli, *ids: str, env: dict[str, str | None] | None = None) -> Any:
    Path("ids.txt").write_text("\n".join(ids or ("conv_01",)) + "\n")
    return cli("conversations", "get", "--ids-file", "ids.txt", "--judge-fixtures",
               "--format", "json", env=env)


def test_429_with_retry_after_then_success(logged_in: Cli, runtime: StubRuntime) -> None:
    runtime.script(json_reply(429, {"error": "slow down"}, Retry_After="0"))

    result = get(logged_in)

    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout) == make_fixture("conv_01", runtime.url)
    assert runtime.export_paths() == ["/v1/judge-fixtures/export"] * 2


def test_503_until_attempts_run_out_exits_3(logged_in: Cli, runtime: StubRuntime) -> None:
    runtime.script(*[Reply(503, b"maintenance", {"Retry-After": "0"})] * 3)

    result = get(logged_in)

    assert result.exit_code == 3
    assert f"the runtime at {runtime.url} answered HTTP 503 (3 attempt(s))" in result.stderr
    assert len(runtime.export_paths()) == 3
    assert result.stdout == b""


def test_a_retry_after_beyond_the_cap_is_not_waited_for(
    logged_in: Cli, runtime: StubRuntime
) -> None:
    runtime.script(Reply(429, b"", {"Retry-After": "3600"}))

    result = get(logged_in)

    assert result.exit_code == 3
    assert "asked to retry after 3600s" in result.stderr
    assert len(runtime.export_paths()) == 1


def test_401_exits_2_and_says_to_log_in_again(logged_in: Cli, runtime: StubRuntime) -> None:
    runtime.script(json_reply(401, {"error": {"message": "token revoked"}}))

    result = get(logged_in)

    assert result.exit_code == 2
    assert "rejected your token" in result.stderr
    assert "token revoked" in result.stderr
    assert "introspection login" in result.stderr
    assert len(runtime.requests) == 1  # not retried


def test_other_4xx_exits_2_with_the_runtime_message(logged_in: Cli, runtime: StubRuntime) -> None:
    runtime.script(json_reply(403, {"message": "export not allowed for this org"}))

    result = get(logged_in)

    assert result.exit_code == 2
    assert "HTTP 403: export not allowed for this org" in result.stderr


def test_an_unreachable_runtime_exits_3_naming_the_url(cli: Cli) -> None:
    url = f"http://127.0.0.1:{unused_port()}"

    result = get(cli, env={"INTROSPECTION_API_URL": url, "INTROSPECTION_TOKEN": SENTINEL_TOKEN})

    assert result.exit_code == 3
    assert f"the runtime at {url} is unreachable" in result.stderr


def test_a_hanging_runtime_times_out_and_exits_3(logged_in: Cli, runtime: StubRuntime) -> None:
    runtime.script(Reply(hang=True), Reply(hang=True))

    result = get(logged_in, env={"INTROSPECTION_HTTP_TIMEOUT": "0.2",
                                 "INTROSPECTION_HTTP_ATTEMPTS": "2"})

    assert result.exit_code == 3
    assert "did not answer within 0.2s (2 attempt(s))" in result.stderr


@pytest.mark.parametrize(("reply", "detail"), [
    (Reply(200, b"<html>maintenance</html>", {"Content-Type": "text/html"}), "not a JSON object"),
    (Reply(200, b'{"fixtures": "nope"}'), '"fixtures": [objects...]'),
    (Reply(200, b'{"fixtures": [], "fixtures": []}'), 'the key "fixtures" appears twice'),
    (Reply(200, b'{"fixtures": [], "errors": [], "errors": []}'), 'the key "errors" appears twice'),
    (Reply(200, b'{"fixtures": [1], "errors": []}'), '"fixtures": [objects...]'),
    (Reply(200, b"\xff{}"), "not a JSON object"),
    # Read without recursion: any depth is read, and this is a list of lists, not objects.
    (Reply(200, b'{"fixtures": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"),
     '"fixtures": [objects...]'),
])
def test_a_200_of_the_wrong_shape_exits_3(
    logged_in: Cli, runtime: StubRuntime, reply: Reply, detail: str
) -> None:
    runtime.script(reply)

    result = get(logged_in)

    assert result.exit_code == 3
    assert "unexpected response" in result.stderr
    assert detail in result.stderr


def test_whoami_of_the_wrong_shape_fails_login(cli: Cli, runtime: StubRuntime) -> None:
    runtime.script(json_reply(200, {"hello": "world"}))

    result = cli("login", "--url", runtime.url, "--token-stdin", input=SENTINEL_TOKEN + "\n")

    assert result.exit_code == 3
    assert "/v1/whoami" in result.stderr


def test_a_runtime_echoing_the_token_is_redacted(logged_in: Cli, runtime: StubRuntime) -> None:
    runtime.script(json_reply(400, {"error": {"message": f"bad header Bearer {SENTINEL_TOKEN}"}}),
                   json_reply(200, {"fixtures": [], "errors": [
                       {"conversation_id": "conv_01", "code": "x", "message": SENTINEL_TOKEN}]}))

    first = get(logged_in)
    second = get(logged_in)

    assert first.exit_code == 2
    assert "Bearer [token]" in first.stderr
    assert second.exit_code == 1
    # The cli fixture's teardown asserts the token is in no output and no file.


@pytest.mark.parametrize("script", [
    [Reply(503, b"")] * 2,
    [json_reply(401, {})],
    [Reply(200, b"not json")],
    [Reply(hang=True)] * 2,
])
def test_no_exception_in_the_chain_carries_the_token(
    runtime: StubRuntime, script: list[Reply]
) -> None:
    runtime.script(*script)
    client = HttpRuntimeClient(Credentials(runtime.url, SENTINEL_TOKEN),
                               RetryPolicy(attempts=2, max_wait=0, timeout=0.2))

    with pytest.raises(IntrospectionError) as caught:
        client.export_judge_fixtures(["conv_01"])
    client.close()

    assert isinstance(caught.value, ServiceError | ConfigError)
    exc: BaseException | None = caught.value
    while exc is not None:
        for text in (str(exc), repr(exc), repr(vars(exc)) if hasattr(exc, "__dict__") else ""):
            assert SENTINEL_TOKEN not in text
        exc = exc.__cause__ or exc.__context__


def test_credentials_repr_hides_the_token() -> None:
    assert SENTINEL_TOKEN not in repr(Credentials("https://r.example", SENTINEL_TOKEN))


def test_retry_after_accepts_seconds_and_http_dates() -> None:
    now = datetime(2026, 11, 29, 12, 0, 0, tzinfo=UTC)

    assert parse_retry_after("7", now=now) == 7.0
    assert parse_retry_after("Sun, 29 Nov 2026 12:00:30 GMT", now=now) == 30.0
    assert parse_retry_after("Sun, 29 Nov 2026 11:00:00 GMT", now=now) == 0.0
    assert parse_retry_after("soon", now=now) is None
    assert parse_retry_after(None, now=now) is None


@pytest.mark.parametrize("value", ["0", "-1", "abc", "inf", "nan"])
def test_bad_retry_settings_exit_2(logged_in: Cli, runtime: StubRuntime, value: str) -> None:
    result = get(logged_in, env={"INTROSPECTION_HTTP_ATTEMPTS": value})

    assert result.exit_code == 2
    assert "INTROSPECTION_HTTP_ATTEMPTS" in result.stderr
    assert runtime.requests == []


def test_a_500_is_not_retried_and_exits_3(logged_in: Cli, runtime: StubRuntime) -> None:
    runtime.script(json_reply(500, {"error": {"message": "database down"}}))

    result = get(logged_in)

    assert result.exit_code == 3
    assert "HTTP 500: database down" in result.stderr
    assert len(runtime.requests) == 1


def test_a_redirect_is_not_followed(logged_in: Cli, runtime: StubRuntime) -> None:
    runtime.script(Reply(302, b"", {"Location": "http://127.0.0.1:9/steal"}))

    result = get(logged_in)

    assert result.exit_code == 3
    assert "HTTP 302" in result.stderr
    assert len(runtime.requests) == 1


def test_the_cli_app_imports_no_http_client() -> None:
    """`introspection check` loads the root app: it must not pay for (or expose) httpx."""
    import subprocess
    import sys

    code = ("import sys, introspection_cli.cli.app; "
            "print(sorted(m for m in ('httpx', 'httpx2', 'platformdirs') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)

    assert out.stdout.strip() == "[]"
