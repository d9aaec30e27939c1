"""What the environment says about the network: which proxy a URL goes through, which CAs.

Both decisions are made here once, for every HTTP client the tool builds (the
runtime's, the model providers'), which then run with ``trust_env=False`` so
nothing else in the environment (``.netrc``, a stray variable) is read behind
our back.

* :func:`proxy_for` — ``HTTPS_PROXY`` / ``HTTP_PROXY`` / ``ALL_PROXY`` (lower
  case first, as curl reads them) and ``NO_PROXY``; a loopback host
  (``localhost``, 127.0.0.0/8, ::1) is always reached directly, so a local
  server never sees its credentials go through a proxy.
* :func:`ssl_context` — ``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` (as OpenSSL reads
  them: they replace the default CA store), else the default store.
"""

from __future__ import annotations

import ipaddress
import os
import re
import ssl
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from introspection_cli.errors import ConfigError

CERT_FILE_ENV = "SSL_CERT_FILE"
CERT_DIR_ENV = "SSL_CERT_DIR"
_USER_INFO = re.compile(r"^([^:/?#]*://)[^/?#@]*@")


@dataclass(frozen=True, slots=True)
class ProxySetting:
    """The proxy a URL goes through: ``url`` for the HTTP client, ``variable`` it came from.

    ``url`` may hold the proxy's user and password; messages use :attr:`shown`.
    """

    url: str
    variable: str

    @property
    def shown(self) -> str:
        """The proxy URL with any user info masked, for messages."""
        return _USER_INFO.sub(r"\1***@", self.url)


def proxy_for(url: str, environ: Mapping[str, str]) -> ProxySetting | None:
    """The proxy to reach ``url`` through, or ``None`` for a direct connection.

    ``https`` URLs use ``https_proxy``, ``http`` URLs ``http_proxy`` (each lower
    case, then upper case; ``HTTP_PROXY`` is ignored when ``REQUEST_METHOD`` is
    set, as under CGI, where a client can set it), then ``all_proxy``. Direct:
    a loopback host, a host ``NO_PROXY`` names (``*``; a domain, matching its
    subdomains too, with or without a leading dot or ``*.``; an IP address or
    CIDR block; any of them with ``:port``). A proxy that is not ``http://`` or
    ``https://`` (a scheme-less ``host:port`` means ``http://``) raises
    :class:`ConfigError` naming the variable.
    """
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    if not host or is_loopback(host):
        return None
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        port = None
    if _bypassed(host, port, _first(environ, ("no_proxy", "NO_PROXY"))):
        return None
    names = [f"{parts.scheme}_proxy"]
    if parts.scheme != "http" or "REQUEST_METHOD" not in environ:
        names.append(f"{parts.scheme.upper()}_PROXY")
    names += ["all_proxy", "ALL_PROXY"]
    for name in names:
        value = environ.get(name, "").strip()
        if value:
            return ProxySetting(_proxy_url(name, value), name)
    return None


def is_loopback(host: str) -> bool:
    """``localhost`` (and names under it) or a loopback address (127.0.0.0/8, ::1)."""
    host = host.strip("[]").lower().rstrip(".")
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host.split("%", 1)[0]).is_loopback
    except ValueError:
        return False


def _first(environ: Mapping[str, str], names: tuple[str, ...]) -> str:
    return next((environ[name] for name in names if environ.get(name, "").strip()), "")


def _bypassed(host: str, port: int | None, no_proxy: str) -> bool:
    for raw in re.split(r"[,\s]+", no_proxy.lower()):
        entry = raw.strip()
        if not entry:
            continue
        if entry == "*":
            return True
        entry_host, entry_port = _split_port(entry)
        if entry_port is not None and entry_port != port:
            continue
        if _host_matches(host, entry_host):
            return True
    return False


def _split_port(entry: str) -> tuple[str, int | None]:
    """``host:port`` / ``[v6]:port`` / ``v6`` / ``cidr`` into the host part and the port."""
    if entry.startswith("["):
        inside, _, rest = entry[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else ""
        return inside, int(port) if port.isdigit() else None
    if entry.count(":") == 1:
        name, _, port = entry.partition(":")
        return name, int(port) if port.isdigit() else None
    return entry, None


def _host_matches(host: str, entry: str) -> bool:
    try:
        network = ipaddress.ip_network(entry, strict=False)
    except ValueError:
        network = None
    if network is not None:
        try:
            return ipaddress.ip_address(host.strip("[]")) in network
        except ValueError:
            return False
    domain = entry.removeprefix("*").lstrip(".").rstrip(".")
    name = host.rstrip(".")
    return bool(domain) and (name == domain or name.endswith("." + domain))


def _proxy_url(variable: str, value: str) -> str:
    url = value if "://" in value else f"http://{value}"
    parts = urlsplit(url)
    shown = ProxySetting(url, variable).shown
    if parts.scheme.lower() not in ("http", "https"):
        raise ConfigError(f"{variable}={shown}: only http:// and https:// proxies are "
                          f"supported; fix or unset {variable}")
    try:
        usable = bool(parts.hostname) and parts.port != 0  # the port is checked when asked
    except ValueError:
        usable = False
    if not usable:
        raise ConfigError(f"{variable}={shown} is not a proxy URL (like "
                          f"http://proxy.example:3128); fix or unset {variable}")
    return url


def ssl_context(environ: Mapping[str, str]) -> ssl.SSLContext:
    """A TLS context trusting ``SSL_CERT_FILE`` and/or ``SSL_CERT_DIR`` when set (only
    them, as OpenSSL does), else the default CA store. A file or directory that cannot
    be used raises :class:`ConfigError` naming the variable."""
    cafile = environ.get(CERT_FILE_ENV, "").strip() or None
    capath = environ.get(CERT_DIR_ENV, "").strip() or None
    if cafile is None and capath is None:
        import httpx2  # its default: the system store (truststore on macOS and Windows)

        return httpx2.create_ssl_context(trust_env=False)
    if capath is not None and not os.path.isdir(capath):
        raise ConfigError(f"{CERT_DIR_ENV}={capath} is not a directory; point it at a "
                          "directory of CA certificates or unset it")
    try:
        return ssl.create_default_context(cafile=cafile, capath=capath)
    except (OSError, ssl.SSLError) as exc:
        reason = getattr(exc, "strerror", None) or getattr(exc, "reason", None) or str(exc)
        raise ConfigError(f"{CERT_FILE_ENV}={cafile} cannot be loaded ({reason}); point it "
                          "at a PEM file of CA certificates or unset it") from None
