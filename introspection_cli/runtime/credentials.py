"""Where the runtime login lives, and which URL and token a command uses.

The stored login is ``credentials.json`` (``{"url": ..., "token": ...}``, mode
0600) in the config directory (mode 0700): ``INTROSPECTION_CONFIG_DIR`` or
``platformdirs.user_config_dir("introspection")``. ``INTROSPECTION_API_URL`` and
``INTROSPECTION_TOKEN`` override it. No function here ever puts a token in a
message.
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from introspection_cli.config_dir import CONFIG_DIR_ENV as CONFIG_DIR_ENV
from introspection_cli.config_dir import config_dir as config_dir
from introspection_cli.errors import ConfigError
from introspection_cli.fsutil import atomic_write_text, kind_of

URL_ENV = "INTROSPECTION_API_URL"
TOKEN_ENV = "INTROSPECTION_TOKEN"  # noqa: S105 (a variable name, not a secret)
CREDENTIALS_FILE = "credentials.json"
_MAX_STORED_BYTES = 1 << 20  # a URL and a token: anything near this size is not a login

_LOGIN_HINT = "run `introspection login`"


@dataclass(frozen=True, slots=True)
class Credentials:
    """A runtime URL and the bearer token for it. ``repr`` never shows the token."""

    url: str
    token: str = field(repr=False)


def credentials_path(environ: Mapping[str, str]) -> Path:
    """The stored-login file (it may not exist)."""
    return config_dir(environ) / CREDENTIALS_FILE


#: Where a runtime URL came from, for messages: ``--url``, :data:`URL_ENV`, or the stored login.
URL_FLAG = "--url"
_URL_EXAMPLE = "https://runtime.example"
_USER_INFO = re.compile(r"^([^:/?#]*://)[^/?#]*@")
_BRACKETED_HOST = re.compile(r"\[([^\[\]]*)\](?::[0-9]*)?")
_HOST_LABEL = re.compile(r"(?!-)[a-z0-9_-]{1,63}(?<!-)")


def normalize_url(url: str, *, source: str = URL_FLAG) -> str:
    """Check a runtime URL and return it without a trailing slash.

    Only http(s) is accepted, with a valid host (a DNS name, an IPv4 address or
    a bracketed IPv6 address) and no user info, query, fragment, space or
    control character. Plain http is refused unless the host is loopback: the
    bearer token would travel in clear text to another machine. ``source`` is
    where the URL came from (``--url``, :data:`URL_ENV`, ``the stored login
    PATH``); every :class:`ConfigError` names it and says how to fix it there.
    """
    url = url.strip()
    # Checked before parsing: urlsplit silently drops tabs and newlines ("exa\tmple.com"
    # would become example.com), and a space would be sent percent-encoded.
    bad = next((i for i, char in enumerate(url) if char.isspace() or not char.isprintable()), None)
    if bad is not None:
        raise _url_error(source, "the runtime URL contains a space or control character at "
                                 f"character {bad + 1}")
    shown = mask_url(url)  # no message below can echo a password or a query value
    try:
        parts = urlsplit(url)
        port = parts.port  # urlsplit checks the port only when asked
    except ValueError as exc:  # unbalanced brackets, a bad IPv6 address or port
        problem = ("has an invalid port" if "port" in str(exc).lower()
                   else f"is not a valid URL ({exc})")
        raise _url_error(source, f"runtime URL {shown!r} {problem}") from None
    if port == 0:  # no server listens on port 0: connecting would fail as "unreachable"
        raise _url_error(source, f"runtime URL {shown!r} has an invalid port (0)")
    if parts.username is not None or parts.password is not None:
        raise _url_error(source, "the runtime URL must not contain user info (user:password@): "
                                 "the login is a token")
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise _url_error(source, f"runtime URL {shown!r} is not an http(s) URL")
    if parts.query or parts.fragment:
        raise _url_error(source, f"runtime URL {shown!r} must not contain a query or a fragment; "
                                 "give just the base URL")
    host_problem = _host_problem(parts.netloc, parts.hostname)
    if host_problem is not None:
        raise _url_error(source, f"runtime URL {shown!r} {host_problem}")
    if parts.scheme == "http" and not _is_loopback(parts.hostname):
        raise _url_error(source, f"refusing to send a token over plain http to {parts.hostname}; "
                                 "use the runtime's https:// URL (plain http is only allowed "
                                 "for localhost)")
    # Scheme and host are case-insensitive (RFC 3986 6.2.2.1): HTTP://Host and http://host
    # are one runtime, so they must compare equal (an IPv6 zone id keeps its case).
    address, zone, rest = parts.netloc.partition("%25")
    return f"{parts.scheme}://{address.lower()}{zone}{rest}{parts.path}".rstrip("/")


def mask_url(url: str) -> str:
    """``url`` for a message: user info, each query value and the fragment shown as ``***``
    (``https://***@h/p?key=***#***``), since a token pasted into any of them must not be echoed.
    Works on text that does not parse as a URL, too."""
    url = _USER_INFO.sub(r"\1***@", url)
    url, hash_mark, fragment = url.partition("#")
    base, question, query = url.partition("?")
    if question:
        query = "&".join(part.partition("=")[0] + "=***" if "=" in part else "***" if part
                         else "" for part in query.split("&"))
    return base + question + query + (hash_mark + "***" if fragment else hash_mark)


def _host_problem(netloc: str, hostname: str) -> str | None:
    """Why the host part cannot be connected to, or None: what urlsplit lets through."""
    if netloc.startswith("["):
        bracketed = _BRACKETED_HOST.fullmatch(netloc)
        if bracketed is None:
            return "has text after the ] of its IPv6 address; only :PORT may follow it"
        try:  # a zone is written %25zone in a URL (RFC 6874)
            ipaddress.IPv6Address(bracketed.group(1).replace("%25", "%", 1))
        except ValueError:
            return f"has an invalid IPv6 address [{bracketed.group(1)}]"
        return None
    try:
        ascii_host = hostname.encode("idna").decode("ascii")
    except UnicodeError:
        return f"has an invalid host name {hostname!r}"
    labels = ascii_host.split(".")
    if labels[-1] == "":  # a trailing dot: the fully qualified form
        labels.pop()
    if not labels or len(ascii_host) > 253 or not all(_HOST_LABEL.fullmatch(label)
                                                      for label in labels):
        return (f"has an invalid host name {hostname!r} (letters, digits, hyphens and dots; "
                "an IPv6 address goes in [brackets])")
    if all(label.isdigit() for label in labels):
        try:
            ipaddress.IPv4Address(".".join(labels))
        except ValueError:
            return f"has an invalid IPv4 address {hostname!r}"
    return None


def _url_error(source: str, problem: str) -> ConfigError:
    """``problem`` with where the URL came from and what to do there."""
    if source == URL_FLAG:
        fix = f"pass the runtime's base URL, like --url {_URL_EXAMPLE}"
    elif source == URL_ENV:
        fix = f"set {URL_ENV} to the runtime's base URL, like {_URL_EXAMPLE}, or unset it"
    else:
        fix = f"log in again with `introspection login --url {_URL_EXAMPLE}`"
    return ConfigError(f"{problem} (from {source}); {fix}")


def _is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_token(token: str, *, source: str) -> str:
    """Strip surrounding whitespace and reject a token that cannot be an HTTP header value.

    ``source`` says where the token came from, for the message (never the token itself).
    """
    token = token.strip()
    if not token:
        raise ConfigError(f"the token from {source} is empty; {_LOGIN_HINT} and paste it again")
    if not all(0x21 <= ord(char) <= 0x7E for char in token):
        raise ConfigError(
            f"the token from {source} contains spaces, control or non-ASCII characters; "
            "copy it again from the runtime"
        )
    return token


def load_stored(environ: Mapping[str, str]) -> Credentials | None:
    """The stored login, or ``None`` when there is none.

    A file another user owns, or that others may read or write, is refused
    (:class:`ConfigError`): someone could have planted it, or read the token.
    """
    path = credentials_path(environ)
    try:
        text = _read_private(path).decode("utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(
            f"cannot read the stored login {path} ({type(exc).__name__}); "
            f"fix its permissions or {_LOGIN_HINT} again"
        ) from None
    try:
        data = json.loads(text)
    except ValueError:
        data = None  # never chain: the decoder's message quotes the file, token included
    if (
        not isinstance(data, dict)
        or not isinstance(data.get("url"), str)
        or not isinstance(data.get("token"), str)
    ):
        raise ConfigError(f"the stored login {path} is damaged; {_LOGIN_HINT} again")
    return Credentials(url=data["url"], token=data["token"])


def _read_private(path: Path) -> bytes:
    """The bytes of ``path`` if it is a regular file this user owns that nobody else may read
    or write; opened non-blocking, so a FIFO put in its place cannot hang the command."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ConfigError(f"the stored login {path} is {kind_of(info.st_mode)}, not a "
                              f"file; delete it and {_LOGIN_HINT} again")
        if info.st_uid != os.geteuid():
            raise ConfigError(f"the stored login {path} belongs to another user (uid "
                              f"{info.st_uid}), so it was not used; delete it and "
                              f"{_LOGIN_HINT} again")
        if info.st_mode & 0o077:
            raise ConfigError(f"the stored login {path} can be read or written by other users "
                              f"(mode {stat.S_IMODE(info.st_mode):04o}), so it was not used; "
                              f"run `chmod 600 {path}` if you trust it, else delete it and "
                              f"{_LOGIN_HINT} again")
        chunks = []
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
            if sum(map(len, chunks)) > _MAX_STORED_BYTES:
                raise ConfigError(f"the stored login {path} is far too large to be one; "
                                  f"delete it and {_LOGIN_HINT} again")
        return b"".join(chunks)
    finally:
        os.close(fd)


