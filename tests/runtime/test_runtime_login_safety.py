"""The login is safe to store and to use: the token is never printed, nor a planted login used.

* ``login`` prints the whoami identity scrubbed of the token and escaped;
  a URL in an error never shows its query or fragment values.
* With ``INTROSPECTION_API_URL`` and ``INTROSPECTION_TOKEN`` both set the
  stored login is not read at all.
* ``login`` never changes the mode of a directory it did not create, and
  refuses one another user owns or others may write; a stored login another
  user owns, or others may read, is refused.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from runtime_harness import SENTINEL_TOKEN, Cli
from stub_runtime import StubRuntime

OTHER_UID = 4242


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def export(cli: Cli, env: dict[str, str | None] | None = None) -> tuple[int, bytes, str]:
    Path("ids.txt").write_text("conv_01\n")
    result = cli("conversations", "get", "--ids-file", "ids.txt", "--judge-fixtures",
                 "--format", "json", env=env)
    return result.exit_code, result.stdout, result.stderr


def test_an_identity_equal_to_the_token_is_not_printed(cli: Cli, runtime: StubRuntime) -> None:
    runtime.whoami = {"user": {"email": SENTINEL_TOKEN}, "org": {"name": f"org {SENTINEL_TOKEN}"}}

    result = cli.login(runtime.url)

    assert result.out == f"Logged in to {runtime.url} as [token] (org [token]).\n"
    # The cli fixture's teardown asserts the token is in no output and no file.


def test_escape_sequences_in_the_identity_are_shown_escaped(cli: Cli,
                                                           runtime: StubRuntime) -> None:
    runtime.whoami = {"user": {"email": "ada\x1b[2J\rLogged in to https://evil as root"},
                      "org": {"name": "Acme\nintrospection: error: forged"}}

    result = cli.login(runtime.url)

    assert "\x1b" not in result.out and "\r" not in result.out
    assert result.out.count("\n") == 1
    assert "ada\\x1b[2J\\rLogged in to https://evil as root (Acme\\nintrospection" in result.out


@pytest.mark.parametrize("url", [
    f"https://rt.example/?token={SENTINEL_TOKEN}",
    f"https://rt.example/?a=1&{SENTINEL_TOKEN}",
    f"https://rt.example/#{SENTINEL_TOKEN}",
    f"https://rt.example/?x=1#access_token={SENTINEL_TOKEN}",
    f"https://rt.example:99999/?token={SENTINEL_TOKEN}",
])
def test_a_url_error_masks_query_and_fragment_values(cli: Cli, url: str) -> None:
    flag = cli("login", "--url", url, "--token-stdin", input=SENTINEL_TOKEN + "\n")
    env = export(cli, {"INTROSPECTION_API_URL": url, "INTROSPECTION_TOKEN": SENTINEL_TOKEN})

    assert flag.exit_code == 2 and env[0] == 2
    assert "https://rt.example" in flag.stderr
    assert "***" in flag.stderr and "***" in env[2]


def test_both_overrides_set_never_read_the_stored_login(cli: Cli, runtime: StubRuntime,
                                                        config_dir: Path) -> None:
    config_dir.mkdir(parents=True)
    stored = config_dir / "credentials.json"
    stored.write_text('{"url": "damaged')
    stored.chmod(0o644)  # damaged and readable by others: either would refuse it if read

    code, stdout, stderr = export(cli, {"INTROSPECTION_API_URL": runtime.url,
                                        "INTROSPECTION_TOKEN": SENTINEL_TOKEN})

    assert code == 0, stderr
    assert json.loads(stdout)["source"]["conversation_id"] == "conv_01"


def test_login_keeps_the_mode_of_a_directory_it_did_not_create(
    cli: Cli, runtime: StubRuntime, config_dir: Path
) -> None:
    config_dir.mkdir(parents=True)
    config_dir.chmod(0o755)

    cli.login(runtime.url)

    assert mode(config_dir) == 0o755
    assert mode(config_dir / "credentials.json") == 0o600


def test_login_makes_the_directory_it_creates_0700(cli: Cli, runtime: StubRuntime,
                                                   config_dir: Path) -> None:
    old = os.umask(0o002)
    try:
        cli.login(runtime.url)
    finally:
        os.umask(old)

    assert mode(config_dir) == 0o700


@pytest.mark.parametrize("bits", [0o777, 0o775, 0o757, 0o1777])
def test_login_refuses_a_config_dir_others_can_write(cli: Cli, runtime: StubRuntime,
                                                      tmp_path: Path, bits: int) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(bits)

    result = cli("login", "--url", runtime.url, "--token-stdin", input=SENTINEL_TOKEN + "\n",
                 env={"INTROSPECTION_CONFIG_DIR": str(shared)})

    assert result.exit_code == 2
    assert f"the config directory {shared} can be written by other users" in result.stderr
    assert "INTROSPECTION_CONFIG_DIR" in result.stderr
    assert stat.S_IMODE(shared.stat().st_mode) == bits  # untouched
    assert not (shared / "credentials.json").exists()
    assert runtime.requests == []  # refused before the token is sent anywhere


def test_login_refuses_a_config_dir_another_user_owns(cli: Cli, runtime: StubRuntime,
                                                       tmp_path: Path) -> None:
    theirs = tmp_path / "theirs"
    theirs.mkdir(mode=0o700)
    os.chown(theirs, OTHER_UID, OTHER_UID)  # the tests run as root

    result = cli("login", "--url", runtime.url, "--token-stdin", input=SENTINEL_TOKEN + "\n",
                 env={"INTROSPECTION_CONFIG_DIR": str(theirs)})

    assert result.exit_code == 2
    assert f"the config directory {theirs} belongs to another user (uid {OTHER_UID})" \
        in result.stderr
    assert not (theirs / "credentials.json").exists()
    assert runtime.requests == []


def test_a_stored_login_another_user_owns_is_refused(logged_in: Cli, runtime: StubRuntime,
                                                     config_dir: Path) -> None:
    os.chown(config_dir / "credentials.json", OTHER_UID, OTHER_UID)

    code, _, stderr = export(logged_in)

    assert code == 2
    assert f"belongs to another user (uid {OTHER_UID}), so it was not used" in stderr
    assert runtime.requests == []


@pytest.mark.parametrize("bits", [0o644, 0o640, 0o604, 0o620])
def test_a_stored_login_others_can_read_is_refused(logged_in: Cli, runtime: StubRuntime,
                                                   config_dir: Path, bits: int) -> None:
    stored = config_dir / "credentials.json"
    stored.chmod(bits)

    code, _, stderr = export(logged_in)

    assert code == 2
    assert f"can be read or written by other users (mode {bits:04o})" in stderr
    assert f"chmod 600 {stored}" in stderr
    assert runtime.requests == []


def test_a_fifo_in_place_of_the_stored_login_does_not_hang(cli: Cli, config_dir: Path) -> None:
    config_dir.mkdir(parents=True)
    os.mkfifo(config_dir / "credentials.json", 0o600)

    code, _, stderr = export(cli)

    assert code == 2
    assert "FIFO" in stderr
