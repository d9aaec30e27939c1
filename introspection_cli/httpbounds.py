"""HTTP responses read within bounds: a cap on the decoded body, and a wall-clock deadline.

httpx2 (the client the model SDKs use too) reads whatever a server sends: a
1 GB answer, an endless chunked body, a gzip bomb, and its timeouts are per
read, so a body trickled a byte a second never times out. The transports here
wrap httpx2's own and bound every response that goes through them::

    transport = BoundedTransport(max_body=64 * MiB, deadline=30.0, verify=ctx, proxy=None)
    client = httpx2.Client(transport=transport, trust_env=False)

* **Size.** The body is decoded here (identity, gzip, deflate; the request's
  ``Accept-Encoding`` is set to what can be decoded), in pieces of at most
  64 KiB, and counted: past ``max_body`` decoded bytes the read stops with
  :class:`BodyTooLarge` (an ``httpx2.DecodingError``), so memory never holds
  more than the cap whatever the server sends or compresses. The response the
  client sees is already decoded (no ``Content-Encoding``).
* **Time.** ``deadline`` seconds after the request starts, the response, body
  included, must be complete: every socket operation (connect, TLS handshake,
  each write and read) waits at most for what is left, and then fails as
  httpx2's own ``ConnectTimeout`` / ``ReadTimeout`` / ``WriteTimeout``.
  :func:`wall_clock` sets such a deadline around any block of sync code using
  a :class:`BoundedTransport` client (the earlier of the two applies).

:class:`AsyncBoundedTransport` is the same for ``httpx2.AsyncClient`` (the
SDKs' async clients): the size cap, and the deadline through ``asyncio.timeout``.
"""

from __future__ import annotations

import asyncio
import ssl
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import httpcore2
import httpx2

from introspection_cli.httpdecode import (
    ACCEPT_ENCODING,
    PIECE,
    BodyTooLarge,
    BoundedDecoder,
    MiB,
    describe_size,
)

__all__ = ["PIECE", "AsyncBoundedTransport", "BodyTooLarge", "BoundedTransport", "MiB",
           "describe_size", "wall_clock"]

# -- the deadline ---------------------------------------------------------------------

_DEADLINE: ContextVar[float | None] = ContextVar("introspection_http_deadline", default=None)


@contextmanager
def wall_clock(seconds: float | None) -> Iterator[None]:
    """Every socket operation of a :class:`BoundedTransport` in this block ends within
    ``seconds`` from now (``None``: no deadline of its own; an outer one still holds)."""
    if seconds is None:
        yield
        return
    with _deadline_at(time.monotonic() + seconds):
        yield


@contextmanager
def _deadline_at(when: float) -> Iterator[None]:
    outer = _DEADLINE.get()
    token = _DEADLINE.set(when if outer is None else min(outer, when))
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def _within_deadline(timeout: float | None, timed_out: type[Exception]) -> float | None:
    """``timeout`` shortened to what is left of the deadline; past it, raise ``timed_out``."""
    deadline = _DEADLINE.get()
    if deadline is None:
        return timeout
    left = deadline - time.monotonic()
    if left <= 0:
        raise timed_out("the response took longer than its wall-clock deadline")
    return left if timeout is None else min(timeout, left)