def resolve_credentials(environ: Mapping[str, str]) -> Credentials:
    """The URL and token a command uses: environment overrides first, then the stored login.

    A stored token is only ever sent to the stored URL: ``INTROSPECTION_API_URL``
    pointing elsewhere needs ``INTROSPECTION_TOKEN`` as well.
    """
    env_url = environ.get(URL_ENV, "").strip()
    env_token = environ.get(TOKEN_ENV, "")
    if env_token.strip() and env_url:  # both given: the stored login is not read at all
        return Credentials(url=normalize_url(env_url, source=URL_ENV),
                           token=check_token(env_token, source=TOKEN_ENV))
    stored = load_stored(environ)
    if env_token.strip():
        token = check_token(env_token, source=TOKEN_ENV)
        if stored is None:
            raise ConfigError(f"{TOKEN_ENV} is set but no runtime URL is: set {URL_ENV} too")
        return Credentials(url=stored_url(stored, environ), token=token)
    if stored is None:
        raise ConfigError(f"not logged in to a runtime; {_LOGIN_HINT} (or set {TOKEN_ENV})")
    url = stored_url(stored, environ)
    if env_url and normalize_url(env_url, source=URL_ENV) != url:
        raise ConfigError(
            f"{URL_ENV} points at {normalize_url(env_url, source=URL_ENV)} but you are logged "
            f"in to {url}; set {TOKEN_ENV} for that runtime, or log in to it"
        )
    return Credentials(url=url, token=check_token(stored.token, source="the stored login"))


