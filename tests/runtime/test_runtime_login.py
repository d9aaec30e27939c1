"""`introspection login` / `logout` and which credentials a command uses."""

from __future__ import annotations

import fcntl
import json
import os
import select
import stat
import subprocess
import sys
import termios
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from runtime_harness import SENTINEL_TOKEN, Cli
from stub_runtime import StubRuntime


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_login_verifies_the_token_and_stores_it_privately(
    cli: Cli, runtime: StubRuntime, config_dir: Path
) -> None:
    result = cli("login", "--url", runtime.url + "/", "--token-stdin",
                 input=f"  {SENTINEL_TOKEN}\n")

    assert result.exit_code == 0, result.stderr
    assert "ada@example.com (Acme)" in result.out
    assert [(r.method, r.path, r.authorization) for r in runtime.requests] == [
        ("GET", "/v1/whoami", f"Bearer {SENTINEL_TOKEN}")
    ]
    stored = config_dir / "credentials.json"
    assert json.loads(stored.read_text()) == {"url": runtime.url, "token": SENTINEL_TOKEN}
    assert mode(stored) == 0o600
    assert mode(config_dir) == 0o700


# Without a terminal getpass warns that it cannot turn echo off; with one it does.
@pytest.mark.filterwarnings("ignore::getpass.GetPassWarning")
def test_login_reads_the_token_from_the_prompt(
    cli: Cli, runtime: StubRuntime, config_dir: Path
) -> None:
    result = cli("login", "--url", runtime.url, input=SENTINEL_TOKEN + "\n")

    assert result.exit_code == 0, result.stderr
    assert (config_dir / "credentials.json").exists()


def test_a_rejected_token_is_not_stored(cli: Cli, runtime: StubRuntime, config_dir: Path) -> None:
    result = cli("login", "--url", runtime.url, "--token-stdin", input="wrong-token\n")

    assert result.exit_code == 2
    assert f"the runtime at {runtime.url} rejected the token" in result.stderr
    # Logging in again is what just failed: say what to check instead.
    assert "login` again" not in result.stderr and "log in again" not in result.stderr
    assert "Check the token" in result.stderr and "nothing was stored" in result.stderr
    assert f"checked against {runtime.url} (from --url)" in result.stderr
    assert not (config_dir / "credentials.json").exists()


def test_a_rejected_token_names_where_the_url_came_from(
    cli: Cli, runtime: StubRuntime, config_dir: Path
) -> None:
    from_env = cli("login", "--token-stdin", input="wrong-token\n",
                   env={"INTROSPECTION_API_URL": runtime.url})
    assert from_env.exit_code == 2
    assert f"checked against {runtime.url} (from INTROSPECTION_API_URL)" in from_env.stderr
    cli.login(runtime.url)
    from_stored = cli("login", "--token-stdin", input="wrong-token\n")
    assert from_stored.exit_code == 2
    assert f"checked against {runtime.url} (the URL of your stored login" in from_stored.stderr
    stored = json.loads((config_dir / "credentials.json").read_text())
    assert stored["token"] == SENTINEL_TOKEN  # the good login is kept


def test_login_needs_a_url(cli: Cli, runtime: StubRuntime) -> None:
    result = cli("login", "--token-stdin", input=SENTINEL_TOKEN + "\n")

    assert result.exit_code == 2
    assert "--url" in result.stderr
    assert runtime.requests == []


def test_login_reuses_the_stored_url(cli: Cli, runtime: StubRuntime) -> None:
    cli.login(runtime.url)

    result = cli("login", "--token-stdin", input=SENTINEL_TOKEN + "\n")

    assert result.exit_code == 0, result.stderr
    assert runtime.url in result.out


def test_login_refuses_plain_http_to_a_remote_host(cli: Cli, config_dir: Path) -> None:
    result = cli("login", "--url", "http://runtime.example", "--token-stdin",
                 input=SENTINEL_TOKEN + "\n")

    assert result.exit_code == 2
    assert "https://" in result.stderr
    assert not config_dir.exists()


def test_login_refuses_a_non_http_url(cli: Cli) -> None:
    result = cli("login", "--url", "ftp://runtime.example", "--token-stdin", input="x\n")

    assert result.exit_code == 2
    assert "http(s)" in result.stderr


def test_login_refuses_an_empty_token(cli: Cli, runtime: StubRuntime) -> None:
    result = cli("login", "--url", runtime.url, "--token-stdin", input="\n")

    assert result.exit_code == 2
    assert "empty" in result.stderr
    assert runtime.requests == []


def test_login_to_an_unreachable_runtime_stores_nothing(cli: Cli, config_dir: Path) -> None:
    result = cli("login", "--url", "http://127.0.0.1:9", "--token-stdin",
                 input=SENTINEL_TOKEN + "\n")

    assert result.exit_code == 3
    assert "http://127.0.0.1:9" in result.stderr
    assert not (config_dir / "credentials.json").exists()


def test_logout_removes_the_stored_login(
    cli: Cli, runtime: StubRuntime, config_dir: Path
) -> None:
    cli.login(runtime.url)

    first = cli("logout")
    second = cli("logout")

    assert first.exit_code == 0
    assert "Logged out" in first.out
    assert not (config_dir / "credentials.json").exists()
    assert second.exit_code == 0
    assert "Not logged in" in second.out