class _DeadlineStream(httpcore2.NetworkStream):
    """A socket stream whose every operation waits at most until the deadline."""

    def __init__(self, inner: httpcore2.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _within_deadline(timeout, httpcore2.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _within_deadline(timeout, httpcore2.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: ssl.SSLContext, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore2.NetworkStream:
        return _DeadlineStream(self._inner.start_tls(
            ssl_context, server_hostname, _within_deadline(timeout, httpcore2.ConnectTimeout)))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _DeadlineBackend(httpcore2.NetworkBackend):
    """Opens :class:`_DeadlineStream` connections (httpcore2's own backend underneath)."""

    def __init__(self, inner: httpcore2.NetworkBackend) -> None:
        self._inner = inner

    def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                    local_address: str | None = None,
                    socket_options: Any = None) -> httpcore2.NetworkStream:
        return _DeadlineStream(self._inner.connect_tcp(
            host, port, _within_deadline(timeout, httpcore2.ConnectTimeout), local_address,
            socket_options))

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Any = None) -> httpcore2.NetworkStream:
        return _DeadlineStream(self._inner.connect_unix_socket(
            path, _within_deadline(timeout, httpcore2.ConnectTimeout), socket_options))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


def _install_deadline_backend(transport: httpx2.HTTPTransport) -> None:
    # httpx2.HTTPTransport takes no network backend, but builds its httpcore2 pool
    # with the default one, which we wrap before any connection is made.
    pool = getattr(transport, "_pool", None)
    backend = getattr(pool, "_network_backend", None)
    if not isinstance(backend, httpcore2.NetworkBackend):
        raise RuntimeError("this httpx2/httpcore2 version cannot take a deadline-aware "
                           "network backend; pin the versions introspection was tested with")
    pool._network_backend = _DeadlineBackend(backend)  # type: ignore[union-attr]


# -- the stream -----------------------------------------------------------------------

def _bounded_headers(response: httpx2.Response) -> tuple[httpx2.Headers, str]:
    """The headers the client sees (no encoding or length: the body is handed on decoded),
    and the Content-Encoding to undo."""
    headers = httpx2.Headers(response.headers)
    encoding = ", ".join(headers.get_list("content-encoding"))
    for name in ("content-encoding", "content-length"):
        if name in headers:
            del headers[name]
    return headers, encoding


class _BoundedStream(httpx2.SyncByteStream):
    def __init__(self, inner: httpx2.SyncByteStream, decoder: BoundedDecoder,
                 deadline: float | None) -> None:
        self._inner = inner
        self._decoder = decoder
        self._deadline = deadline

    def __iter__(self) -> Iterator[bytes]:
        chunks = iter(self._inner)
        while True:
            with _maybe_deadline(self._deadline):
                chunk = next(chunks, None)
            if chunk is None:
                break
            yield from self._decoder.feed(chunk)
        yield from self._decoder.finish()

    def close(self) -> None:
        self._inner.close()


@contextmanager
def _maybe_deadline(when: float | None) -> Iterator[None]:
    if when is None:
        yield
    else:
        with _deadline_at(when):
            yield


class BoundedTransport(httpx2.BaseTransport):
    """httpx2's HTTP transport, every response capped at ``max_body`` decoded bytes and,
    with ``deadline``, complete within that many seconds of its request.

    ``verify`` and ``proxy`` are httpx2's (build them with
    :func:`introspection_cli.netenv.ssl_context` and :func:`~introspection_cli.netenv.proxy_for`);
    the environment is never read here.
    """

    def __init__(self, *, max_body: int, deadline: float | None = None,
                 verify: ssl.SSLContext | bool = True, proxy: str | None = None) -> None:
        self._inner = httpx2.HTTPTransport(verify=verify, proxy=proxy, trust_env=False)
        _install_deadline_backend(self._inner)
        self._max_body = max_body
        self._deadline = deadline

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        request.headers["Accept-Encoding"] = ACCEPT_ENCODING
        when = None if self._deadline is None else time.monotonic() + self._deadline
        with _maybe_deadline(when):
            response = self._inner.handle_request(request)
        headers, encoding = _bounded_headers(response)
        try:
            decoder = BoundedDecoder(encoding, self._max_body)
        except httpx2.DecodingError:
            response.close()
            raise
        assert isinstance(response.stream, httpx2.SyncByteStream)
        return httpx2.Response(response.status_code, headers=headers,
                               stream=_BoundedStream(response.stream, decoder, when),
                               extensions=response.extensions)

    def close(self) -> None:
        self._inner.close()


class _AsyncBoundedStream(httpx2.AsyncByteStream):
    def __init__(self, inner: httpx2.AsyncByteStream, decoder: BoundedDecoder,
                 deadline: float | None) -> None:
        self._inner = inner
        self._decoder = decoder
        self._deadline = deadline

    async def __aiter__(self) -> AsyncIterator[bytes]:
        chunks = aiter(self._inner)
        while True:
            chunk = await _before_deadline(anext(chunks, None), self._deadline)
            if chunk is None:
                break
            for piece in self._decoder.feed(chunk):
                yield piece
        for piece in self._decoder.finish():
            yield piece

    async def aclose(self) -> None:
        await self._inner.aclose()


async def _before_deadline(step: Any, when: float | None) -> Any:
    if when is None:
        return await step
    try:
        async with asyncio.timeout_at(_loop_time(when)):
            return await step
    except TimeoutError:
        raise httpx2.ReadTimeout("the response took longer than its wall-clock deadline") \
            from None


def _loop_time(when: float) -> float:
    """A :func:`time.monotonic` instant on the running loop's clock."""
    return asyncio.get_running_loop().time() + (when - time.monotonic())


class AsyncBoundedTransport(httpx2.AsyncBaseTransport):
    """:class:`BoundedTransport` for ``httpx2.AsyncClient`` (asyncio).

    ``inner`` is the transport whose responses are bounded (another one than
    httpx2's, such as the SDKs' aiohttp transport, which must hand on the body
    still encoded); without it, httpx2's own with ``verify`` and ``proxy``.
    """

    def __init__(self, *, max_body: int, deadline: float | None = None,
                 verify: ssl.SSLContext | bool = True, proxy: str | None = None,
                 inner: httpx2.AsyncBaseTransport | None = None) -> None:
        self._inner = inner or httpx2.AsyncHTTPTransport(verify=verify, proxy=proxy,
                                                         trust_env=False)
        self._max_body = max_body
        self._deadline = deadline

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        request.headers["Accept-Encoding"] = ACCEPT_ENCODING
        when = None if self._deadline is None else time.monotonic() + self._deadline
        response = await _before_deadline(self._inner.handle_async_request(request), when)
        headers, encoding = _bounded_headers(response)
        try:
            decoder = BoundedDecoder(encoding, self._max_body)
        except httpx2.DecodingError:
            await response.aclose()
            raise
        assert isinstance(response.stream, httpx2.AsyncByteStream)
        return httpx2.Response(response.status_code, headers=headers,
                               stream=_AsyncBoundedStream(response.stream, decoder, when),
                               extensions=response.extensions)

    async def aclose(self) -> None:
        await self._inner.aclose()