def stored_url(stored: Credentials, environ: Mapping[str, str]) -> str:
    """The stored login's URL, checked like any other (the file may have been edited)."""
    return normalize_url(stored.url, source=f"the stored login {credentials_path(environ)}")


def save_credentials(credentials: Credentials, environ: Mapping[str, str]) -> Path:
    """Store the login atomically: file 0600, in a directory made 0700 if this creates it.

    An existing directory is never changed, and is refused (:class:`ConfigError`)
    when another user owns it or others may write to it: they could swap the file.
    """
    directory = config_dir(environ)
    try:
        try:
            directory.mkdir(mode=0o700, parents=True)
            os.chmod(directory, 0o700)  # ours: exactly 0700, whatever the umask
        except FileExistsError:
            _check_private_directory(directory)
        path = directory / CREDENTIALS_FILE
        text = json.dumps({"url": credentials.url, "token": credentials.token}, indent=2) + "\n"
        atomic_write_text(path, text, mode=0o600)
    except OSError as exc:
        raise ConfigError(
            f"cannot store the login in {directory} ({exc.strerror or type(exc).__name__}); "
            f"set {CONFIG_DIR_ENV} to a writable directory"
        ) from None
    return path


def check_store_location(environ: Mapping[str, str]) -> None:
    """Refuse, before any request, a config directory :func:`save_credentials` would refuse."""
    directory = config_dir(environ)
    try:
        exists = directory.exists()
    except OSError:
        return  # save_credentials says why it cannot be used
    if exists:
        _check_private_directory(directory)


def _check_private_directory(directory: Path) -> None:
    info = directory.stat()
    fix = f"use a directory of your own (set {CONFIG_DIR_ENV})"
    if not stat.S_ISDIR(info.st_mode):
        raise ConfigError(f"the config directory {directory} is not a directory; {fix}")
    if info.st_uid != os.geteuid():
        raise ConfigError(f"the config directory {directory} belongs to another user (uid "
                          f"{info.st_uid}); the login was not stored: {fix}")
    if info.st_mode & 0o022:
        raise ConfigError(f"the config directory {directory} can be written by other users "
                          f"(mode {stat.S_IMODE(info.st_mode):04o}); the login was not "
                          f"stored: run `chmod go-w {directory}`, or {fix}")


def remove_credentials(environ: Mapping[str, str]) -> Path | None:
    """Delete the stored login. Returns the removed file, or ``None`` if there was none."""
    path = credentials_path(environ)
    try:
        path.unlink()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ConfigError(
            f"cannot remove the stored login {path} ({exc.strerror or type(exc).__name__})"
        ) from None
    return path
