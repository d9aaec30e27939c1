"""Retry settings have sane ranges, and retries are spaced even when the runtime says 0."""

from __future__ import annotations

from pathlib import Path

import pytest
from runtime_harness import SENTINEL_TOKEN, Cli
from stub_runtime import Reply, StubRuntime

from introspection_cli.runtime.client import HttpRuntimeClient
from introspection_cli.runtime.credentials import Credentials
from introspection_cli.runtime.retries import MIN_RETRY_WAIT, RetryPolicy


def get(cli: Cli, env: dict[str, str | None]) -> tuple[int, str]:
    Path("ids.txt").write_text("conv_01\n")
    result = cli("conversations", "get", "--ids-file", "ids.txt", "--judge-fixtures",
                 "--format", "json", env=env)
    return result.exit_code, result.stderr


@pytest.mark.parametrize(("name", "value"), [
    ("INTROSPECTION_HTTP_ATTEMPTS", "1025"),
    ("INTROSPECTION_HTTP_ATTEMPTS", "21"),
    ("INTROSPECTION_HTTP_ATTEMPTS", "2.5"),
    ("INTROSPECTION_HTTP_ATTEMPTS", "1e309"),
    ("INTROSPECTION_HTTP_TIMEOUT", "1e308"),
    ("INTROSPECTION_HTTP_TIMEOUT", "3601"),
    ("INTROSPECTION_HTTP_MAX_WAIT", "1e9"),
    ("INTROSPECTION_HTTP_MAX_WAIT", "-0.5"),
])
def test_a_setting_out_of_range_is_exit_2_before_any_request(
    logged_in: Cli, runtime: StubRuntime, name: str, value: str
) -> None:
    code, stderr = get(logged_in, {name: value})

    assert code == 2
    assert f"{name}={value!r} is not a" in stderr
    assert "fix or unset it" in stderr
    assert "internal error" not in stderr
    assert runtime.requests == []


def test_the_most_attempts_allowed_is_accepted(logged_in: Cli, runtime: StubRuntime) -> None:
    code, stderr = get(logged_in, {"INTROSPECTION_HTTP_ATTEMPTS": "20"})

    assert code == 0, stderr


def test_retries_are_spaced_even_when_the_runtime_asks_for_no_wait(runtime: StubRuntime) -> None:
    runtime.script(*[Reply(503, b"", {"Retry-After": "0"})] * 3)
    waits: list[float] = []
    client = HttpRuntimeClient(Credentials(runtime.url, SENTINEL_TOKEN),
                               RetryPolicy(attempts=4, max_wait=0.0, timeout=5.0),
                               sleep=waits.append)

    batch = client.export_judge_fixtures(["conv_01"])
    client.close()

    assert len(batch.lines) == 1
    assert waits == [MIN_RETRY_WAIT] * 3


def test_the_backoff_never_overflows() -> None:
    policy = RetryPolicy(attempts=20, max_wait=30.0)

    assert [policy.backoff_wait(n) for n in (0, 1, 10, 1024, 10**6)] == [0.5, 1.0, 30.0, 30.0,
                                                                         30.0]
