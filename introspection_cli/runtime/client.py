"""The runtime API over HTTP (httpx2, the client the model SDKs use), with bounded retries.

Error policy (documented in docs/export.md):

* 429, 502, 503, 504, timeouts and connection errors are retried, honouring
  ``Retry-After`` (seconds or an HTTP date) up to ``RetryPolicy.max_wait``; a
  runtime asking for a longer wait is not retried. Still failing → ServiceError
  (exit 3) naming the URL.
* 401 → ConfigError (exit 2): log in again. Any other 4xx → ConfigError (exit 2)
  with the runtime's message: the request or the configured URL is wrong, and
  retrying will not help. Other 5xx and redirects → ServiceError (exit 3).
* Every answer is bounded (``httpbounds``): at most 64 MiB of decoded body, else
  ServiceError (exit 3, not retried), and ``timeout`` seconds for the whole
  answer, body included. A certificate that fails verification is not retried.
* A 200 whose body is not the expected JSON shape → ServiceError (exit 3). For an
  export only the envelope counts: each exported object is passed on as the
  exact JSON line it would be written as (see ``wirejson.py``), for the caller
  to judge one by one, and an ``errors`` entry that cannot be read is passed on
  as a warning (``unreadable_errors``).

Proxies (``HTTPS_PROXY``, ``NO_PROXY``...) and CA certificates (``SSL_CERT_FILE``,
``SSL_CERT_DIR``) come from :mod:`introspection_cli.netenv`; nothing else in the
environment is read. The token lives only in the client's default headers. httpx2 errors are never
chained into ours (their ``request`` carries those headers), and any text that
comes back from the runtime is scrubbed of the token before it is shown.
"""

from __future__ import annotations

import os
import ssl
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

import httpx2

from introspection_cli import strictjson
from introspection_cli.diagnostics import escape_text
from introspection_cli.errors import ConfigError, ServiceError
from introspection_cli.httpbounds import BodyTooLarge, BoundedTransport, MiB, describe_size
from introspection_cli.netenv import CERT_DIR_ENV, CERT_FILE_ENV, proxy_for, ssl_context
from introspection_cli.runtime.credentials import Credentials
from introspection_cli.runtime.interface import (
    ExportBatch,
    ExportError,
    Identity,
    TokenRejected,
)
from introspection_cli.runtime.retries import RetryPolicy, parse_retry_after
from introspection_cli.runtime.wirejson import BodyShapeError, parse_export_body, text_of

RETRYABLE_STATUS = frozenset({429, 502, 503, 504})
#: The most decoded body read from one runtime answer.
MAX_BODY = 64 * MiB

