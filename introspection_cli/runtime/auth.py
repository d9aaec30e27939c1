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
    credentials_path,
    load_stored,
    normalize_url,
    remove_credentials,
    save_credentials,
    stored_url,
)
from introspection_cli.runtime.interface import Identity, RuntimeApi, TokenRejected

#: Builds a client for some credentials; tests and other transports can pass their own.
ClientFactory = Callable[[Credentials], RuntimeApi]


@dataclass(frozen=True, slots=True)
class LoginResult:
    """Who the token belongs to, which runtime, and where the login was stored."""

    identity: Identity
    url: str
    stored_at: Path


@dataclass(frozen=True, slots=True)
class LoginTarget:
    """The runtime URL to log in to, and where it came from (for messages)."""

    url: str
    source: str


def login_url(explicit: str | None, environ: Mapping[str, str]) -> LoginTarget:
    """The runtime URL to log in to: ``--url``, else ``INTROSPECTION_API_URL``, else the stored one.

    Checked before the token is asked for, so a bad URL never costs a paste.
    """
    if explicit:
        return LoginTarget(normalize_url(explicit, source=URL_FLAG), f"from {URL_FLAG}")
    env_url = environ.get(URL_ENV, "").strip()
    if env_url:
        return LoginTarget(normalize_url(env_url, source=URL_ENV), f"from {URL_ENV}")
    stored = load_stored(environ)
    if stored is None:
        raise ConfigError(
            "which runtime? pass --url https://your-runtime (or set INTROSPECTION_API_URL)"
        )
    return LoginTarget(stored_url(stored, environ),
                       f"the URL of your stored login {credentials_path(environ)}")


def login(target: LoginTarget, token: str, environ: Mapping[str, str],
          client_factory: ClientFactory | None = None) -> LoginResult:
    """Verify ``token`` against ``target`` with ``GET /v1/whoami``, then store both.

    Nothing is stored when the runtime rejects the token or cannot be reached.
    """
    credentials = Credentials(url=normalize_url(target.url),
                              token=check_token(token, source="input"))
    check_store_location(environ)
    try:
        identity = _whoami(credentials, environ, client_factory)
    except TokenRejected as exc:
        # "Log in again" is what just failed: say what to check instead.
        raise ConfigError(
            f"the runtime at {exc.url} rejected the token (HTTP 401: {exc.runtime_message}); "
            "nothing was stored. Check the token: paste all of it, and make sure it has not "
            f"expired or been revoked and was issued by this runtime. It was checked against "
            f"{credentials.url} ({target.source}); if your runtime is elsewhere, pass its "
            "address with --url"
        ) from None
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
