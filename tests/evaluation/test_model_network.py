"""Which way a model call goes: a loopback base URL directly, others through the proxy asked for.

The proxy variables are set to a recording CONNECT proxy on 127.0.0.1. A local
server never sees its API key go through a proxy; a remote one (here a TLS stub
posing as ``runtime.example``, reached only through the proxy) is reached through
``HTTPS_PROXY``, unless ``NO_PROXY`` names it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.evaluation.conftest import GATED_JUDGE, SENTINEL_KEY, fixture_row, write_recipe
from tests.evaluation.stub_model_server import StubModelServer
from tests.runtime.tls_stubs import ConnectProxy, TlsRuntime, make_certificate

PROXY_VARIABLES = ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "https_proxy", "http_proxy",
                   "all_proxy")


def eval_cli(tmp_path: Path, env: dict[str, str]) -> list[dict[str, object]]:
    rows = [fixture_row("conv_1", "refund VERDICT:pass")]
    root = write_recipe(tmp_path / "recipe", {"billing": (GATED_JUDGE, rows)})
    clean = {k: v for k, v in os.environ.items()
             if k.upper() not in {*PROXY_VARIABLES, "NO_PROXY"} and not k.startswith("INTRO")}
    result = subprocess.run(
        [sys.executable, "-m", "introspection_cli", "judges", "eval", str(root), "--format",
         "json", "--no-cache", "--max-retries", "0", "--timeout", "5"],
        env={**clean, "OPENAI_API_KEY": SENTINEL_KEY, **env}, capture_output=True, text=True,
        timeout=60)
    assert "Traceback" not in result.stderr, result.stderr
    return json.loads(result.stdout)["judges"][0]["rows"]


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
def test_a_loopback_endpoint_is_never_reached_through_a_proxy(tmp_path: Path, host: str) -> None:
    with StubModelServer(api_key=SENTINEL_KEY) as stub, ConnectProxy(target_port=1) as proxy:
        proxy_url = f"http://127.0.0.1:{proxy.port}"
        base = stub.openai_url.replace("127.0.0.1", host)
        (row,) = eval_cli(tmp_path, {"OPENAI_BASE_URL": base,
                                     **{name: proxy_url for name in PROXY_VARIABLES}})
        assert row["outcome"] == "pass"
        assert proxy.connections == 0  # the key went to the local server only
        assert len(stub.requests) == 1


def test_a_remote_endpoint_goes_through_https_proxy(tmp_path: Path) -> None:
    certificate = make_certificate(tmp_path / "tls")
    with TlsRuntime(certificate) as remote, ConnectProxy(remote.port) as proxy:
        (row,) = eval_cli(tmp_path, {"OPENAI_BASE_URL": "https://runtime.example/v1",
                                     "HTTPS_PROXY": f"http://127.0.0.1:{proxy.port}",
                                     "SSL_CERT_FILE": str(certificate.cert)})
        assert proxy.requests == ["CONNECT runtime.example:443 HTTP/1.1"]
    # The stub behind the proxy answers every request with a body that is not a
    # chat completion: the call got there, through the proxy, over verified TLS.
    assert "no submit_verdict call" in str(row["error"])


def test_no_proxy_names_a_host_that_is_reached_directly(tmp_path: Path) -> None:
    certificate = make_certificate(tmp_path / "tls")
    with TlsRuntime(certificate) as remote, ConnectProxy(remote.port) as proxy:
        (row,) = eval_cli(tmp_path, {"OPENAI_BASE_URL": "https://runtime.example/v1",
                                     "HTTPS_PROXY": f"http://127.0.0.1:{proxy.port}",
                                     "NO_PROXY": "example", "SSL_CERT_FILE":
                                     str(certificate.cert)})
        assert proxy.requests == []
    # Directly, runtime.example does not resolve here: a connection error.
    assert str(row["error"]).startswith("could not connect to https://runtime.example/v1")


def test_a_proxy_that_is_not_a_url_is_a_usage_error(tmp_path: Path) -> None:
    rows = [fixture_row("conv_1", "refund VERDICT:pass")]
    root = write_recipe(tmp_path / "recipe", {"billing": (GATED_JUDGE, rows)})
    result = subprocess.run(
        [sys.executable, "-m", "introspection_cli", "judges", "eval", str(root), "--no-cache"],
        env={"PATH": "/usr/bin:/bin", "OPENAI_API_KEY": SENTINEL_KEY,
             "OPENAI_BASE_URL": "https://api.example/v1", "HTTPS_PROXY": "socks5://p:1080"},
        capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert "HTTPS_PROXY" in result.stderr and "Traceback" not in result.stderr


def test_the_environments_ca_store_applies_to_an_http_endpoint_too(tmp_path: Path) -> None:
    # The SDKs follow redirects, so an http:// endpoint's client may still speak TLS
    # (an http -> https redirect, an https proxy): SSL_CERT_FILE is read for it too,
    # and one that cannot be loaded stops the run before any call.
    rows = [fixture_row("conv_1", "refund VERDICT:pass")]
    root = write_recipe(tmp_path / "recipe", {"billing": (GATED_JUDGE, rows)})
    clean = {k: v for k, v in os.environ.items()
             if k.upper() not in {*PROXY_VARIABLES, "NO_PROXY"} and not k.startswith("INTRO")}
    with StubModelServer(api_key=SENTINEL_KEY) as stub:
        result = subprocess.run(
            [sys.executable, "-m", "introspection_cli", "judges", "eval", str(root),
             "--no-cache", "--format", "json"],
            env={**clean, "OPENAI_API_KEY": SENTINEL_KEY, "OPENAI_BASE_URL": stub.openai_url,
                 "SSL_CERT_FILE": str(tmp_path / "missing.pem")},
            capture_output=True, text=True, timeout=60)
        assert result.returncode == 2, result.stderr
        assert "SSL_CERT_FILE" in result.stderr and "Traceback" not in result.stderr
        assert stub.requests == []
