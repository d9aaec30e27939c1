"""The two looks ``doctor`` takes outside the process: the runtime, and the browser.

The runtime gets one ``GET /v1/whoami`` through the runtime client (bounded in
bytes and time like every runtime call; one attempt, so an unreachable runtime
costs one ``INTROSPECTION_HTTP_TIMEOUT`` at most). The browser is looked up in
Python's :mod:`webbrowser` registry, which is what ``judges label`` opens, and
is never started.
"""

from __future__ import annotations

import dataclasses
import shutil
from collections.abc import Mapping
from typing import Any

from introspection_cli.errors import ConfigError, ServiceError
from introspection_cli.runtime.credentials import (
    TOKEN_ENV,
    URL_ENV,
    Credentials,
    credentials_path,
    load_stored,
    resolve_credentials,
)
from introspection_cli.runtime.interface import TokenRejected
from introspection_cli.workflows.doctor_findings import Finding

_LOGIN = "introspection login --url https://your-runtime.example"


def runtime_finding(environ: Mapping[str, str]) -> Finding:
    """The login a command would use, and whether the runtime accepts it."""
    env_token = bool(environ.get(TOKEN_ENV, "").strip())
    try:
        if not env_token and load_stored(environ) is None:
            return Finding("runtime", "problem", "not logged in to a runtime",
                           fix=f"run `{_LOGIN}` (or set {TOKEN_ENV} and {URL_ENV})",
                           facts={"logged_in": False})
        credentials = resolve_credentials(environ)
    except ConfigError as exc:
        return _problem(exc, {"logged_in": None})
    source = (TOKEN_ENV if env_token
              else f"the stored login {credentials_path(environ)}")
    facts: dict[str, Any] = {"logged_in": True, "url": credentials.url, "token_from": source}
    return _whoami(credentials, source, environ, facts)


def _whoami(credentials: Credentials, source: str, environ: Mapping[str, str],
            facts: dict[str, Any]) -> Finding:
    from introspection_cli.runtime.client import HttpRuntimeClient
    from introspection_cli.runtime.retries import RetryPolicy

    url = credentials.url
    try:
        policy = dataclasses.replace(RetryPolicy.from_env(environ), attempts=1)
        with HttpRuntimeClient(credentials, policy, environ=environ) as client:
            identity = client.whoami()
    except TokenRejected as exc:
        fix = (f"set {TOKEN_ENV} to a valid token for {url}, or unset it to use your stored "
               "login" if source == TOKEN_ENV
               else f"log in again with a valid token for it: `introspection login --url {url}`")
        return Finding("runtime", "problem", f"{url} rejected the token from {source} "
                                             f"(HTTP 401: {exc.runtime_message})",
                       fix=fix, facts={**facts, "answers": True, "accepted": False})
    except (ConfigError, ServiceError) as exc:
        return _problem(exc, {**facts, "answers": False})
    return Finding("runtime", "ok", f"{url} answers: logged in as {identity.describe()} "
                                    f"(token from {source})",
                   facts={**facts, "answers": True, "accepted": True,
                          "identity": identity.describe()})


def _problem(exc: ConfigError | ServiceError, facts: dict[str, Any]) -> Finding:
    """A runtime error as a finding: our messages read "what is wrong; what to do"."""
    detail, _, fix = str(exc).partition("; ")
    return Finding("runtime", "problem", detail,
                   fix=fix or "check the runtime URL and your network", facts=facts)


def browser_finding(environ: Mapping[str, str]) -> Finding:
    """Whether ``judges label`` can open a browser, from :mod:`webbrowser`'s registry."""
    import webbrowser

    try:
        controller = webbrowser.get()
    except webbrowser.Error:
        return Finding("browser", "note", "no browser found: judges label prints the address "
                                          "for you to open (as --no-open does)",
                       facts={"found": False})
    name = str(getattr(controller, "name", type(controller).__name__))
    # A command from BROWSER is registered without a look for it: look now.
    if isinstance(controller, webbrowser.GenericBrowser) and shutil.which(name) is None:
        return Finding("browser", "problem", f"the browser command {name!r} (from BROWSER) "
                                             "is not found",
                       fix="set BROWSER to a browser command on your PATH, or unset it",
                       facts={"found": False, "name": name})
    return Finding("browser", "ok", f"judges label opens {name}",
                   facts={"found": True, "name": name})
