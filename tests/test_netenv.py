"""netenv: which proxy a URL goes through, and which CA certificates are trusted."""

from __future__ import annotations

import ssl
from pathlib import Path

import pytest

from introspection_cli.errors import ConfigError
from introspection_cli.netenv import is_loopback, proxy_for, ssl_context

PROXY = "http://proxy.corp:3128"


@pytest.mark.parametrize(("url", "environ", "expected"), [
    ("https://rt.example", {}, None),
    ("https://rt.example", {"HTTPS_PROXY": PROXY}, ("HTTPS_PROXY", PROXY)),
    ("https://rt.example", {"https_proxy": PROXY, "HTTPS_PROXY": "http://other:1"},
     ("https_proxy", PROXY)),
    ("https://rt.example", {"HTTP_PROXY": PROXY}, None),  # the http proxy is for http URLs
    ("http://rt.example", {"HTTP_PROXY": PROXY}, ("HTTP_PROXY", PROXY)),
    ("http://rt.example", {"HTTP_PROXY": PROXY, "REQUEST_METHOD": "GET"}, None),  # httpoxy
    ("http://rt.example", {"http_proxy": PROXY, "REQUEST_METHOD": "GET"},
     ("http_proxy", PROXY)),
    ("https://rt.example", {"ALL_PROXY": PROXY}, ("ALL_PROXY", PROXY)),
    ("https://rt.example", {"HTTPS_PROXY": "proxy.corp:3128"}, ("HTTPS_PROXY", PROXY)),
    ("https://rt.example", {"HTTPS_PROXY": "  "}, None),
    # Loopback is always direct, whatever the variables say.
    ("http://127.0.0.1:8080", {"HTTP_PROXY": PROXY, "ALL_PROXY": PROXY}, None),
    ("http://127.3.4.5:8080", {"HTTP_PROXY": PROXY}, None),
    ("http://localhost:8080", {"HTTP_PROXY": PROXY}, None),
    ("http://api.localhost:8080", {"HTTP_PROXY": PROXY}, None),
    ("http://[::1]:8080", {"HTTP_PROXY": PROXY}, None),
    ("https://LOCALHOST", {"HTTPS_PROXY": PROXY}, None),
])
def test_the_proxy_for_a_url(url: str, environ: dict[str, str],
                             expected: tuple[str, str] | None) -> None:
    choice = proxy_for(url, environ)

    assert (None if choice is None else (choice.variable, choice.url)) == expected


@pytest.mark.parametrize(("host", "no_proxy", "direct"), [
    ("rt.example", "*", True),
    ("rt.example", "rt.example", True),
    ("api.rt.example", "rt.example", True),
    ("api.rt.example", ".rt.example", True),
    ("rt.example", ".rt.example", True),
    ("api.rt.example", "*.rt.example", True),
    ("notrt.example", "rt.example", False),
    ("rt.example", "other.example, rt.example", True),
    ("rt.example", "other.example rt.example", True),
    ("RT.Example", "rt.EXAMPLE", True),
    ("rt.example", "rt.example:443", True),
    ("rt.example", "rt.example:8443", False),
    ("10.1.2.3", "10.0.0.0/8", True),
    ("10.1.2.3", "10.1.2.3", True),
    ("11.1.2.3", "10.0.0.0/8", False),
    ("[2001:db8::5]", "2001:db8::/32", True),
    ("[2001:db8::5]", "[2001:db8::5]:443", True),
    ("rt.example", "", False),
    ("rt.example", ",,", False),
])
def test_no_proxy(host: str, no_proxy: str, direct: bool) -> None:
    for name in ("NO_PROXY", "no_proxy"):
        choice = proxy_for(f"https://{host}", {"HTTPS_PROXY": PROXY, name: no_proxy})

        assert (choice is None) is direct


def test_proxy_credentials_are_used_but_never_shown() -> None:
    choice = proxy_for("https://rt.example", {"HTTPS_PROXY": "http://me:s3cret@proxy:3128"})

    assert choice is not None
    assert choice.url == "http://me:s3cret@proxy:3128"
    assert choice.shown == "http://***@proxy:3128"
    assert "s3cret" not in repr(choice.shown)


@pytest.mark.parametrize("value", ["socks5://proxy:1080", "http://", "http://proxy:99999",
                                   "ftp://proxy"])
def test_a_proxy_that_cannot_be_used_is_a_config_error(value: str) -> None:
    with pytest.raises(ConfigError) as caught:
        proxy_for("https://rt.example", {"HTTPS_PROXY": value})

    assert "HTTPS_PROXY" in str(caught.value)


def test_a_secret_in_an_unusable_proxy_url_is_masked() -> None:
    with pytest.raises(ConfigError) as caught:
        proxy_for("https://rt.example", {"HTTPS_PROXY": "socks5://me:s3cret@proxy:1080"})

    assert "s3cret" not in str(caught.value)


@pytest.mark.parametrize(("host", "loopback"), [
    ("localhost", True), ("127.0.0.1", True), ("127.255.0.9", True), ("::1", True),
    ("[::1]", True), ("localhost.", True), ("10.0.0.1", False), ("example.com", False),
    ("localhost.example.com", False),
])
def test_loopback_hosts(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_ssl_cert_file_and_dir_that_cannot_be_used_are_config_errors(tmp_path: Path) -> None:
    garbage = tmp_path / "ca.pem"
    garbage.write_text("not a certificate\n")

    for environ, variable in (({"SSL_CERT_FILE": str(tmp_path / "missing.pem")}, "SSL_CERT_FILE"),
                              ({"SSL_CERT_FILE": str(garbage)}, "SSL_CERT_FILE"),
                              ({"SSL_CERT_DIR": str(tmp_path / "nodir")}, "SSL_CERT_DIR")):
        with pytest.raises(ConfigError) as caught:
            ssl_context(environ)
        assert variable in str(caught.value)


def test_without_the_variables_the_default_store_is_used() -> None:
    context = ssl_context({})

    assert context.check_hostname
    assert context.verify_mode == ssl.CERT_REQUIRED

