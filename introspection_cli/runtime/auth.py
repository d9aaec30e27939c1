"""``introspection login`` and ``logout``: verify a token, then store or forget it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from introspection_cli.errors import ConfigError
from introspection_cli.runtime.credentials import (
    URL_ENV,
    URL_FLAG,
    Credentials,
    check_store_location,
    check_token,
    load_stored,
    normalize_url,
    remove_credentials,
    save_credentials,
    stored_url,
)
from introspection_cli.runtime.interface import Identity, RuntimeApi

#: Builds a client for some credentials; tests and other transports can pass their own.
ClientFactory = Callable[[Credentials], RuntimeApi]


@dataclass(frozen=True, slots=True)
class LoginResult:
    """Who the token belongs to, which runtime, and where the login was stored."""

    identity: Identity
    url: str
    stored_at: Path


def login_url(explicit: str | None, environ: Mapping[str, str]) -> str:
    """The runtime URL to log in to: ``--url``, else ``INTROSPECTION_API_URL``, else the stored one.

    Checked before the token is asked for, so a bad URL never costs a paste.
    """
    if explicit:
        return normalize_url(explicit, source=URL_FLAG)
    env_url = environ.get(URL_ENV, "").strip()
    if env_url:
        return normalize_url(env_url, source=URL_ENV)
    stored = load_stored(environ)
    if stored is None:
        raise ConfigError(
            "which runtime? pass --url https://your-runtime (or set INTROSPECTION_API_URL)"
        )
    return stored_url(stored, environ)


def login(url: str, token: str, environ: Mapping[str, str],
          client_factory: ClientFactory | None = None) -> LoginResult:
    """Verify ``token`` against ``url`` with ``GET /v1/whoami``, then store both.

    Nothing is stored when the runtime rejects the token or cannot be reached.
    """
    credentials = Credentials(url=normalize_url(url), token=check_token(token, source="input"))
    check_store_location(environ)
    identity = _whoami(credentials, environ, client_factory)
    path = save_credentials(credentials, environ)
    return LoginResult(identity=identity, url=credentials.url, stored_at=path)


def logout(environ: Mapping[str, str]) -> Path | None:
    """Forget the stored login. Returns the removed file, or ``None`` if there was none."""
    return remove_credentials(environ)


def default_client_factory(environ: Mapping[str, str]) -> ClientFactory:
    """The real HTTP client, with the retry policy from the environment."""
    # httpx is imported only by commands that talk to the runtime.
    from introspection_cli.runtime.client import HttpRuntimeClient
    from introspection_cli.runtime.retries import RetryPolicy

    policy = RetryPolicy.from_env(environ)

    def factory(credentials: Credentials) -> RuntimeApi:
        return HttpRuntimeClient(credentials, policy, environ=environ)

    return factory


def _whoami(credentials: Credentials, environ: Mapping[str, str],
            client_factory: ClientFactory | None) -> Identity:
    client = (client_factory or default_client_factory(environ))(credentials)
    try:
        return client.whoami()
    finally:
        close = getattr(client, "close", None)
        if callable(close):
            close()
