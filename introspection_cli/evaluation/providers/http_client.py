"""The HTTP client under the model SDKs: bounded, with a deadline, the right proxy and CAs.

Each SDK's own ``DefaultAioHttpClient`` (aiohttp under httpx2: about a quarter
less CPU per request than httpx2's transport, which is what a run of thousands
of calls spends its time on; see docs/eval.md) is built with every transport
it makes wrapped, so whatever sends a request:

* reads at most ``reply_limit`` decoded bytes of a reply (gzip bombs included)
  and finishes each response, body included, within ``deadline`` seconds
  (:class:`~introspection_cli.httpbounds.AsyncBoundedTransport`; a late response
  is a timeout, which the SDK retries as any other);
* turns the two failures no retry can mend into exceptions the SDKs do not retry:
  a reply over the cap (:class:`ReplyTooLarge`) and a certificate that does not
  verify (:class:`CertificateFailure`). The SDKs retry every other exception a
  transport raises (openai: httpx2 errors and ``ssl.SSLError``; anthropic:
  anything), but pass on their own errors as they are, so these are raised as
  subclasses of the SDK's base error;
* goes through the proxy :func:`introspection_cli.netenv.proxy_for` chose for the
  base URL (a loopback URL never through one, so the API key never reaches a
  proxy on its way to a local server), trusting the CAs
  :func:`introspection_cli.netenv.ssl_context` chose; nothing else in the
  environment is read (``trust_env=False``).
"""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator, Awaitable, Callable
from types import ModuleType
from typing import Any

import httpx2

from introspection_cli.evaluation.providers.transport_errors import (
    ReplyTooLarge,
    sdk_errors,
)
from introspection_cli.httpbounds import AsyncBoundedTransport, BodyTooLarge

#: The most decoded bytes of one model reply that are read.
REPLY_LIMIT = 4 * 1024 * 1024
#: As the SDKs' own clients: idle connections kept for reuse, and in all.
_LIMITS = httpx2.Limits(max_connections=1000, max_keepalive_connections=100)

ResponseHook = Callable[[httpx2.Response], Awaitable[None]]


def _chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and what it wraps (a chain is short; a loop in it must not hang us)."""
    found: list[BaseException] = []
    seen: BaseException | None = exc
    while seen is not None and len(found) < 16 and seen not in found:
        found.append(seen)
        seen = seen.__cause__ or seen.__context__
    return found


def certificate_failure(exc: BaseException) -> str | None:
    """The reason, if ``exc`` (or what it wraps) is a failed certificate verification."""
    for seen in _chain(exc):
        if isinstance(seen, ssl.SSLCertVerificationError):
            # aiohttp's own certificate error is one too, wrapping the ssl module's.
            error = getattr(seen, "certificate_error", seen)
            return (getattr(error, "verify_message", None) or getattr(error, "reason", None)
                    or "the certificate was not trusted")
    return None


def _refused_not_timed_out(exc: BaseException) -> bool:
    """A "connect timeout" that was a refused or failed connection: the aiohttp
    transport of some SDK versions reports any connection error as a timeout."""
    return isinstance(exc, httpx2.ConnectTimeout) and any(
        isinstance(seen, OSError) and not isinstance(seen, TimeoutError)
        for seen in _chain(exc)[1:])


class _GuardedStream(httpx2.AsyncByteStream):
    def __init__(self, inner: httpx2.AsyncByteStream, too_large: type[ReplyTooLarge]) -> None:
        self._inner = inner
        self._too_large = too_large

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self._inner:
                yield chunk
        except BodyTooLarge as exc:
            raise self._too_large(exc.limit) from None

    async def aclose(self) -> None:
        await self._inner.aclose()


class GuardedTransport(httpx2.AsyncBaseTransport):
    """``inner`` with hopeless failures raised as :class:`ReplyTooLarge` and
    :class:`CertificateFailure`, which the SDKs pass on without retrying."""

    def __init__(self, inner: httpx2.AsyncBaseTransport, base_error: type[Exception]) -> None:
        self._inner = inner
        self._too_large, self._certificate = sdk_errors(base_error)

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        if request.url.userinfo:
            # httpx2 has made the URL's user:password the Authorization header already,
            # and its own transport never sends them; aiohttp would refuse both at once.
            request.url = request.url.copy_with(userinfo=b"")
        try:
            response = await self._inner.handle_async_request(request)
        except BodyTooLarge as exc:
            raise self._too_large(exc.limit) from None
        except Exception as exc:
            reason = certificate_failure(exc)
            if reason is not None:
                raise self._certificate(request.url.host, reason) from None
            if _refused_not_timed_out(exc):
                raise httpx2.ConnectError(str(exc), request=request) from exc
            raise
        assert isinstance(response.stream, httpx2.AsyncByteStream)
        return httpx2.Response(response.status_code, headers=response.headers,
                               stream=_GuardedStream(response.stream, self._too_large),
                               extensions=response.extensions)

    async def aclose(self) -> None:
        await self._inner.aclose()


def sdk_http_client(sdk: ModuleType, *, verify: ssl.SSLContext | None, proxy: str | None,
                    reply_limit: int | None, deadline: float | None,
                    on_response: ResponseHook | None = None) -> httpx2.AsyncClient:
    """``sdk``'s aiohttp client (``openai`` or ``anthropic``), every transport wrapped.

    ``reply_limit`` and ``deadline`` bound each response (None: not bounded here,
    for a caller that reads bodies within bounds of its own).
    """
    base_error = sdk.OpenAIError if hasattr(sdk, "OpenAIError") else sdk.AnthropicError

    def wrap(transport: httpx2.AsyncBaseTransport) -> httpx2.AsyncBaseTransport:
        if reply_limit is not None:
            transport = AsyncBoundedTransport(inner=transport, max_body=reply_limit,
                                              deadline=deadline)
        return GuardedTransport(transport, base_error)

    class Client(sdk.DefaultAioHttpClient):  # type: ignore[misc,name-defined]
        # httpx2 builds the base transport and each proxy's through these two; the
        # SDK's aiohttp client overrides them to make aiohttp transports.
        def _init_transport(self, *args: Any, **kwargs: Any) -> httpx2.AsyncBaseTransport:
            return wrap(super()._init_transport(*args, **kwargs))

        def _init_proxy_transport(self, *args: Any, **kwargs: Any) -> httpx2.AsyncBaseTransport:
            return wrap(super()._init_proxy_transport(*args, **kwargs))

    options: dict[str, Any] = {"trust_env": False, "limits": _LIMITS, "proxy": proxy}
    if verify is not None:
        options["verify"] = verify
    if on_response is not None:
        options["event_hooks"] = {"response": [on_response]}
    client: httpx2.AsyncClient = Client(**options)
    return client