def test_commands_need_a_login(cli: Cli, runtime: StubRuntime) -> None:
    Path("ids.txt").write_text("conv_01\n")

    result = cli("conversations", "get", "--ids-file", "ids.txt")

    assert result.exit_code == 2
    assert "introspection login" in result.stderr
    assert runtime.requests == []


def test_environment_variables_work_without_a_stored_login(
    cli: Cli, runtime: StubRuntime
) -> None:
    Path("ids.txt").write_text("conv_01\n")

    result = cli("conversations", "get", "--ids-file", "ids.txt",
                 env={"INTROSPECTION_API_URL": runtime.url,
                      "INTROSPECTION_TOKEN": SENTINEL_TOKEN})

    assert result.exit_code == 0, result.stderr
    assert runtime.requests[0].authorization == f"Bearer {SENTINEL_TOKEN}"


def test_env_token_overrides_a_stored_token(cli: Cli, runtime: StubRuntime) -> None:
    cli.login(runtime.url)
    Path("ids.txt").write_text("conv_01\n")

    result = cli("conversations", "get", "--ids-file", "ids.txt",
                 env={"INTROSPECTION_TOKEN": "other-token"})

    assert result.exit_code == 2  # the stub only knows the sentinel token
    assert runtime.requests[-1].authorization == "Bearer other-token"


def test_a_stored_token_is_never_sent_to_another_url(cli: Cli, runtime: StubRuntime) -> None:
    cli.login(runtime.url)
    runtime.requests.clear()
    Path("ids.txt").write_text("conv_01\n")

    result = cli("conversations", "get", "--ids-file", "ids.txt",
                 env={"INTROSPECTION_API_URL": "http://localhost:9"})

    assert result.exit_code == 2
    assert "INTROSPECTION_TOKEN" in result.stderr
    assert runtime.requests == []


def test_a_damaged_stored_login_says_to_log_in_again(
    cli: Cli, runtime: StubRuntime, config_dir: Path
) -> None:
    config_dir.mkdir(parents=True)
    (config_dir / "credentials.json").write_text('{"url": "' + runtime.url + '", "tok')
    (config_dir / "credentials.json").chmod(0o600)
    Path("ids.txt").write_text("conv_01\n")

    result = cli("conversations", "get", "--ids-file", "ids.txt")

    assert result.exit_code == 2
    assert "damaged" in result.stderr
    assert "introspection login" in result.stderr


def test_the_prompt_does_not_echo_the_token_on_a_terminal(
    runtime: StubRuntime, config_dir: Path, tmp_path: Path
) -> None:
    """A real pseudo-terminal: whatever the terminal shows must not include the token."""
    primary, secondary = os.openpty()
    env = {**os.environ, "INTROSPECTION_CONFIG_DIR": str(config_dir)}
    env.pop("INTROSPECTION_TOKEN", None)
    process = subprocess.Popen(
        [sys.executable, "-m", "introspection_cli", "login", "--url", runtime.url],
        stdin=secondary, stdout=secondary, stderr=secondary, env=env, cwd=tmp_path,
        start_new_session=True,
        # make the pty the controlling terminal, so getpass finds /dev/tty
        preexec_fn=lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0),
    )
    os.close(secondary)
    try:
        shown = _read_until(primary, b"Token for")
        # getpass turns echo off with TCSAFLUSH, which drops input typed before that moment.
        _wait_until(lambda: not termios.tcgetattr(primary)[3] & termios.ECHO)
        os.write(primary, SENTINEL_TOKEN.encode() + b"\n")
        shown += _read_until(primary, b"Credentials stored")
        assert process.wait(timeout=30) == 0, shown
    finally:
        process.kill()
        process.wait()
        os.close(primary)

    assert b"Logged in to" in shown
    assert SENTINEL_TOKEN.encode() not in shown
    assert json.loads((config_dir / "credentials.json").read_text())["token"] == SENTINEL_TOKEN


def _read_until(fd: int, marker: bytes, timeout: float = 30) -> bytes:
    """Read a pty until ``marker`` shows up, the other side closes, or ``timeout`` passes."""
    data = b""
    deadline = time.monotonic() + timeout
    while marker not in data and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.1)
        if not ready:
            continue
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # the other side closed
            break
        if not chunk:
            break
        data += chunk
    return data


def _wait_until(condition: Callable[[], bool], timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting for the terminal"
        time.sleep(0.01)


@pytest.mark.parametrize("token", ["two words", "line\nbreak", "tök"])
def test_an_env_token_that_cannot_be_a_header_exits_2(
    cli: Cli, runtime: StubRuntime, token: str
) -> None:
    Path("ids.txt").write_text("conv_01\n")

    result = cli("conversations", "get", "--ids-file", "ids.txt",
                 env={"INTROSPECTION_API_URL": runtime.url, "INTROSPECTION_TOKEN": token})

    assert result.exit_code == 2
    assert "INTROSPECTION_TOKEN" in result.stderr
    assert token not in result.stderr
    assert runtime.requests == []


@pytest.mark.parametrize(("url", "message"), [
    ("http://localhost:99999", "invalid port"),
    ("https://user:secret@runtime.example", "user info"),
    ("ftp://user:secret@runtime.example", "user info"),
    ("https://runtime.example/?x=1", "query"),
    ("runtime.example", "http(s)"),
])
def test_malformed_urls_exit_2(cli: Cli, url: str, message: str) -> None:
    result = cli("login", "--url", url, "--token-stdin", input=SENTINEL_TOKEN + "\n")

    assert result.exit_code == 2
    assert message in result.stderr
    assert "secret" not in result.stderr
