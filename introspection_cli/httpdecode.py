"""A response body decoded within a cap: identity, gzip and deflate, a piece at a time.

:class:`BoundedDecoder` undoes a ``Content-Encoding`` (up to three stacked) and hands
out at most :data:`PIECE` decoded bytes at once, counting them: past its limit it
stops with :class:`BodyTooLarge`, so a gzip bomb never becomes more than the cap in
memory. :mod:`~introspection_cli.httpbounds` puts it under httpx2's transports.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator

import httpx2

MiB = 1 << 20
#: The largest piece of decoded body handed on at once.
PIECE = 1 << 16
#: What the decoder below understands, sent as the request's Accept-Encoding.
ACCEPT_ENCODING = "gzip, deflate"
_MAX_ENCODINGS = 3  # "gzip, gzip, gzip" is already absurd; more is an attack


class BodyTooLarge(httpx2.DecodingError):
    """The decoded body passed the transport's cap; ``limit`` is that cap in bytes."""

    def __init__(self, limit: int, *, request: httpx2.Request | None = None) -> None:
        super().__init__(f"the response body is larger than {describe_size(limit)} "
                         "(decoded)", request=request)
        self.limit = limit


def describe_size(size: int) -> str:
    """``64 MiB``, ``4 MiB``, ``512 KiB``, ``100 bytes``: a cap, for messages."""
    for unit, name in ((MiB, "MiB"), (1024, "KiB")):
        if size >= unit and size % unit == 0:
            return f"{size // unit} {name}"
    return f"{size} bytes"


class BoundedDecoder:
    """Content-Encoding decoding that hands out at most :data:`PIECE` bytes at a time and
    stops at ``limit`` decoded bytes."""

    def __init__(self, content_encoding: str, limit: int) -> None:
        names = [name.strip().lower() for name in content_encoding.split(",") if name.strip()]
        names = [name for name in names if name != "identity"]
        if len(names) > _MAX_ENCODINGS:
            raise httpx2.DecodingError(f"Content-Encoding {content_encoding!r} stacks too many "
                                       "encodings")
        # Encodings are listed in the order applied: undo them last first.
        self._stages = [_inflater(name) for name in reversed(names)]
        self._limit = limit
        self.size = 0

    def feed(self, data: bytes) -> Iterator[bytes]:
        """The decoded pieces of the next raw chunk."""
        yield from self._counted(self._through(data, 0))

    def finish(self) -> Iterator[bytes]:
        """Whatever the decompressors still hold at the end of the body."""
        for index, stage in enumerate(self._stages):
            tail = stage.flush()
            if tail:
                yield from self._counted(self._through(tail, index + 1))

    def _through(self, data: bytes, first: int) -> Iterator[bytes]:
        if first == len(self._stages):
            for start in range(0, len(data), PIECE):
                yield data[start:start + PIECE]
            return
        for piece in _inflate(self._stages[first], data):
            yield from self._through(piece, first + 1)

    def _counted(self, pieces: Iterator[bytes]) -> Iterator[bytes]:
        for piece in pieces:
            self.size += len(piece)
            if self.size > self._limit:
                raise BodyTooLarge(self._limit)
            yield piece


class _Inflater:
    """zlib (or raw deflate, which some servers send as ``deflate``) or gzip."""

    def __init__(self, wbits: int, *, deflate: bool) -> None:
        self._object = zlib.decompressobj(wbits)
        self._deflate_guess = deflate
        self._started = False

    def decompress(self, data: bytes) -> bytes:
        try:
            out = self._object.decompress(data, PIECE)
        except zlib.error as exc:
            if self._deflate_guess and not self._started:
                self._deflate_guess = False
                self._object = zlib.decompressobj(-zlib.MAX_WBITS)
                return self.decompress(data)
            raise httpx2.DecodingError(f"the body cannot be decompressed ({exc})") from None
        self._started = True
        return out

    @property
    def unconsumed_tail(self) -> bytes:
        return self._object.unconsumed_tail

    @property
    def eof(self) -> bool:
        return self._object.eof

    def flush(self) -> bytes:
        try:
            return self._object.flush()
        except zlib.error as exc:
            raise httpx2.DecodingError(f"the body cannot be decompressed ({exc})") from None


def _inflater(name: str) -> _Inflater:
    if name in ("gzip", "x-gzip"):
        return _Inflater(16 + zlib.MAX_WBITS, deflate=False)
    if name == "deflate":
        return _Inflater(zlib.MAX_WBITS, deflate=True)
    raise httpx2.DecodingError(f"the response uses Content-Encoding {name!r}, which was not "
                               f"asked for (only {ACCEPT_ENCODING})")


def _inflate(stage: _Inflater, data: bytes) -> Iterator[bytes]:
    """``data`` through ``stage``, :data:`PIECE` bytes of output at a time (a bomb's first
    kilobyte never becomes a gigabyte in one call)."""
    while not stage.eof:
        out = stage.decompress(data)
        data = stage.unconsumed_tail
        if out:
            yield out
        if not data and len(out) < PIECE:  # a full piece may leave more output pending
            return
