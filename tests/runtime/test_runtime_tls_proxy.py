"""The runtime over TLS and through proxies: SSL_CERT_FILE / SSL_CERT_DIR, HTTPS_PROXY, NO_PROXY.

A self-signed certificate stands for a private CA; the proxy tunnels any
CONNECT to the TLS stub, so ``https://runtime.example`` is reachable only
through it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from runtime_harness import SENTINEL_TOKEN, Cli
from tls_stubs import Certificate, ConnectProxy, TlsRuntime, make_certificate

from tests.support.http_stub import unused_port

NO_PROXIES: dict[str, str | None] = {name: None for name in (
    "HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy",
    "NO_PROXY", "no_proxy", "SSL_CERT_FILE", "SSL_CERT_DIR")}


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> Certificate:
    return make_certificate(tmp_path_factory.mktemp("tls"))


@pytest.fixture
def tls_runtime(certificate: Certificate) -> Iterator[TlsRuntime]:
    with TlsRuntime(certificate) as server:
        yield server


@pytest.fixture
def proxy(tls_runtime: TlsRuntime) -> Iterator[ConnectProxy]:
    with ConnectProxy(tls_runtime.port) as server:
        yield server


def login(cli: Cli, url: str, **env: str | None) -> tuple[int, str, str]:
    result = cli("login", "--url", url, "--token-stdin", input=SENTINEL_TOKEN + "\n",
                 env={**NO_PROXIES, **env})
    return result.exit_code, result.out, result.stderr


def test_a_certificate_failure_is_not_retried_and_says_so(cli: Cli, tls_runtime: TlsRuntime,
                                                          config_dir: Path) -> None:
    code, _, stderr = login(cli, f"https://127.0.0.1:{tls_runtime.port}")

    assert code == 3
    assert "certificate verify failed for 127.0.0.1" in stderr
    assert "SSL_CERT_FILE" in stderr
    assert "unreachable" not in stderr
    assert tls_runtime.connections == 1  # INTROSPECTION_HTTP_ATTEMPTS is 3 here
    assert not (config_dir / "credentials.json").exists()


def test_ssl_cert_file_is_trusted(cli: Cli, tls_runtime: TlsRuntime,
                                  certificate: Certificate) -> None:
    url = f"https://127.0.0.1:{tls_runtime.port}"
    code, out, stderr = login(cli, url, SSL_CERT_FILE=str(certificate.cert))

    assert code == 0, stderr
    assert out == f"Logged in to {url} as ada@example.com (Acme).\n"


def test_ssl_cert_dir_is_trusted(cli: Cli, tls_runtime: TlsRuntime,
                                 certificate: Certificate) -> None:
    code, _, stderr = login(cli, f"https://127.0.0.1:{tls_runtime.port}",
                            SSL_CERT_DIR=str(certificate.directory))

    assert code == 0, stderr


def test_a_bad_ssl_cert_file_is_exit_2_before_any_request(cli: Cli, tls_runtime: TlsRuntime,
                                                          tmp_path: Path) -> None:
    code, _, stderr = login(cli, f"https://127.0.0.1:{tls_runtime.port}",
                            SSL_CERT_FILE=str(tmp_path / "missing.pem"))

    assert code == 2
    assert "SSL_CERT_FILE" in stderr
    assert tls_runtime.connections == 0


@pytest.mark.parametrize("variable", ["HTTPS_PROXY", "https_proxy", "ALL_PROXY"])
def test_a_remote_runtime_is_reached_through_the_proxy(cli: Cli, proxy: ConnectProxy,
                                                       certificate: Certificate,
                                                       variable: str) -> None:
    code, out, stderr = login(cli, "https://runtime.example", SSL_CERT_FILE=str(certificate.cert),
                              **{variable: f"http://127.0.0.1:{proxy.port}"})

    assert code == 0, stderr
    assert out == "Logged in to https://runtime.example as ada@example.com (Acme).\n"
    assert proxy.requests == ["CONNECT runtime.example:443 HTTP/1.1"]


def test_a_loopback_runtime_never_goes_through_the_proxy(cli: Cli, proxy: ConnectProxy,
                                                         tls_runtime: TlsRuntime,
                                                         certificate: Certificate) -> None:
    through = f"http://127.0.0.1:{proxy.port}"
    code, _, stderr = login(cli, f"https://127.0.0.1:{tls_runtime.port}",
                            SSL_CERT_FILE=str(certificate.cert), HTTPS_PROXY=through,
                            ALL_PROXY=through, HTTP_PROXY=through)

    assert code == 0, stderr
    assert proxy.requests == []
    assert tls_runtime.connections == 1


def test_an_unreachable_proxy_is_named(cli: Cli, certificate: Certificate) -> None:
    port = unused_port()
    code, _, stderr = login(cli, "https://runtime.example",
                            HTTPS_PROXY=f"http://user:pw@127.0.0.1:{port}")

    assert code == 3
    assert f"through the proxy http://***@127.0.0.1:{port} from HTTPS_PROXY" in stderr
    assert "pw@" not in stderr
