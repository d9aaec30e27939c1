"""Fixtures: a stub runtime on 127.0.0.1, and the real CLI entry point run in-process.

Every test runs with a sentinel token; the ``cli`` fixture checks on teardown
that it never appeared in any stdout or stderr, nor in any file under the
test's directory other than the stored login.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from runtime_harness import SENTINEL_TOKEN, Cli, assert_token_absent
from stub_runtime import StubRuntime


@pytest.fixture
def config_dir(tmp_path: Path) -> Path:
    return tmp_path / "config" / "introspection"


@pytest.fixture
def runtime() -> Iterator[StubRuntime]:
    stub = StubRuntime(SENTINEL_TOKEN).start()
    yield stub
    stub.stop()


@pytest.fixture
def cli(tmp_path: Path, config_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Cli]:
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    env: dict[str, str | None] = {
        "INTROSPECTION_CONFIG_DIR": str(config_dir),
        "INTROSPECTION_API_URL": None,
        "INTROSPECTION_TOKEN": None,
        "INTROSPECTION_HTTP_ATTEMPTS": "3",
        "INTROSPECTION_HTTP_MAX_WAIT": "0.05",
        "INTROSPECTION_HTTP_TIMEOUT": "5",
        "INTROSPECTION_DEBUG": None,
    }
    runner = Cli(env, work)
    yield runner
    assert_token_absent(runner.results, tmp_path)


@pytest.fixture
def logged_in(cli: Cli, runtime: StubRuntime) -> Cli:
    cli.login(runtime.url)
    runtime.requests.clear()
    return cli
