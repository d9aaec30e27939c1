"""Runtime URLs: a malformed one is a usage error naming where it came from, never a crash."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from runtime_harness import SENTINEL_TOKEN, Cli
from stub_runtime import StubRuntime

from introspection_cli.errors import ConfigError
from introspection_cli.runtime.client import HttpRuntimeClient
from introspection_cli.runtime.credentials import Credentials, normalize_url

MALFORMED = [
    ("http://[::1", "not a valid URL (Invalid IPv6 URL)"),  # urlsplit: ValueError
    ("http://[::1]x", "after the ]"),  # httpx: InvalidURL
    # Python versions differ on who notices these (urlsplit or our own check).
    ("http://[1.2.3.4]", "IPv"),
    ("http://[::g]", "IPv6 address"),
    ("https://runtime.example:99999", "invalid port"),
    ("https://exa mple.com", "space or control character"),  # was retried, then exit 3
    ("https://exa\tmple.com", "space or control character"),  # urlsplit drops the tab
    ("https://runtime.example\u2028/", "space or control character"),
    ("https://a..b.example", "invalid host name"),
    ("https://-runtime.example", "invalid host name"),
    ("https://ex%41mple.com", "invalid host name"),
    ("http://127.0.0.999", "invalid IPv4 address"),
    ("http://127.0.0.1:0", "invalid port (0)"),  # was accepted, then "unreachable" (exit 3)
    ("https://runtime.example:0/", "invalid port (0)"),
]


@pytest.mark.parametrize(("url", "message"), MALFORMED)
def test_login_refuses_a_malformed_url_naming_the_flag(
    cli: Cli, url: str, message: str
) -> None:
    result = cli("login", "--url", url, "--token-stdin", input=SENTINEL_TOKEN + "\n")

    assert result.exit_code == 2
    assert message in result.stderr
    assert "(from --url)" in result.stderr
    assert "like --url https://runtime.example" in result.stderr
    assert "internal error" not in result.stderr


@pytest.mark.parametrize(("url", "message"), MALFORMED)
def test_an_env_url_that_is_malformed_names_the_variable(
    cli: Cli, url: str, message: str
) -> None:
    Path("ids.txt").write_text("conv_01\n")

    result = cli("conversations", "get", "--ids-file", "ids.txt",
                 env={"INTROSPECTION_API_URL": url, "INTROSPECTION_TOKEN": SENTINEL_TOKEN})

    assert result.exit_code == 2
    assert message in result.stderr
    assert "(from INTROSPECTION_API_URL)" in result.stderr
    assert "internal error" not in result.stderr


def test_login_without_url_names_the_env_variable(cli: Cli) -> None:
    result = cli("login", "--token-stdin", input=SENTINEL_TOKEN + "\n",
                 env={"INTROSPECTION_API_URL": "http://[::1]x"})

    assert result.exit_code == 2
    assert "(from INTROSPECTION_API_URL)" in result.stderr


def test_a_malformed_stored_url_says_to_log_in_again(
    logged_in: Cli, runtime: StubRuntime, config_dir: Path
) -> None:
    stored = config_dir / "credentials.json"
    stored.write_text(json.dumps({"url": "https://exa mple.com", "token": SENTINEL_TOKEN}))
    Path("ids.txt").write_text("conv_01\n")

    result = logged_in("conversations", "get", "--ids-file", "ids.txt")

    assert result.exit_code == 2
    assert f"(from the stored login {stored})" in result.stderr
    assert "introspection login --url" in result.stderr
    assert runtime.requests == []


def test_a_password_in_a_malformed_url_is_never_shown(cli: Cli) -> None:
    result = cli("login", "--url", "https://user:hunter2@[::1", "--token-stdin",
                 input=SENTINEL_TOKEN + "\n")

    assert result.exit_code == 2
    assert "hunter2" not in result.stderr


@pytest.mark.parametrize(("url", "normalized"), [
    ("https://runtime.example/", "https://runtime.example"),
    ("https://runtime.example./api/", "https://runtime.example./api"),
    ("https://b\u00fccher.example", "https://b\u00fccher.example"),
    ("http://[::1]:8080/", "http://[::1]:8080"),
    ("http://127.0.0.1:8080", "http://127.0.0.1:8080"),
    ("https://runtime_1.internal:443", "https://runtime_1.internal:443"),
    ("  https://runtime.example  ", "https://runtime.example"),
    # Scheme and host compare case-insensitively; the path and an IPv6 zone id do not.
    ("HTTPS://Runtime.Example/Base/", "https://runtime.example/Base"),
    ("https://[FE80::1%25Eth0]:8443", "https://[fe80::1%25Eth0]:8443"),
])
def test_valid_urls_are_kept(url: str, normalized: str) -> None:
    assert normalize_url(url) == normalized


def test_the_http_client_turns_an_unusable_url_into_a_config_error() -> None:
    """Even a URL that skipped normalize_url cannot end in an internal error."""
    with pytest.raises(ConfigError, match="cannot be used"):
        HttpRuntimeClient(Credentials("http://[::1]x", SENTINEL_TOKEN))


def test_an_env_url_differing_only_in_case_is_the_stored_login(
    cli: Cli, runtime: StubRuntime
) -> None:
    cli.login(runtime.url.replace("http://", "HTTP://"))
    Path("ids.txt").write_text("conv_01\n")

    same = cli("conversations", "get", "--ids-file", "ids.txt",
               env={"INTROSPECTION_API_URL": runtime.url})
    # localhost is another name, not the same URL: still refused.
    other = cli("conversations", "get", "--ids-file", "ids.txt",
                env={"INTROSPECTION_API_URL": runtime.url.replace("127.0.0.1", "localhost")})

    assert same.exit_code == 0, same.stderr
    assert other.exit_code == 2
    assert "but you are logged in to" in other.stderr