class _Retry(Exception):
    """One failed attempt worth retrying: why, and how long the runtime asked us to wait."""

    def __init__(self, reason: str, wait: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.wait = wait


class HttpRuntimeClient:
    """:class:`~introspection_cli.runtime.interface.RuntimeApi` over real HTTP."""

    def __init__(
        self,
        credentials: Credentials,
        policy: RetryPolicy | None = None,
        *,
        sleep: Callable[[float], None] = time.sleep,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self._url = credentials.url
        self._token = credentials.token
        self._policy = policy or RetryPolicy()
        self._sleep = sleep
        environ = os.environ if environ is None else environ
        self._proxy = proxy_for(credentials.url, environ)
        try:
            transport = BoundedTransport(
                max_body=MAX_BODY, deadline=self._policy.timeout, verify=ssl_context(environ),
                proxy=self._proxy.url if self._proxy else None)
            self._http = httpx2.Client(
                base_url=credentials.url,
                headers={"Authorization": f"Bearer {credentials.token}",
                         "Accept": "application/json"},
                timeout=self._policy.timeout,
                follow_redirects=False,  # never carry the token to wherever a redirect points
                trust_env=False,  # proxies and CAs come from netenv; no netrc sees the token
                transport=transport,
            )
        except (httpx2.InvalidURL, ValueError) as exc:  # a proxy URL httpx2 cannot use
            raise self._url_error(exc) from None

    @property
    def url(self) -> str:
        """The runtime's base URL."""
        return self._url

    def close(self) -> None:
        """Close the connection pool."""
        self._http.close()

    def __enter__(self) -> HttpRuntimeClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def whoami(self) -> Identity:
        """``GET /v1/whoami``: who the token belongs to."""
        body = self._decode("/v1/whoami", self._call("GET", "/v1/whoami"))
        user = body.get("user")
        org = body.get("org")
        name = _display_name(user)
        if name is None or (org is not None and not isinstance(org, dict)):
            raise self._shape_error("/v1/whoami", 'expected {"user": {...}, "org": {...}}')
        org_name = _display_name(org)
        # Runtime text printed as is by `login`: scrubbed and escaped like every other.
        return Identity(user=self._escaped(name),
                        org=None if org_name is None else self._escaped(org_name))

    def export_judge_fixtures(self, conversation_ids: Sequence[str]) -> ExportBatch:
        """``POST /v1/judge-fixtures/export``."""
        return self._export("/v1/judge-fixtures/export", "fixtures", conversation_ids)

    def export_conversations(self, conversation_ids: Sequence[str]) -> ExportBatch:
        """``POST /v1/conversations/export``."""
        return self._export("/v1/conversations/export", "conversations", conversation_ids)

    def _export(self, path: str, key: str, conversation_ids: Sequence[str]) -> ExportBatch:
        response = self._call("POST", path, {"conversation_ids": list(conversation_ids)})
        try:
            body = parse_export_body(response.content, key)
        except BodyShapeError as exc:
            detail = self._described(self._clean(str(exc)), response)
            raise self._shape_error(path, detail) from None
        errors = [self._export_error(e) for e in body.errors]
        unreadable = [self._clean(why) for why in body.unreadable]
        unreadable += [self._without_id(e) for e in body.errors
                       if not isinstance(e.get("conversation_id"), str)]
        return ExportBatch(lines=body.lines, errors=[e for e in errors if e is not None],
                           unreadable_errors=unreadable)

    def _without_id(self, entry: dict[str, Any]) -> str:
        said = " ".join(self._clean(text_of(entry[key])) for key in ("code", "message")
                        if key in entry)
        return "an entry of `errors` has no conversation_id" + (f" ({said})" if said else "")

    def _export_error(self, entry: dict[str, Any]) -> ExportError | None:
        if not isinstance(entry.get("conversation_id"), str):
            return None  # reported by the caller, among the unreadable entries
        code, message = entry.get("code"), entry.get("message")
        return ExportError(
            conversation_id=entry["conversation_id"],
            code=self._clean(text_of(code) if code not in (None, "") else "error"),
            message=self._clean(text_of(message) if message not in (None, "")
                                else "no reason given"),
        )

    def _call(self, method: str, path: str, payload: object = None) -> httpx2.Response:
        """One API call with retries; returns the response of a 200."""
        policy = self._policy
        for attempt in range(policy.attempts):
            try:
                return self._attempt(method, path, payload)
            except _Retry as retry:
                last = retry
            if attempt + 1 == policy.attempts:
                break
            wait = policy.backoff_wait(attempt) if last.wait is None else last.wait
            if wait > policy.max_wait:
                raise ServiceError(
                    f"the runtime at {self._url} {last.reason} and asked to retry after "
                    f"{wait:.0f}s (longer than the {policy.max_wait:g}s limit); try again later"
                )
            self._sleep(policy.spaced(wait))
        raise ServiceError(
            f"the runtime at {self._url} {last.reason} ({policy.attempts} attempt(s)); "
            "check the URL and your network, or try again later"
        )

    def _attempt(self, method: str, path: str, payload: object) -> httpx2.Response:
        try:
            response = self._http.request(method, path, json=payload)
        except httpx2.TimeoutException:
            raise _Retry(f"did not answer within {self._policy.timeout:g}s") from None
        except httpx2.TransportError as exc:
            if _certificate_failure(exc) is not None:
                raise self._certificate_error(exc) from None
            raise _Retry(f"is unreachable ({type(exc).__name__}{self._via()})") from None
        except httpx2.InvalidURL as exc:
            raise self._url_error(exc) from None
        except BodyTooLarge as exc:
            raise ServiceError(
                f"the runtime at {self._url} answered {method} {path} with more than "
                f"{describe_size(exc.limit)} (decoded), the most this tool reads from one "
                "answer; is the URL the introspection runtime's?"
            ) from None
        except httpx2.HTTPError as exc:  # not worth retrying (an undecodable body...)
            raise ServiceError(
                f"the runtime at {self._url} failed on {method} {path} "
                f"({type(exc).__name__}: {self._clean(str(exc))})"
            ) from None
        status = response.status_code
        if status == 200:
            return response
        if status in RETRYABLE_STATUS:
            wait = parse_retry_after(response.headers.get("Retry-After"))
            raise _Retry(f"answered HTTP {status}", wait)
        message = self._runtime_message(response)
        if status == 401:
            raise TokenRejected(
                f"the runtime at {self._url} rejected your token (HTTP 401: {message}); "
                "run `introspection login` again", url=self._url, runtime_message=message)
        if 400 <= status < 500:
            raise ConfigError(
                f"the runtime at {self._url} refused {method} {path} (HTTP {status}: {message}); "
                "check the runtime URL and your permissions"
            )
        raise ServiceError(
            f"the runtime at {self._url} failed on {method} {path} (HTTP {status}: {message})"
        )

    def _decode(self, path: str, response: httpx2.Response) -> dict[str, Any]:
        """The strictly decoded JSON object of a 200 (``whoami``)."""
        try:
            body = strictjson.loads(response.content)
        except (ValueError, RecursionError):
            body = None
        if not isinstance(body, dict):
            raise self._shape_error(path, self._described("the body is not a JSON object",
                                                          response))
        return body

    def _described(self, problem: str, response: httpx2.Response) -> str:
        """``problem`` with the response's content type, which often tells what came back."""
        kind = response.headers.get("Content-Type", "no content type")
        return f"{problem} ({self._clean(kind)})"

    def _via(self) -> str:
        return f", through the proxy {self._proxy.shown} from {self._proxy.variable}" \
            if self._proxy else ""

    def _certificate_error(self, exc: BaseException) -> ServiceError:
        host = urlsplit(self._url).hostname
        reason = _certificate_failure(exc)
        return ServiceError(
            f"certificate verify failed for {host} ({self._clean(reason or 'unknown')}); if "
            f"the runtime uses a private CA, point {CERT_FILE_ENV} (a PEM file) or "
            f"{CERT_DIR_ENV} at its certificate"
        )

    def _url_error(self, exc: Exception) -> ConfigError:
        """A URL that passed :func:`normalize_url` but that httpx still cannot use."""
        return ConfigError(
            f"the runtime URL {self._url} cannot be used ({self._clean(str(exc))}); log in "
            "again with `introspection login --url https://runtime.example` (or fix "
            "INTROSPECTION_API_URL)"
        )

    def _shape_error(self, path: str, detail: str) -> ServiceError:
        return ServiceError(
            f"the runtime at {self._url} answered {path} with an unexpected response: {detail}; "
            "is the URL the introspection runtime's, and is it up to date?"
        )

    def _runtime_message(self, response: httpx2.Response) -> str:
        """The runtime's own error message, short and scrubbed, for our messages."""
        try:
            body = response.json()
        except (ValueError, UnicodeDecodeError):
            body = None
        if isinstance(body, dict):
            error = body.get("error")
            for candidate in (error.get("message") if isinstance(error, dict) else error,
                              body.get("message"), body.get("detail")):
                if isinstance(candidate, str) and candidate.strip():
                    return self._clean(candidate)
        text = response.text.strip() if response.content else ""
        return self._clean(text) or response.reason_phrase or "no message"

    def _escaped(self, text: str) -> str:
        """Runtime text to print on a line of its own: the token scrubbed, control
        characters escaped (``\\x1b``), at most 200 characters."""
        shown = escape_text(text.replace(self._token, "[token]"))
        return shown[:200] + ("..." if len(shown) > 200 else "")

    def _clean(self, text: str) -> str:
        """Scrub the token, control characters and excess length from runtime-supplied text."""
        text = text.replace(self._token, "[token]")
        text = "".join(char if char.isprintable() else " " for char in text)
        return text[:300] + ("..." if len(text) > 300 else "")


def _certificate_failure(exc: BaseException) -> str | None:
    """The reason, if ``exc`` (or what it wraps) is a failed certificate verification."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ssl.SSLCertVerificationError):
            return seen.verify_message or seen.reason or "the certificate was not trusted"
        seen = seen.__cause__ or seen.__context__
    return None


def _display_name(entity: object) -> str | None:
    if not isinstance(entity, dict):
        return None
    for key in ("email", "name", "login", "slug", "id"):
        value = entity.get(key)
        if isinstance(value, str | int) and not isinstance(value, bool) and str(value).strip():
            return str(value)
    return None


